#include "skinnygemm/config.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "skinnygemm/error.h"

namespace skinnygemm {

const char* family_name(Family family) {
  switch (family) {
    case Family::Mma: return "mma";
    case Family::Bulk: return "bulk";
    case Family::Reg: return "reg";
    case Family::Simt: return "simt";
    case Family::Cublaslt: return "cublaslt";
    case Family::Cpu: return "cpu";
  }
  return "?";
}

namespace {

template <std::size_t N>
bool listed(const int (&list)[N], int v) {
  return std::find(std::begin(list), std::end(list), v) != std::end(list);
}

template <std::size_t N>
std::string join(const int (&list)[N]) {
  std::ostringstream os;
  for (std::size_t i = 0; i < N; ++i) os << (i ? "," : "") << list[i];
  return os.str();
}

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

// Parses the number after `prefix` in `part` ("u4" with prefix "u" -> 4).
int number_after(const std::string& name, const std::string& part, const std::string& prefix,
                 const char* what) {
  SKINNYGEMM_CHECK(part.size() > prefix.size() && part.compare(0, prefix.size(), prefix) == 0,
                   "config '" << name << "': expected " << what << " as '" << prefix << "<number>', got '"
                              << part << "'");
  const std::string digits = part.substr(prefix.size());
  SKINNYGEMM_CHECK(digits.find_first_not_of("0123456789") == std::string::npos && digits.size() <= 6,
                   "config '" << name << "': " << what << " '" << part << "' is not '" << prefix
                              << "<number>'");
  return std::atoi(digits.c_str());
}

Config parse_tiled(const std::string& name, const std::vector<std::string>& parts, Family family) {
  SKINNYGEMM_CHECK(parts.size() == 5, "config '" << name << "': expected " << family_name(family)
                                                  << "_m<tile>_w<n>x<k>_u<unroll>_sk<split>, got "
                                                  << parts.size() << " parts");
  Config c;
  c.family = family;
  c.tile_m = number_after(name, parts[1], "m", "token tile");
  const bool mma = family != Family::Simt;  // mma and bulk share the token tiles
  SKINNYGEMM_CHECK(mma ? listed(kMmaTileM, c.tile_m) : listed(kSimtTileM, c.tile_m),
                   "config '" << name << "': token tile m" << c.tile_m << " is not built; expected one of "
                              << (mma ? join(kMmaTileM) : join(kSimtTileM)));
  const std::vector<std::string> warps = split(parts[2], 'x');
  SKINNYGEMM_CHECK(warps.size() == 2, "config '" << name << "': warp layout '" << parts[2]
                                                  << "' is not 'w<n>x<k>'");
  c.warps_n = number_after(name, warps[0], "w", "warps along N");
  c.warps_k = number_after(name, "k" + warps[1], "k", "warps along K");
  SKINNYGEMM_CHECK(c.warps_n >= 1 && c.warps_k >= 1 && c.warps_n * c.warps_k <= 8,
                   "config '" << name << "': warp layout " << c.warps_n << "x" << c.warps_k
                              << " must have 1..8 warps in all");
  c.unroll = number_after(name, parts[3], "u", "unroll");
  SKINNYGEMM_CHECK(listed(kUnroll, c.unroll), "config '" << name << "': unroll u" << c.unroll
                                                         << " is not built; expected one of " << join(kUnroll));
  SKINNYGEMM_CHECK(instance_listed(c.tile_m, c.unroll),
                   "config '" << name << "': m" << c.tile_m << " with u" << c.unroll
                              << " is not built (token tile x unroll must be <= 128: register budget)");
  c.split_k = number_after(name, parts[4], "sk", "split-K");
  SKINNYGEMM_CHECK(c.split_k >= 1 && c.split_k <= kMaxSplitK,
                   "config '" << name << "': split-K sk" << c.split_k << " must be 1.." << kMaxSplitK);
  return c;
}

}  // namespace

std::string Config::name() const {
  std::ostringstream os;
  switch (family) {
    case Family::Mma:
    case Family::Bulk:
    case Family::Reg:
    case Family::Simt:
      os << family_name(family) << "_m" << tile_m << "_w" << warps_n << "x" << warps_k << "_u" << unroll
         << "_sk" << split_k;
      break;
    case Family::Cublaslt:
      os << "cublaslt";
      if (algo >= 0) os << "_a" << algo;
      break;
    case Family::Cpu:
      os << "cpu_r" << rows;
      break;
  }
  return os.str();
}

Config Config::parse(const std::string& name) {
  SKINNYGEMM_CHECK(!name.empty(), "empty config name");
  const std::vector<std::string> parts = split(name, '_');
  const std::string& fam = parts[0];
  if (fam == "mma") return parse_tiled(name, parts, Family::Mma);
  if (fam == "bulk") return parse_tiled(name, parts, Family::Bulk);
  if (fam == "reg") return parse_tiled(name, parts, Family::Reg);
  if (fam == "simt") return parse_tiled(name, parts, Family::Simt);
  if (fam == "cublaslt") {
    Config c;
    c.family = Family::Cublaslt;
    SKINNYGEMM_CHECK(parts.size() <= 2, "config '" << name << "': expected cublaslt or cublaslt_a<index>");
    if (parts.size() == 2) {
      c.algo = number_after(name, parts[1], "a", "algorithm index");
      SKINNYGEMM_CHECK(c.algo < kCublasltAlgos, "config '" << name << "': algorithm index " << c.algo
                                                           << " must be < " << kCublasltAlgos);
    }
    return c;
  }
  if (fam == "cpu") {
    SKINNYGEMM_CHECK(parts.size() == 2, "config '" << name << "': expected cpu_r<rows>");
    Config c;
    c.family = Family::Cpu;
    c.rows = number_after(name, parts[1], "r", "rows per block");
    SKINNYGEMM_CHECK(listed(kCpuRows, c.rows), "config '" << name << "': rows r" << c.rows
                                                          << " is not built; expected one of " << join(kCpuRows));
    return c;
  }
  SKINNYGEMM_FAIL("config '" << name << "': unknown family '" << fam
                             << "'; expected mma, bulk, reg, simt, cublaslt or cpu");
}

bool operator==(const Config& a, const Config& b) { return a.name() == b.name(); }
bool operator!=(const Config& a, const Config& b) { return !(a == b); }

std::vector<Config> listed_configs(Family family) {
  std::vector<Config> out;
  switch (family) {
    case Family::Mma:
    case Family::Bulk:
    case Family::Reg:
    case Family::Simt: {
      const bool mma = family != Family::Simt;
      const int* tiles = mma ? kMmaTileM : kSimtTileM;
      const std::size_t ntiles = mma ? std::size(kMmaTileM) : std::size(kSimtTileM);
      for (std::size_t t = 0; t < ntiles; ++t)
        for (const WarpLayout& wl : kWarpLayouts)
          for (int u : kUnroll)
            for (int sk : kSplitK) {
              if (!instance_listed(tiles[t], u)) continue;
              Config c;
              c.family = family;
              c.tile_m = tiles[t];
              c.warps_n = wl.n;
              c.warps_k = wl.k;
              c.unroll = u;
              c.split_k = sk;
              out.push_back(c);
            }
      break;
    }
    case Family::Cublaslt: {
      Config c;
      c.family = Family::Cublaslt;
      out.push_back(c);
      for (int a = 0; a < kCublasltAlgos; ++a) {
        c.algo = a;
        out.push_back(c);
      }
      break;
    }
    case Family::Cpu:
      for (int r : kCpuRows) {
        Config c;
        c.family = Family::Cpu;
        c.rows = r;
        out.push_back(c);
      }
      break;
  }
  return out;
}

std::vector<Config> all_listed_configs() {
  std::vector<Config> out;
  for (Family f : {Family::Mma, Family::Bulk, Family::Reg, Family::Simt, Family::Cublaslt, Family::Cpu}) {
    auto v = listed_configs(f);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace skinnygemm
