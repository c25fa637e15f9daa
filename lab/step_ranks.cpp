// Checks of the rank options and the merge of the ranks' result rows (lab/step_ranks.h).
#include "lab/step_ranks.h"
#include "lab/result_row.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "lab/json_round.h"
#include "lab/step.h"
#include "skinnygemm/error.h"

namespace skinnygemm::tune {

using nlohmann::ordered_json;

void check_rank_args(const StepRankArgs& a) {
  SKINNYGEMM_CHECK(a.ranks >= 1 && a.ranks <= kMaxStepRanks,
                   "--ranks " << a.ranks << " is outside 1.." << kMaxStepRanks
                              << "; expected the number of GPUs to run the step on, one process each (1: one GPU, "
                                 "no communication)");
  SKINNYGEMM_CHECK(a.ranks == 1 || a.backend != "cpu",
                   "--ranks " << a.ranks << " needs the cuda backend (one GPU per rank, NCCL between them); "
                              << "--backend cpu runs one process, so use --ranks 1 there");
  if (a.rank == -1) {
    SKINNYGEMM_CHECK(a.nccl_id.empty(), "--nccl-id " << a.nccl_id << " is for the processes that --ranks N starts; "
                                                     << "it needs --rank (and --ranks N >= 2)");
    return;
  }
  SKINNYGEMM_CHECK(a.ranks >= 2, "--rank " << a.rank << " is for the processes that --ranks N (N >= 2) starts, but "
                                           << "--ranks is " << a.ranks << "; to run across GPUs give only --ranks N");
  SKINNYGEMM_CHECK(a.rank >= 0 && a.rank < a.ranks,
                   "--rank " << a.rank << " is outside 0.." << a.ranks - 1 << " (--ranks " << a.ranks << ")");
  SKINNYGEMM_CHECK(!a.nccl_id.empty(), "--rank " << a.rank << " needs --nccl-id FILE (the NCCL id the parent wrote)");
  SKINNYGEMM_CHECK(!a.json.empty(), "--rank " << a.rank << " needs --json FILE (where the parent reads its results)");
}

void check_ranks_runnable(int ranks, bool nccl_built, int visible_gpus) {
  if (ranks <= 1) return;
  SKINNYGEMM_CHECK(nccl_built, "--ranks " << ranks << ": skinnygemm was built without NCCL (CMake's "
                                          << "SKINNYGEMM_NCCL=AUTO finds nccl.h and libnccl with the CUDA toolkit or "
                                          << "under NCCL_HOME), so the step cannot run across GPUs; use --ranks 1");
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  SKINNYGEMM_CHECK(visible_gpus >= ranks, "--ranks " << ranks << " needs " << ranks << " GPUs (one per rank) but "
                                                     << visible_gpus << " are visible"
                                                     << (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "")
                                                     << (visible_gpus > 0 ? "; expected --ranks <= " + std::to_string(visible_gpus)
                                                                          : std::string("; expected a machine with GPUs")));
}

namespace {

const ordered_json* find_row(const ordered_json& rows, const std::string& variant, int64_t m) {
  for (const ordered_json& row : rows)
    if (row.at("variant").get<std::string>() == variant && row.at("m").get<int64_t>() == m) return &row;
  return nullptr;
}

// The slowest rank's view of one (variant, M); rows[r] is rank r's row.
ordered_json overall_row(const std::vector<const ordered_json*>& rows) {
  ordered_json o = *rows[0];
  for (const char* per_rank : {"rank", "scope", "us", "spread", "tbps", "floor_us", "stream_read_us", "efficiency",
                               "cublaslt_us", "speedup", "sinks_us", "sinks", "comm_us", "comm_share", "error"})
    o.erase(per_rank);
  o["scope"] = "overall";
  std::string errors;
  int64_t checked = 0;
  double max_err = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r]->contains("error"))
      errors += (errors.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
                rows[r]->at("error").get<std::string>();
    checked += rows[r]->value("checked", int64_t{0});
    max_err = std::max(max_err, rows[r]->value("max_rel_error", 0.0));
  }
  o["checked"] = checked;
  o["max_rel_error"] = max_err;
  if (!errors.empty()) {
    o["error"] = errors;
    return o;
  }
  double us = 0, spread = 0, floor = 0, comm = 0;
  bool floors = true, comms = true;
  ordered_json rank_us = ordered_json::array();
  for (const ordered_json* row : rows) {
    us = std::max(us, row->at("us").get<double>());
    spread = std::max(spread, row->value("spread", 0.0));
    rank_us.push_back(row->at("us"));
    floors = floors && row->contains("floor_us");
    if (floors) floor = std::max(floor, row->at("floor_us").get<double>());
    comms = comms && row->contains("comm_us");
    if (comms) comm = std::max(comm, row->at("comm_us").get<double>());
  }
  o["us"] = us;
  o["spread"] = spread;
  o["tbps"] = json_round(o.at("bytes").get<double>() / (us * 1e6));
  o["rank_us"] = rank_us;
  if (floors) {
    o["floor_us"] = floor;  // the weakest rank's bandwidth: the floor for the step as a whole
    o["stream_read_us"] = floor;
    o["efficiency"] = json_round(floor / us);
  }
  if (comms) {
    o["comm_us"] = comm;
    o["comm_share"] = json_round(comm / us);
  }
  return o;
}

}  // namespace

