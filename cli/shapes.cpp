// `skinnygemm shapes --model kimi_k3 [--tp 8] [--json FILE]`: a model's dense decode projections per rank,
// its fusions, and what one decode step launches and reads.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/models.h"

namespace skinnygemm::cli {
namespace {

struct ShapesArgs {
  std::string model = "kimi_k3";
  int tp = 8;
  std::string json;
};

std::string parts_text(const models::Projection& p) {
  std::string parts, sizes;
  for (size_t i = 0; i < p.fused_parts.size(); ++i) {
    parts += (i ? " + " : "") + p.fused_parts[i];
    sizes += (i ? "+" : "") + std::to_string(p.segments[i]);
  }
  return parts + " (" + sizes + ")";
}

int run_shapes(const ShapesArgs& args) {
  const models::ModelInfo info = models::model_info(args.model);
  const auto projections = models::model_projections(args.model, args.tp, true);
  const double elem = static_cast<double>(dtype_size(parse_dtype(info.dtype)));
  auto mb = [&](const models::Projection& p) { return elem * static_cast<double>(p.n * p.k) / 1e6; };

  std::cout << info.name << " at TP " << args.tp << ", per rank, " << info.dtype << " weights [N out, K in]\n"
            << info.description << "\nsource: " << info.source << "\nread from " << models::model_path(args.model)
            << "\n\n";
  std::cout << std::left << std::setw(31) << "name" << std::right << std::setw(13) << "NxK" << std::setw(7)
            << "count" << std::setw(10) << "MB" << "  " << std::left << std::setw(7) << "par." << std::setw(7)
            << "step" << "parts / note\n";
  int launches = 0;
  double step_bytes = 0;
  bool fusion_header = false;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : projections) {
    if (p.fused() && !fusion_header) {
      std::cout << "fusions (one GEMM over several weights sharing the input; alternatives to their parts):\n";
      fusion_header = true;
    }
    if (p.in_step) {
      launches += p.count;
      step_bytes += mb(p) * 1e6 * p.count;
    }
    const std::string step = p.in_step ? "yes" : p.kind == "mtp" ? "draft" : "-";
    const std::string detail = p.fused() ? parts_text(p) : !p.part_of.empty() ? "segment of " + p.part_of : p.note;
    std::cout << std::left << std::setw(31) << p.name << std::right << std::setw(13) << p.shape() << std::setw(7)
              << p.count << std::setw(10) << fixed(mb(p), 2) << "  " << std::left << std::setw(7) << p.parallel
              << std::setw(7) << step << detail << "\n";
    rows.push_back({{"name", p.name}, {"n", p.n}, {"k", p.k}, {"count", p.count}, {"kind", p.kind},
                    {"parallel", p.parallel}, {"weight_mb", mb(p)}, {"in_step", p.in_step},
                    {"parts", p.fused_parts}, {"segments", p.segments}, {"part_of", p.part_of}, {"note", p.note}});
  }
  std::cout << std::right << "\nper decode step (rows marked step=yes): " << launches << " GEMM launches, "
            << fixed(step_bytes / 1e9, 2) << " GB of weights read per rank (MB = 1e6 bytes, GB = 1e9 bytes)\n";
  if (!info.not_included.empty()) std::cout << "not included: " << info.not_included << "\n";

  if (!args.json.empty()) {
    const nlohmann::json doc = {{"model", info.name},
                                {"tp", args.tp},
                                {"dtype", info.dtype},
                                {"source", info.source},
                                {"projections", rows},
                                {"totals", {{"launches", launches}, {"weight_gb", step_bytes / 1e9}}}};
    write_file(args.json, doc.dump(2) + "\n");
    std::cerr << "wrote " << args.json << "\n";
  }
  return 0;
}

}  // namespace

Command add_shapes(CLI::App& app) {
  auto args = std::make_shared<ShapesArgs>();
  CLI::App* sub = app.add_subcommand("shapes", "A model's dense decode projections per rank, fusions and step totals");
  sub->add_option("--model", args->model, "model file name under models/ (without .json)")->capture_default_str();
  sub->add_option("--tp", args->tp, "tensor-parallel degree")->capture_default_str();
  sub->add_option("--json", args->json, "also write the projections as JSON to FILE");
  return {sub, [args] { return run_shapes(*args); }};
}

}  // namespace skinnygemm::cli
