// `skinnygemm step --ranks N`: the step across N GPUs of this host (docs/step.md, "Several GPUs"). The parent
// checks the options, creates an NCCL id and starts N processes of this binary with --rank r; each selects GPU r,
// runs the step of cli/step.cpp with an NCCL all-reduce after every row-parallel projection (in the check and in
// the CUDA graph) and writes its rows; the parent merges them (lab/step_ranks.h), prints and writes the result.
// A process per rank, not a thread: PDL is a process-wide switch (the no-PDL pass needs fresh processes anyway)
// and one failing rank cannot take the others' state down with it.
#include <cstdlib>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common.h"
#include "spawn.h"
#include "step.h"
#include "runtime/backends.h"
#include "lab/step_ranks.h"

namespace skinnygemm::cli {

using nlohmann::ordered_json;

namespace {

// A rank that fails leaves the others blocked in a collective: they get this long to finish by themselves
// before they are stopped (SIGTERM, then SIGKILL as long again later).
constexpr auto kRankGrace = std::chrono::seconds(10);

std::string read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  SKINNYGEMM_CHECK(in.good(), "cannot read " << what << " " << path << "; expected the file the parent process wrote");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A private folder for one round's NCCL id and result files, removed with everything in it.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "skinnygemm_step_ranks_XXXXXX").string();
    SKINNYGEMM_CHECK(mkdtemp(pattern.data()), "cannot create a folder like " << pattern << ": " << std::strerror(errno));
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Waits for every rank; once one fails (exit status other than 0 or 1 = "a check failed"), stops those still
// running after kRankGrace. Returns the exit statuses by rank.
std::vector<int> wait_ranks(const std::vector<pid_t>& pids) {
  std::vector<int> codes(pids.size(), -1);
  std::size_t running = pids.size();
  std::chrono::steady_clock::time_point stop_at{};
  int signal_sent = 0;
  while (running) {
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (codes[r] >= 0) continue;
      int status = 0;
      const pid_t got = waitpid(pids[r], &status, WNOHANG);
      if (got == 0 || (got < 0 && errno == EINTR)) continue;
      codes[r] = got == pids[r] ? exit_code(status) : 255;
      --running;
      if (codes[r] > 1 && stop_at == std::chrono::steady_clock::time_point{} && running) {
        stop_at = std::chrono::steady_clock::now() + kRankGrace;
        std::cerr << "rank " << r << " failed (exit " << codes[r] << "); the other ranks wait for it in NCCL, so "
                  << "those still running are stopped in " << kRankGrace.count() << " s\n";
      }
    }
    if (running && stop_at != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() >= stop_at &&
        signal_sent < 2) {
      const int sig = signal_sent ? SIGKILL : SIGTERM;
      for (std::size_t r = 0; r < pids.size(); ++r)
        if (codes[r] < 0) kill(pids[r], sig);  // only the processes this parent started, by id
      ++signal_sent;
      stop_at = std::chrono::steady_clock::now() + kRankGrace;
    }
    if (running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return codes;
}

// One set of N rank processes (PDL on, or off through SKINNYGEMM_PDL=0); their merged rows, and the weakest
// rank's stream-read rate into *tbps (the minimum over the ranks; 0 = not yet set).
ordered_json run_round(const StepArgs& a, bool pdl_off, tune::BenchMeta* meta) {
  TempDir dir;
  const std::string id_file = dir.path + "/nccl_id";
  write_file(id_file, tune::nccl_unique_id_hex() + "\n");  // this process hosts NCCL's bootstrap root for it
  std::vector<pid_t> pids;
  std::vector<std::string> files;
  std::cerr << "starting " << a.ranks << " rank processes" << (pdl_off ? " without PDL (SKINNYGEMM_PDL=0)" : "")
            << "; rank 0 reports progress\n";
  std::cout.flush();
  try {
    for (int r = 0; r < a.ranks; ++r) {
      files.push_back(dir.path + "/rank" + std::to_string(r) + ".json");
      std::vector<std::string> args = step_child_args(a);
      args.insert(args.end(), {"--ranks", std::to_string(a.ranks), "--rank", std::to_string(r), "--nccl-id", id_file,
                               "--json", files.back()});
      pids.push_back(spawn_self(args, pdl_off ? std::vector<std::string>{"SKINNYGEMM_PDL=0"} : std::vector<std::string>{},
                                "the process of rank " + std::to_string(r)));
    }
  } catch (...) {  // the started ones would wait for the missing rank forever
    for (pid_t pid : pids) kill(pid, SIGKILL);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
    throw;
  }
  const std::vector<int> codes = wait_ranks(pids);
  std::string failed;
  for (std::size_t r = 0; r < codes.size(); ++r)
    if (codes[r] > 1)
      failed += (failed.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " exit " + std::to_string(codes[r]);
  SKINNYGEMM_CHECK(failed.empty(), "the step across " << a.ranks << " GPUs failed: " << failed
                                                      << " (each rank's error is printed above, prefixed [rank r]; "
                                                      << "exit 143/137: stopped after another rank failed)");
  std::vector<ordered_json> docs;
  for (std::size_t r = 0; r < files.size(); ++r) {
    docs.push_back(ordered_json::parse(read_text(files[r], "the results of rank " + std::to_string(r))));
    const double tbps = docs.back().value("stream_read_tbps", 0.0);
    if (tbps > 0 && (meta->stream_read_tbps == 0 || tbps < meta->stream_read_tbps)) meta->stream_read_tbps = tbps;
  }
  return tune::merge_rank_rows(docs);
}

void print_overall(const ordered_json& rows, const StepArgs& a) {
  std::cout << std::left << std::setw(20) << "variant" << std::right << std::setw(4) << "M" << std::setw(7) << "gemms"
            << std::setw(6) << "AR" << std::setw(11) << "us" << std::setw(22) << "ranks' us (min..max)" << std::setw(10)
            << "comm_us" << std::setw(7) << "comm%" << std::setw(11) << "floor_us" << std::setw(6) << "eff" << std::setw(7)
            << "x_lt" << "\n";
  for (const ordered_json& r : rows) {
    if (r.value("scope", std::string()) != "overall") continue;
    std::cout << std::left << std::setw(20) << r.at("variant").get<std::string>() << std::right << std::setw(4)
              << r.at("m").get<int64_t>() << std::setw(7) << r.at("gemms").get<int>() << std::setw(6)
              << r.value("all_reduces", 0);
    if (r.contains("error")) {
      std::cout << "  FAIL " << r.at("error").get<std::string>() << "\n";
      continue;
    }
    double lo = 1e300, hi = 0;
    for (const auto& us : r.at("rank_us")) {
      lo = std::min(lo, us.get<double>());
      hi = std::max(hi, us.get<double>());
    }
    std::cout << std::setw(11) << fixed(r.at("us").get<double>(), 1) << std::setw(22)
              << (fixed(lo, 1) + ".." + fixed(hi, 1)) << std::setw(10) << fixed(r.value("comm_us", 0.0), 1)
              << std::setw(7) << fixed(100 * r.value("comm_share", 0.0), 1) << std::setw(11)
              << fixed(r.value("floor_us", 0.0), 1) << std::setw(6) << fixed(r.value("efficiency", 0.0), 2)
              << std::setw(7) << fixed(r.value("speedup", 0.0), 2) << "\n";
  }
  std::cout << "(us: the slowest rank's step; AR: all-reduces per step; comm_us: the all-reduces alone, in a graph "
               "of their own; x_lt: vs the cublaslt step across the same "
            << a.ranks << " GPUs)\n";
  std::cout.flush();
}

}  // namespace

int run_step_ranks(const StepArgs& a) {
  tune::check_ranks_runnable(a.ranks, tune::step_nccl_built(), cuda::device_count());
  // Everything that can be wrong with the arguments fails here, once, not in N processes.
  step_run_options(a, Backend::Cuda);  // --m, --variants
  const tune::StepModel model = tune::build_step_model(a.model, a.tp, a.scale, tune::parse_moe_front(a.moe_front));
  const std::size_t reduces = tune::all_reduce_points(model, model.ops_unfused).size();
  // NVLink SHARP (multicast) stays off unless the caller chose otherwise: the machines this runs on keep it off.
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  if (a.ranks != a.tp)
    std::cout << "NOTICE: --ranks " << a.ranks << " with --tp " << a.tp << ": each rank holds TP" << a.tp
              << " shards but the all-reduces sum over " << a.ranks << " ranks (an engine runs --ranks = --tp).\n";
  std::cout << "step of " << a.model << " at TP" << a.tp << (a.scale < 1 ? " (scaled)" : "") << " across " << a.ranks
            << " GPUs, one process each: " << model.layers << " layers, " << fixed(model.arena_bytes / 1e9, 3)
            << " GB of weights per rank, " << reduces << " all-reduces per step (NCCL, in place, after each "
            << "row-parallel projection), NCCL_NVLS_ENABLE=" << std::getenv("NCCL_NVLS_ENABLE") << "\n";
  const char* env = std::getenv("SKINNYGEMM_PDL");
  const bool env_off = env && std::string(env) == "0";
  std::vector<bool> rounds;  // pdl_off per round
  if (a.pdl != "off" && !env_off) rounds.push_back(false);
  if (a.pdl != "on" || env_off) rounds.push_back(true);
  tune::BenchMeta meta = tune::bench_meta(Backend::Cuda);
  meta.stream_read_tbps = 0;
  ordered_json rows = ordered_json::array();
  int failures = 0;
  for (bool pdl_off : rounds) {
    const ordered_json merged = run_round(a, pdl_off, &meta);
    bool pdl_ran = false;
    for (const ordered_json& row : merged) {
      rows.push_back(row);
      failures += row.value("scope", std::string()) == "overall" && row.contains("error");
      pdl_ran = pdl_ran || row.value("pdl", false);
    }
    print_overall(merged, a);
    if (!pdl_off && !pdl_ran) break;  // a device without PDL already ran everything without it
  }
  if (!a.json.empty()) {
    write_file(a.json, step_document(meta, rows).dump(1) + "\n");
    std::cerr << "wrote " << a.json << " (" << rows.size() << " rows: each rank's and one overall per variant and M)\n";
  }
  if (failures) std::cout << "FAILED: " << failures << " (variant, M) cases did not pass the output check\n";
  return failures ? kExitMismatch : 0;
}

int run_step_rank(const StepArgs& a) {
  const std::string prefix = "[rank " + std::to_string(a.rank) + "/" + std::to_string(a.ranks) + "] ";
  bool joined = false;  // whether this rank is in the communicator: then an error must not unwind through it
  try {
    const tune::StepModel model = tune::build_step_model(a.model, a.tp, a.scale, tune::parse_moe_front(a.moe_front));
    // First: it selects GPU `rank` for everything after it in this process.
    const std::unique_ptr<tune::StepComm> comm =
        tune::make_nccl_step_comm(a.rank, a.ranks, read_text(a.nccl_id, "the NCCL id"), model.dtype);
    joined = true;
    tune::StepRunOptions o = step_run_options(a, Backend::Cuda);
    o.comm = comm.get();
    o.progress = nullptr;
    if (a.rank == 0) o.progress = [prefix](const std::string& line) { std::cerr << prefix << line << std::endl; };
    const tune::StepReport rep = tune::run_step(o);
    ordered_json rows = ordered_json::array();
    int failures = 0;
    for (const tune::StepResult& r : rep.results) {
      rows.push_back(step_row_json(r, a, model, rep));
      failures += !r.error.empty();
    }
    tune::BenchMeta meta = tune::bench_meta(Backend::Cuda);
    meta.stream_read_tbps = rep.stream_read_tbps;
    write_file(a.json, step_document(meta, rows).dump(1) + "\n");
    return failures ? kExitMismatch : 0;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << prefix << e.what() << std::endl;
    // NOTE: destroying the communicator waits for NCCL's streams, which may wait for peers stuck in a
    // collective this rank will never issue: exit at once and let the parent stop the others.
    if (joined) std::_Exit(kExitError);
    return kExitError;
  }
}

}  // namespace skinnygemm::cli