ordered_json merge_rank_rows(const std::vector<ordered_json>& docs) {
  SKINNYGEMM_CHECK(!docs.empty(), "no rank results to merge; expected one document per rank");
  ordered_json out = ordered_json::array();
  for (std::size_t r = 0; r < docs.size(); ++r) {
    SKINNYGEMM_CHECK(docs[r].contains("rows") && docs[r].at("rows").is_array(),
                     "rank " << r << "'s results have no \"rows\" array");
    for (const ordered_json& row : docs[r].at("rows")) {
      SKINNYGEMM_CHECK(row.value("rank", -1) == static_cast<int>(r),
                       "rank " << r << "'s results hold a row of rank " << row.value("rank", -1) << " ("
                               << row.value("variant", std::string("?")) << " m=" << row.value("m", 0)
                               << "); expected " << r);
      ordered_json copy = row;
      copy["scope"] = "rank";
      out.push_back(copy);
    }
  }
  std::vector<ordered_json> overall;
  for (const ordered_json& row0 : docs[0].at("rows")) {
    const std::string variant = row0.at("variant").get<std::string>();
    const int64_t m = row0.at("m").get<int64_t>();
    std::vector<const ordered_json*> rows;
    for (std::size_t r = 0; r < docs.size(); ++r) {
      const ordered_json* row = find_row(docs[r].at("rows"), variant, m);
      SKINNYGEMM_CHECK(row, "rank " << r << " has no row for " << variant << " m=" << m << ", which rank 0 has; "
                                    << "expected every rank to run the same cases");
      rows.push_back(row);
    }
    overall.push_back(overall_row(rows));
  }
  // Speedups between overall rows only: the cublaslt step of the same ranks, PDL setting and M (by its exact name:
  // cublaslt_torch and cublaslt_fused are variants measured against it, not baselines).
  for (ordered_json& o : overall) {
    if (o.contains("error")) {
      out.push_back(o);
      continue;
    }
    for (const ordered_json& c : overall)
      if (c.at("variant") == variant_name(StepVariant::Cublaslt, c.value("pdl", false)) && c.at("m") == o.at("m") &&
          c.value("pdl", false) == o.value("pdl", false) && !c.contains("error")) {
        o["cublaslt_us"] = c.at("us");
        o["speedup"] = json_round(c.at("us").get<double>() / o.at("us").get<double>());
      }
    out.push_back(o);
  }
  return out;
}

}  // namespace skinnygemm::tune
