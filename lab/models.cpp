#include "lab/models.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "skinnygemm/error.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::models {
namespace fs = std::filesystem;
using nlohmann::json;

std::string Projection::shape() const { return std::to_string(n) + "x" + std::to_string(k); }

namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A whole-string decimal integer >= lo, or false (no sign games, no trailing junk, no overflow).
bool parse_int(const std::string& s, int64_t lo, int64_t* out) {
  if (s.empty() || s.size() > 12 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  *out = std::strtoll(s.c_str(), nullptr, 10);
  return *out >= lo;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream is(s);
  while (std::getline(is, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();  // "1,2," has an empty last item
  return parts;
}

// "NxK" with N, K >= 1, or false.
bool parse_shape(const std::string& s, int64_t* n, int64_t* k) {
  const auto x = s.find('x');
  return x != std::string::npos && parse_int(s.substr(0, x), 1, n) && parse_int(s.substr(x + 1), 1, k);
}

json load_json(const std::string& model) {
  const std::string path = model_path(model);
  std::ifstream in(path);
  if (!in) {
    const auto names = available_models();
    SKINNYGEMM_FAIL("unknown model '" << model << "' (no file " << path << "); available models: "
                                      << (names.empty() ? std::string("none") : join(names, ", ")));
  }
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    SKINNYGEMM_FAIL("model file " << path << " is not valid JSON: " << e.what());
  }
  return doc;
}

// Reads field `key` of `obj` as T, naming the file, the entry and the field when it is missing or mistyped.
template <typename T>
T field(const json& obj, const char* key, const std::string& where) {
  SKINNYGEMM_CHECK(obj.is_object() && obj.contains(key), where << ": missing field '" << key << "'");
  T value{};
  try {
    value = obj.at(key).get<T>();
  } catch (const json::exception& e) {
    SKINNYGEMM_FAIL(where << ": field '" << key << "' has the wrong type (" << e.what() << ")");
  }
  return value;
}

template <typename T>
T optional_field(const json& obj, const char* key, const std::string& where, T fallback) {
  return obj.contains(key) ? field<T>(obj, key, where) : fallback;
}

std::vector<int> tps_of(const json& doc, const std::string& where) {
  auto tps = field<std::vector<int>>(doc, "tp", where);
  SKINNYGEMM_CHECK(!tps.empty(), where << ": field 'tp' is empty; expected the TP degrees with shapes");
  return tps;
}

// The "shape" entry of obj for tp, checked to be "NxK".
void shape_at(const json& obj, int tp, const std::string& where, int64_t* n, int64_t* k) {
  const auto shapes = field<std::map<std::string, std::string>>(obj, "shape", where);
  const auto it = shapes.find(std::to_string(tp));
  SKINNYGEMM_CHECK(it != shapes.end(), where << ": field 'shape' has no entry for tp " << tp);
  SKINNYGEMM_CHECK(parse_shape(it->second, n, k),
                   where << ": shape '" << it->second << "' for tp " << tp << " is not NxK with N, K >= 1");
}

// The optional "pad_to" and "unpadded" fields: n must be the unpadded rows rounded up to a multiple of pad_to.
void padding_at(const json& obj, int tp, const std::string& where, Projection* p) {
  p->pad_to = optional_field<int64_t>(obj, "pad_to", where, 1);
  SKINNYGEMM_CHECK(p->pad_to >= 1, where << ": pad_to=" << p->pad_to << " must be >= 1");
  const auto unpadded = optional_field<std::map<std::string, int64_t>>(obj, "unpadded", where, {});
  const auto it = unpadded.find(std::to_string(tp));
  p->unpadded = it == unpadded.end() ? p->n : it->second;
  SKINNYGEMM_CHECK(p->unpadded >= 1 && (p->unpadded + p->pad_to - 1) / p->pad_to * p->pad_to == p->n,
                   where << ": unpadded=" << p->unpadded << " at tp " << tp << " padded to a multiple of pad_to="
                         << p->pad_to << " must give the shape's N=" << p->n);
}

const std::set<std::string> kKinds = {"mla", "kda", "moe", "dense", "head", "mtp"};
const std::set<std::string> kParallel = {"col", "row", "repl", "mixed"};

}  // namespace

std::vector<std::string> available_models() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir()) / "models", ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string model_path(const std::string& model) {
  return (fs::path(data_dir()) / "models" / (model + ".json")).string();
}

