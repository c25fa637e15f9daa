// Config names and lists through the family registry (src/kernels/registry.cpp): the first part of a name picks
// the family, whose descriptor parses and prints the rest.
#include "skinnygemm/config.h"

#include <cstdlib>
#include <tuple>

#include "kernels/family.h"
#include "runtime/config_names.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

const char* family_name(Family f) { return family(f).name; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

int number_after(const std::string& name, const std::string& part, const std::string& prefix, const char* what) {
  SKINNYGEMM_CHECK(part.size() > prefix.size() && part.compare(0, prefix.size(), prefix) == 0,
                   "config '" << name << "': expected " << what << " as '" << prefix << "<number>', got '" << part
                              << "'");
  const std::string digits = part.substr(prefix.size());
  SKINNYGEMM_CHECK(digits.find_first_not_of("0123456789") == std::string::npos && digits.size() <= 6,
                   "config '" << name << "': " << what << " '" << part << "' is not '" << prefix << "<number>'");
  return std::atoi(digits.c_str());
}

std::string Config::name() const { return skinnygemm::family(family).print(*this); }

bool retired_family_name(const std::string& name, std::string* why) {
  if (name.substr(0, name.find('_')) != "reg") return false;  // the family token: "reg" alone or reg_*
  if (why)
    *why = "the register-ring family (reg_*) was retired in 0.2.0; the stage ring (bulk_*, the same name format) and "
           "the TMA family (tma_*) took its shapes, faster at each of the 12 points measured (docs/kernels.md, "
           "\"Session 33\"): name one of those, or re-tune the table that names it";
  return true;
}

Config Config::parse(const std::string& name) {
  SKINNYGEMM_CHECK(!name.empty(), "empty config name");
  const std::vector<std::string> parts = split(name, '_');
  Family id{};
  if (const FamilyDescriptor* f = find_family(parts[0], &id)) return f->parse(name, parts, id);
  // A name of a retired family (a table or a script of an older release) says what happened, not just "unknown".
  std::string why;
  SKINNYGEMM_CHECK(!retired_family_name(name, &why), "config '" << name << "': " << why);
  std::string known;
  for (const FamilyDescriptor* f : families()) known += (known.empty() ? "" : ", ") + std::string(f->name);
  SKINNYGEMM_FAIL("config '" << name << "': unknown family '" << parts[0] << "'; expected one of " << known);
}

bool operator==(const CublasltIdentity& a, const CublasltIdentity& b) {
  return std::tie(a.id, a.tile, a.stages, a.split_k, a.reduction, a.swizzle, a.custom, a.cluster, a.inner) ==
         std::tie(b.id, b.tile, b.stages, b.split_k, b.reduction, b.swizzle, b.custom, b.cluster, b.inner);
}

bool operator==(const Config& a, const Config& b) {
  return std::tie(a.family, a.tile_m, a.warps_n, a.warps_k, a.unroll, a.split_k, a.algo, a.rows, a.boxes, a.stages,
                  a.ctas_per_sm, a.min_units, a.cluster, a.lead, a.row_stream, a.lt_identity) ==
         std::tie(b.family, b.tile_m, b.warps_n, b.warps_k, b.unroll, b.split_k, b.algo, b.rows, b.boxes, b.stages,
                  b.ctas_per_sm, b.min_units, b.cluster, b.lead, b.row_stream, b.lt_identity);
}
bool operator!=(const Config& a, const Config& b) { return !(a == b); }

std::vector<Config> listed_configs(Family f) { return family(f).listed(f); }

std::vector<Config> all_listed_configs() {
  std::vector<Config> out;
  for (std::size_t i = 0; i < families().size(); ++i) {
    const std::vector<Config> v = listed_configs(static_cast<Family>(i));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace skinnygemm
