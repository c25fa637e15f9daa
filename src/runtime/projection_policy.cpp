// Fused-projection policies (projection.h, docs/mla.md): which mode (fused GEMM, side stream, separate) won per
// (M, attention context) on one device, as data written by `skinnygemm mla --policy-out`, and the lookup an
// engine calls per decode step. Errors name the file and the field, because these files are written on one
// machine and read on another.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "skinnygemm/projection.h"

namespace skinnygemm {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The grid index nearest to v in log2 distance; a tie goes to the larger grid value (axis ascending).
std::size_t nearest(const std::vector<int64_t>& axis, int64_t v) {
  std::size_t best = 0;
  double best_d = 1e300;
  const double lv = std::log2(static_cast<double>(v));
  for (std::size_t i = 0; i < axis.size(); ++i) {
    const double d = std::fabs(std::log2(static_cast<double>(axis[i])) - lv);
    if (d <= best_d + 1e-12) {  // <=: with an ascending axis, a tie moves to the larger point
      best = i;
      best_d = std::min(best_d, d);
    }
  }
  return best;
}

std::vector<int64_t> axis(const json& doc, const char* key, const std::string& where) {
  SKINNYGEMM_CHECK(doc.contains(key) && doc.at(key).is_array() && !doc.at(key).empty(),
                   where << "." << key << ": expected a non-empty array of positive integers");
  std::vector<int64_t> out;
  for (const json& v : doc.at(key)) {
    SKINNYGEMM_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1,
                     where << "." << key << ": expected positive integers, got " << v.dump());
    SKINNYGEMM_CHECK(out.empty() || v.get<int64_t>() > out.back(),
                     where << "." << key << ": expected ascending values without repeats, got " << doc.at(key).dump());
    out.push_back(v.get<int64_t>());
  }
  return out;
}

std::string string_field(const json& doc, const char* key, const std::string& where) {
  SKINNYGEMM_CHECK(doc.contains(key) && doc.at(key).is_string(),
                   where << "." << key << ": expected a string" << (doc.contains(key) ? ", got " + doc.at(key).dump() : ""));
  return doc.at(key).get<std::string>();
}

void check_grid(const FusedPolicy& p, const std::string& where) {
  SKINNYGEMM_CHECK(!p.ms.empty() && !p.contexts.empty() && p.modes.size() == p.ms.size() * p.contexts.size() &&
                       p.margins.size() == p.modes.size(),
                   where << ": the policy's grid is " << p.ms.size() << " M values x " << p.contexts.size()
                         << " contexts but it holds " << p.modes.size() << " modes and " << p.margins.size()
                         << " margins; expected one of each per grid point");
}

}  // namespace

const char* fused_mode_name(FusedMode mode) {
  switch (mode) {
    case FusedMode::Fused: return "fused";
    case FusedMode::SideStream: return "side_stream";
    case FusedMode::Separate: return "separate";
  }
  return "?";
}

FusedMode parse_fused_mode(const std::string& name) {
  for (FusedMode m : {FusedMode::Fused, FusedMode::SideStream, FusedMode::Separate})
    if (name == fused_mode_name(m)) return m;
  SKINNYGEMM_FAIL("unknown fused mode '" << name << "'; expected fused, side_stream or separate");
}

FusedMode FusedProjection::choose_mode(const FusedPolicy& policy, int64_t m, int64_t context) {
  SKINNYGEMM_CHECK(m >= 1, "m=" << m << " must be >= 1 (tokens in the decode batch)");
  SKINNYGEMM_CHECK(context >= 1, "context=" << context << " must be >= 1 (tokens in the attention's KV cache)");
  check_grid(policy, "policy " + policy.name + " (" + policy.source + ")");
  return policy.at(nearest(policy.ms, m), nearest(policy.contexts, context));
}

FusedPolicy default_fused_policy() {
  FusedPolicy p;
  p.name = "default";
  p.source = "default";
  // Every M of the decode range, so that the nearest-point rule reproduces "M <= 16" exactly; one context.
  for (int64_t m = 1; m <= 64; ++m) {
    p.ms.push_back(m);
    p.modes.push_back(m <= 16 ? FusedMode::Fused : FusedMode::Separate);
    p.margins.push_back(0);
  }
  p.contexts = {512};
  return p;
}