int64_t config_int(const ModelInfo& info, const std::string& key, const std::string& needed_by) {
  for (const auto& [k, v] : info.config) {
    if (k != key) continue;
    SKINNYGEMM_CHECK(!v.empty() && v.size() < 12 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }),
                     "model " << info.name << ": config '" << key << "' is '" << v << "'; expected a whole number");
    return std::stoll(v);
  }
  SKINNYGEMM_FAIL("model " << info.name << ": config has no '" << key << "', which " << needed_by << " needs");
}

ModelInfo model_info(const std::string& model) {
  const json doc = load_json(model);
  const std::string where = model_path(model);
  ModelInfo info;
  info.name = field<std::string>(doc, "model", where);
  info.description = optional_field<std::string>(doc, "description", where, "");
  info.source = field<std::string>(doc, "source", where);
  info.not_included = optional_field<std::string>(doc, "not_included", where, "");
  info.dtype = optional_field<std::string>(doc, "dtype", where, "bf16");
  info.tps = tps_of(doc, where);
  if (doc.contains("config"))
    for (const auto& [key, value] : doc.at("config").items())
      info.config.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  return info;
}

std::vector<Projection> model_projections(const std::string& model, int tp, bool include_fusions) {
  const json doc = load_json(model);
  const std::string file = model_path(model);
  const auto tps = tps_of(doc, file);
  if (std::find(tps.begin(), tps.end(), tp) == tps.end()) {
    std::vector<std::string> names;
    for (int t : tps) names.push_back(std::to_string(t));
    SKINNYGEMM_FAIL("model '" << model << "' has no shapes for tp " << tp << "; available tp: " << join(names, ", "));
  }
  std::vector<Projection> out;
  std::map<std::string, size_t> index;  // name -> position in out
  const auto list = field<json>(doc, "projections", file);
  SKINNYGEMM_CHECK(list.is_array(), file << ": field 'projections' must be an array");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    std::string where = file + ": projections[" + std::to_string(i) + "]";
    Projection p;
    p.name = field<std::string>(e, "name", where);
    where += " (" + p.name + ")";
    SKINNYGEMM_CHECK(!index.count(p.name), where << ": name '" << p.name << "' appears twice; names must be unique");
    shape_at(e, tp, where, &p.n, &p.k);
    p.count = field<int>(e, "count", where);
    SKINNYGEMM_CHECK(p.count >= 1, where << ": count=" << p.count << " must be >= 1");
    p.kind = field<std::string>(e, "kind", where);
    SKINNYGEMM_CHECK(kKinds.count(p.kind), where << ": kind '" << p.kind << "' is not one of mla, kda, moe, dense, head, mtp");
    p.parallel = field<std::string>(e, "parallel", where);
    SKINNYGEMM_CHECK(kParallel.count(p.parallel), where << ": parallel '" << p.parallel << "' is not one of col, row, repl, mixed");
    p.in_step = optional_field<bool>(e, "in_step", where, true);
    p.part_of = optional_field<std::string>(e, "part_of", where, "");
    padding_at(e, tp, where, &p);
    p.note = optional_field<std::string>(e, "note", where, "");
    index[p.name] = out.size();
    out.push_back(p);
  }
  const auto fusions = optional_field<json>(doc, "fusions", file, json::array());
  SKINNYGEMM_CHECK(fusions.is_array(), file << ": field 'fusions' must be an array");
  std::vector<Projection> fused;
  for (size_t i = 0; i < fusions.size(); ++i) {
    const json& e = fusions[i];
    std::string where = file + ": fusions[" + std::to_string(i) + "]";
    Projection f;
    f.name = field<std::string>(e, "name", where);
    where += " (" + f.name + ")";
    f.fused_parts = field<std::vector<std::string>>(e, "parts", where);
    SKINNYGEMM_CHECK(f.fused_parts.size() >= 2, where << ": a fusion needs >= 2 parts, got " << f.fused_parts.size());
    shape_at(e, tp, where, &f.n, &f.k);
    f.unpadded = f.n;  // a fusion's padding is its parts'
    f.in_step = false;
    f.note = optional_field<std::string>(e, "note", where, "");
    int64_t sum = 0;
    for (const auto& part_name : f.fused_parts) {
      const auto it = index.find(part_name);
      SKINNYGEMM_CHECK(it != index.end(), where << ": part '" << part_name << "' is not a projection of this model");
      const Projection& part = out[it->second];
      SKINNYGEMM_CHECK(part.k == f.k, where << ": part " << part_name << " has K=" << part.k << " at tp " << tp
                                            << " but the fusion has K=" << f.k << "; parts must share the input");
      const bool first = f.segments.empty();
      SKINNYGEMM_CHECK(first || part.count == f.count, where << ": part " << part_name << " has count=" << part.count
                                                             << " but earlier parts have " << f.count);
      SKINNYGEMM_CHECK(first || part.kind == f.kind, where << ": part " << part_name << " is kind " << part.kind
                                                           << " but earlier parts are " << f.kind);
      f.count = part.count;
      f.kind = part.kind;
      f.parallel = first || part.parallel == f.parallel ? part.parallel : "mixed";
      f.segments.push_back(part.n);
      sum += part.n;
    }
    SKINNYGEMM_CHECK(sum == f.n, where << ": shape N=" << f.n << " at tp " << tp << " differs from the parts' sum " << sum);
    fused.push_back(f);
  }
  for (const auto& p : out)
    SKINNYGEMM_CHECK(p.part_of.empty() || std::any_of(fused.begin(), fused.end(),
                                                      [&](const Projection& f) { return f.name == p.part_of; }),
                     file << ": " << p.name << ": part_of '" << p.part_of << "' is not a fusion of this model");
  if (include_fusions) out.insert(out.end(), fused.begin(), fused.end());
  return out;
}

