// `skinnygemm heuristic --shapes S --m M [--device h200] [--json FILE]`: the GPU heuristic as the library runs it --
// its constants, and per point its pick with every config it scores and their predicted times -- for device facts
// read from the GPU, or named (a preset, amended by flags) where there is none. scripts/heuristic_cv.py judges and
// refits the heuristic from this dump, so that the heuristic lives once, in the library (docs/tuning.md).
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/device_presets.h"
#include "kernels/family.h"
#include "lab/models.h"
#include "runtime/backends.h"
#include "runtime/cost_model.h"

namespace skinnygemm::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kSchema = "skinnygemm-heuristic-1";
constexpr int kAlignment = 16;  // the heuristic's picks for 16-byte aligned operands (misaligned ones fall back)

struct HeuristicArgs {
  std::string device = "auto", shapes, m, dtype = "bf16", json;
  // Facts that replace the device's (0: keep; CLI11 rejects 0 and negative values given).
  int64_t sms = 0, smem_per_sm = 0, smem_per_block = 0, regs_per_sm = 0, threads_per_sm = 0, blocks_per_sm = 0;
};

// The device the heuristic reads, and where its facts came from ("gpu", "preset h200, --sms 114").
struct Facts {
  DeviceInfo device;
  std::string from;
};

Facts device_facts(const HeuristicArgs& a) {
  Facts f;
  const std::string no_gpu = cuda::built() ? "no usable GPU here" : "this build has no CUDA backend";
  if (a.device == "gpu" || (a.device == "auto" && cuda::available())) {
    SKINNYGEMM_CHECK(cuda::available(), "--device gpu: " << no_gpu << "; name the device's facts instead (--device "
                                                         << tune::device_preset_names() << ")");
    f.device = cuda::device_info();
    f.from = "gpu";
  } else {
    SKINNYGEMM_CHECK(a.device != "auto", no_gpu << " to read device facts from; name them: --device <preset> (one of "
                                                << tune::device_preset_names() << "), amended by --sms etc.");
    f.device = tune::device_preset(a.device);
    f.from = "preset " + a.device;
  }
  auto amend = [&f](const char* flag, int64_t value, auto* field) {
    if (value == 0) return;
    *field = static_cast<std::remove_pointer_t<decltype(field)>>(value);
    f.from += std::string(", ") + flag + " " + std::to_string(value);
  };
  amend("--sms", a.sms, &f.device.sms);
  amend("--smem-per-sm", a.smem_per_sm, &f.device.smem_per_sm);
  amend("--smem-per-block", a.smem_per_block, &f.device.smem_per_block_optin);
  amend("--regs-per-sm", a.regs_per_sm, &f.device.regs_per_sm);
  amend("--threads-per-sm", a.threads_per_sm, &f.device.max_threads_per_sm);
  amend("--blocks-per-sm", a.blocks_per_sm, &f.device.max_blocks_per_sm);
  return f;
}

// What the heuristic may pick from: select()'s configs (supports()) where this build holds the kernels; without
// them, the shape arithmetic of supports() alone, i.e. the picks of a build holding every listed instance.
std::function<bool(const Config&)> runnable_configs(const Problem& p, const DeviceInfo& dev) {
  if (cuda::built()) return [&p, &dev](const Config& c) { return supports(c, p, dev, kAlignment); };
  return [&p, &dev](const Config& c) { return fits_shape(c, p, dev); };
}