FusedPolicy load_fused_policy(const std::string& path) {
  std::ifstream in(path);
  SKINNYGEMM_CHECK(in.good(), "cannot open fused policy file " << path << "; expected a JSON file written by "
                                                               << "`skinnygemm mla --policy-out`");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    SKINNYGEMM_FAIL("fused policy " << path << " is not valid JSON (byte " << e.byte << "): " << e.what());
  }
  const std::string where = "fused policy " + path;
  SKINNYGEMM_CHECK(doc.is_object(), where << ": expected a JSON object at the top");
  SKINNYGEMM_CHECK(doc.value("schema", 0) == 1, where << ".schema: expected 1, got "
                                                      << (doc.contains("schema") ? doc.at("schema").dump() : "nothing"));
  SKINNYGEMM_CHECK(doc.value("kind", std::string()) == "fused_policy",
                   where << ".kind: expected \"fused_policy\", got "
                         << (doc.contains("kind") ? doc.at("kind").dump() : "nothing"));
  FusedPolicy p;
  p.source = path;
  p.name = string_field(doc, "name", where);
  p.device = string_field(doc, "device", where);
  p.signature = string_field(doc, "signature", where);
  p.ms = axis(doc, "ms", where);
  p.contexts = axis(doc, "contexts", where);
  const std::size_t nm = p.ms.size(), nc = p.contexts.size();
  p.modes.assign(nm * nc, FusedMode::Separate);
  p.margins.assign(nm * nc, 0.0);
  std::vector<bool> seen(nm * nc, false);
  SKINNYGEMM_CHECK(doc.contains("points") && doc.at("points").is_array(), where << ".points: expected an array");
  const json& points = doc.at("points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const json& pt = points[i];
    const std::string at = where + ".points[" + std::to_string(i) + "]";
    SKINNYGEMM_CHECK(pt.is_object(), at << ": expected an object, got " << pt.dump());
    SKINNYGEMM_CHECK(pt.contains("m") && pt.at("m").is_number_integer(), at << ".m: expected an integer");
    SKINNYGEMM_CHECK(pt.contains("context") && pt.at("context").is_number_integer(),
                     at << ".context: expected an integer");
    const auto mi = std::find(p.ms.begin(), p.ms.end(), pt.at("m").get<int64_t>());
    const auto ci = std::find(p.contexts.begin(), p.contexts.end(), pt.at("context").get<int64_t>());
    SKINNYGEMM_CHECK(mi != p.ms.end(), at << ".m: " << pt.at("m").dump() << " is not on the grid's ms");
    SKINNYGEMM_CHECK(ci != p.contexts.end(), at << ".context: " << pt.at("context").dump()
                                                << " is not on the grid's contexts");
    const std::size_t idx = static_cast<std::size_t>(mi - p.ms.begin()) * nc + static_cast<std::size_t>(ci - p.contexts.begin());
    SKINNYGEMM_CHECK(!seen[idx], at << ": (m=" << *mi << ", context=" << *ci << ") appears twice");
    seen[idx] = true;
    const std::string mode = string_field(pt, "mode", at);
    try {
      p.modes[idx] = parse_fused_mode(mode);
    } catch (const Error&) {
      SKINNYGEMM_FAIL(at << ".mode: expected fused, side_stream or separate, got \"" << mode << "\"");
    }
    if (pt.contains("margin")) {
      SKINNYGEMM_CHECK(pt.at("margin").is_number() && pt.at("margin").get<double>() >= 0,
                       at << ".margin: expected a number >= 0, got " << pt.at("margin").dump());
      p.margins[idx] = pt.at("margin").get<double>();
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    SKINNYGEMM_CHECK(seen[i], where << ".points: no entry for (m=" << p.ms[i / nc] << ", context=" << p.contexts[i % nc]
                                    << "); expected one per grid point");
  return p;
}

FusedPolicy find_fused_policy(const DeviceInfo& device, const std::string& name, const std::string& folder) {
  const fs::path dir = folder.empty() ? fs::path(data_dir()) / "policies" : fs::path(folder);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    // A broken file must not hide a good one behind it, nor stop the engine: the caller asked for "the policy
    // for this device, else the default". Say so, as default_table does for a broken table.
    try {
      FusedPolicy p = load_fused_policy(f.string());
      if (p.signature == device.signature() && p.name == name) return p;
    } catch (const Error& e) {
      std::cerr << "skinnygemm: warning: skipping fused policy: " << e.what() << "\n";
    }
  }
  return default_fused_policy();
}

}  // namespace skinnygemm