std::vector<Projection> parse_shapes(const std::string& spec) {
  const char* expected = "; expected a comma list of NxK (e.g. 1536x7168,2112x7168), model:<name>:tp<N> or "
                         "model:<name>:tp<N>:fusions (e.g. model:kimi_k3:tp8)";
  const std::string prefix = "model:";
  std::vector<Projection> out;
  std::set<std::pair<int64_t, int64_t>> seen;  // a shape measured twice says nothing new: first name wins
  auto add = [&](Projection p) {
    if (seen.insert({p.n, p.k}).second) out.push_back(std::move(p));
  };
  for (const auto& item : split(spec, ',')) {
    if (item.compare(0, prefix.size(), prefix) != 0) {
      Projection p;
      SKINNYGEMM_CHECK(parse_shape(item, &p.n, &p.k),
                       "shape spec '" << spec << "': item '" << item << "' is not NxK with N, K >= 1" << expected);
      p.unpadded = p.n;
      add(p);
      continue;
    }
    const auto parts = split(item.substr(prefix.size()), ':');
    int64_t tp = 0;
    const bool ok = (parts.size() == 2 || (parts.size() == 3 && parts[2] == "fusions")) && !parts[0].empty() &&
                    parts[1].size() > 2 && parts[1].compare(0, 2, "tp") == 0 && parse_int(parts[1].substr(2), 1, &tp);
    SKINNYGEMM_CHECK(ok, "shape spec '" << spec << "': item '" << item << "' is malformed" << expected);
    const bool only_fusions = parts.size() == 3;
    for (auto& p : model_projections(parts[0], static_cast<int>(tp), true))
      if (!only_fusions || p.fused()) add(std::move(p));
  }
  SKINNYGEMM_CHECK(!out.empty(), "shape spec '" << spec << "' is empty" << expected);
  return out;
}

std::vector<int64_t> parse_m_range(const std::string& spec) {
  const char* expected = "; expected a range lo:hi or lo:hi:step (inclusive, e.g. 1:64), a list 1,2,4,8 or one M, "
                         "every M >= 1";
  std::vector<int64_t> out;
  if (spec.find(':') != std::string::npos) {
    const auto parts = split(spec, ':');
    int64_t lo = 0, hi = 0, step = 1;
    const bool ok = (parts.size() == 2 || parts.size() == 3) && parse_int(parts[0], 1, &lo) &&
                    parse_int(parts[1], 1, &hi) && (parts.size() == 2 || parse_int(parts[2], 1, &step));
    SKINNYGEMM_CHECK(ok, "M range '" << spec << "' is malformed" << expected);
    SKINNYGEMM_CHECK(lo <= hi, "M range '" << spec << "' is empty: lo=" << lo << " > hi=" << hi << expected);
    constexpr int64_t kMaxValues = 4096;  // each M is a case to run: a typo such as 1:999999999 is not a plan
    SKINNYGEMM_CHECK((hi - lo) / step < kMaxValues, "M range '" << spec << "' has " << (hi - lo) / step + 1
                                                                << " values; at most " << kMaxValues << " are taken");
    for (int64_t m = lo; m <= hi; m += step) out.push_back(m);
    return out;
  }
  for (const auto& item : split(spec, ',')) {
    int64_t m = 0;
    SKINNYGEMM_CHECK(parse_int(item, 1, &m), "M spec '" << spec << "': item '" << item << "' is not an M >= 1" << expected);
    out.push_back(m);
  }
  SKINNYGEMM_CHECK(!out.empty(), "M spec is empty" << expected);
  return out;
}

}  // namespace skinnygemm::models