Json device_json(const Facts& f) {
  const DeviceInfo& d = f.device;
  return {{"from", f.from},
          {"name", d.name},
          {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sms", d.sms},
          {"l2_bytes", d.l2_bytes},
          {"smem_per_block_optin", d.smem_per_block_optin},
          {"smem_per_sm", d.smem_per_sm},
          {"regs_per_sm", d.regs_per_sm},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_blocks_per_sm", d.max_blocks_per_sm}};
}

Json heuristic_json() {
  Json models = Json::object();
  for (const ModelConstants& m : fitted_constants()) {
    Json values = Json::object();
    for (const auto& [name, value] : m.values) values[name] = value;
    models[m.model] = values;
  }
  return {{"kernel_margin", kHeuristicKernelMargin},
          {"pick_tie_tolerance", kPickTieTolerance},
          {"runnable", cuda::built() ? "supports" : "fits_shape"},
          {"models", models}};
}

// One point: the pick, each family's best ranked prediction and every scored config.
Json point_json(const models::Projection& shape, const Problem& p, const DeviceInfo& dev) {
  const auto runnable = runnable_configs(p, dev);
  Choice pick;
  if (!heuristic_choice_among(p, dev, runnable, &pick)) {
    pick.config = Config::parse("cublaslt");
    pick.source = Source::Fallback;
    pick.reason = "fallback: no kernel config runs " + p.str() + " here";
  }
  Choice scored = pick;  // the scored models' own pick, where a family's structural rules took the point
  if (!scored_heuristic_choice_among(p, dev, runnable, &scored)) scored.config = Config::parse("cublaslt");
  Json candidates = Json::array();
  std::map<std::string, ScoredConfig> family_best;  // what the heuristic would pick if it scored one family
  for (const ScoredConfig& s : scored_configs(p, dev, runnable)) {
    candidates.push_back({{"config", s.config.name()},
                          {"us", s.cost.us},
                          {"ranked", s.ranked},
                          {"registers", estimated_registers(s.config)},
                          {"smem_bytes", smem_bytes(s.config, p)}});
    if (!s.ranked) continue;
    const auto [it, first] = family_best.emplace(family(s.config.family).name, s);
    if (!first && better_pick(s.cost.us, s.config, it->second.cost.us, it->second.config)) it->second = s;
  }
  Json best = Json::object();
  for (const auto& [name, s] : family_best) best[name] = {{"config", s.config.name()}, {"us", s.cost.us}};
  best["cublaslt"] = {{"config", "cublaslt"}, {"us", predicted_us(Config::parse("cublaslt"), p, dev)}};
  Json j = {{"dtype", dtype_name(p.dtype)}, {"n", p.n}, {"k", p.k}, {"m", p.m}};
  if (!shape.name.empty()) j["name"] = shape.name;
  j["pick"] = pick.config.name();
  j["source"] = source_name(pick.source);
  j["pick_us"] = predicted_us(pick.config, p, dev);
  j["reason"] = pick.reason.str();
  j["scored_pick"] = scored.config.name();
  j["best"] = best;
  j["candidates"] = candidates;
  return j;
}

// One point per line, so that the dump of a tuning run's thousands of points stays greppable and diffable.
std::string dump_text(const Json& head, const std::vector<Json>& points) {
  std::ostringstream os;
  os << "{";
  for (const auto& [key, value] : head.items()) os << Json(key).dump() << ": " << value.dump() << ",\n";
  os << "\"points\": [\n";
  for (std::size_t i = 0; i < points.size(); ++i) os << points[i].dump() << (i + 1 < points.size() ? ",\n" : "\n");
  os << "]}\n";
  return os.str();
}

int run_heuristic(const HeuristicArgs& args) {
  const Facts facts = device_facts(args);
  const auto shapes = models::parse_shapes(args.shapes);
  const auto ms = models::parse_m_range(args.m);
  const DType dtype = parse_dtype(args.dtype);
  if (!args.json.empty()) check_writable(args.json, "--json");
  std::cout << "heuristic on " << facts.device.name << " (" << facts.from << "), " << dtype_name(dtype) << ", "
            << shapes.size() * ms.size() << " points"
            << (cuda::built() ? "" : "; this build has no kernels: picks as a build holding every instance") << "\n"
            << std::left << std::setw(14) << "NxK" << std::right << std::setw(4) << "m" << "  " << std::left
            << std::setw(24) << "pick" << std::setw(10) << "source" << std::right << std::setw(9) << "pick us"
            << std::setw(13) << "cuBLASLt us" << "\n";
  std::vector<Json> points;
  int kernels = 0;
  for (const auto& shape : shapes)
    for (const int64_t m : ms) {
      const Problem p{m, shape.n, shape.k, dtype};
      Json j = point_json(shape, p, facts.device);
      kernels += family(Config::parse(j["pick"].get<std::string>()).family).kernel;
      std::cout << std::left << std::setw(14) << shape.shape() << std::right << std::setw(4) << m << "  " << std::left
                << std::setw(24) << j["pick"].get<std::string>() << std::setw(10) << j["source"].get<std::string>()
                << std::right << std::setw(9) << fixed(j["pick_us"].get<double>(), 2) << std::setw(13)
                << fixed(j["best"]["cublaslt"]["us"].get<double>(), 2) << "\n";
      points.push_back(std::move(j));
    }
  std::cout << kernels << " of " << points.size() << " points pick a kernel\n";
  if (!args.json.empty()) {
    const Json head = {{"schema", kSchema},
                       {"meta", {{"library", version()}, {"revision", git_revision()}, {"command", command_line()},
                                 {"date", utc_date()}}},
                       {"device", device_json(facts)},
                       {"heuristic", heuristic_json()}};
    write_file(args.json, dump_text(head, points));
    std::cerr << "wrote " << args.json << "\n";
  }
  return 0;
}

}  // namespace

Command add_heuristic(CLI::App& app) {
  auto args = std::make_shared<HeuristicArgs>();
  CLI::App* sub = app.add_subcommand("heuristic", "The GPU heuristic's constants and picks for a device's facts, "
                                                  "no GPU needed (scripts/heuristic_cv.py reads the --json dump)");
  sub->add_option("--device", args->device,
                  "gpu (read the GPU), a preset (" + tune::device_preset_names() + "), or auto (gpu where one is)")
      ->capture_default_str();
  sub->add_option("--shapes", args->shapes, "comma list of NxK and model:<name>:tp<N>[:fusions] items")->required();
  sub->add_option("--m", args->m, "tokens: 1:64, 1:64:2, 1,2,4,8 or 3")->required();
  sub->add_option("--dtype", args->dtype, "bf16 or fp16")->check(CLI::IsMember({"bf16", "fp16"}))->capture_default_str();
  sub->add_option("--json", args->json, "write the constants and every point's pick and scored configs to FILE");
  const struct {
    const char* flag;
    int64_t* field;
    const char* what;
  } amendments[] = {{"--sms", &args->sms, "multiprocessors"},
                    {"--smem-per-sm", &args->smem_per_sm, "shared memory per SM, bytes"},
                    {"--smem-per-block", &args->smem_per_block, "opt-in shared memory per block, bytes"},
                    {"--regs-per-sm", &args->regs_per_sm, "32-bit registers per SM"},
                    {"--threads-per-sm", &args->threads_per_sm, "resident threads per SM"},
                    {"--blocks-per-sm", &args->blocks_per_sm, "resident blocks per SM"}};
  // The facts are int fields, and the grids multiply SMs by CTAs per SM in int: 2^16 SMs leave room for that.
  for (const auto& a : amendments)
    sub->add_option(a.flag, *a.field, std::string(a.what) + ", in place of the device's")
        ->check(CLI::Range(int64_t{1}, a.field == &args->sms ? int64_t{1} << 16 : int64_t{std::numeric_limits<int>::max()}));
  return {sub, [args] { return run_heuristic(*args); }};
}

}  // namespace skinnygemm::cli
