#include "kernels/common/tiled.h"

#include <algorithm>

#include "runtime/config_names.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

bool fail(std::string* why_not, const std::string& why) {
  if (why_not) *why_not = why;
  return false;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Config parse_tiled(const std::string& name, const std::vector<std::string>& parts, Family id) {
  const FamilyDescriptor& f = family(id);
  SKINNYGEMM_CHECK(parts.size() == 5, "config '" << name << "': expected " << f.name
                                                  << "_m<tile>_w<n>x<k>_u<unroll>_sk<split>, got " << parts.size()
                                                  << " parts");
  Config c;
  c.family = id;
  c.tile_m = number_after(name, parts[1], "m", "token tile");
  SKINNYGEMM_CHECK(listed(f.tiled->tiles, f.tiled->tile_count, c.tile_m),
                   "config '" << name << "': token tile m" << c.tile_m << " is not built; expected one of "
                              << join(f.tiled->tiles, f.tiled->tile_count));
  const std::vector<std::string> warps = split(parts[2], 'x');
  SKINNYGEMM_CHECK(warps.size() == 2, "config '" << name << "': warp layout '" << parts[2] << "' is not 'w<n>x<k>'");
  c.warps_n = number_after(name, warps[0], "w", "warps along N");
  c.warps_k = number_after(name, "k" + warps[1], "k", "warps along K");
  SKINNYGEMM_CHECK(c.warps_n >= 1 && c.warps_k >= 1 && c.warps_n * c.warps_k <= 8,
                   "config '" << name << "': warp layout " << c.warps_n << "x" << c.warps_k
                              << " must have 1..8 warps in all");
  c.unroll = number_after(name, parts[3], "u", "unroll");
  SKINNYGEMM_CHECK(listed(kUnroll, c.unroll),
                   "config '" << name << "': unroll u" << c.unroll << " is not built; expected one of " << join(kUnroll));
  SKINNYGEMM_CHECK(instance_listed(c.tile_m, c.unroll),
                   "config '" << name << "': m" << c.tile_m << " with u" << c.unroll
                              << " is not built (token tile x unroll must be <= 128: register budget)");
  c.split_k = number_after(name, parts[4], "sk", "split-K");
  SKINNYGEMM_CHECK(c.split_k >= 1 && c.split_k <= kMaxSplitK,
                   "config '" << name << "': split-K sk" << c.split_k << " must be 1.." << kMaxSplitK);
  return c;
}

std::string print_tiled(const Config& c) {
  std::string s = family(c.family).name;
  s += "_m" + std::to_string(c.tile_m) + "_w" + std::to_string(c.warps_n) + "x" + std::to_string(c.warps_k) +
       "_u" + std::to_string(c.unroll) + "_sk" + std::to_string(c.split_k);
  return s;
}

std::vector<Config> listed_tiled(Family id) {
  const TiledTraits& t = *family(id).tiled;
  std::vector<Config> out;
  for (std::size_t i = 0; i < t.tile_count; ++i)
    for (const WarpLayout& wl : kWarpLayouts)
      for (int u : kUnroll)
        for (int sk : kSplitK) {
          if (!instance_listed(t.tiles[i], u)) continue;
          Config c;
          c.family = id;
          c.tile_m = t.tiles[i];
          c.warps_n = wl.n;
          c.warps_k = wl.k;
          c.unroll = u;
          c.split_k = sk;
          out.push_back(c);
        }
  return out;
}

Decomposition decompose(const Config& c, const Problem& p) {
  const FamilyDescriptor& f = family(c.family);
  Decomposition d;
  d.row_tiles = ceil_div(p.n, 16);
  d.row_blocks = ceil_div(d.row_tiles, std::max(1, c.warps_n));
  d.ctas = d.row_blocks * std::max(1, c.split_k);
  d.k_chunks = ceil_div(p.k, f.tiled ? f.tiled->chunk_k : 32);
  d.chunks_per_warp = ceil_div(d.k_chunks, std::max(1, c.warps_k * c.split_k));
  return d;
}

bool tiled_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not,
                      bool (*slices_fit)(const Config&, const Problem&, const Decomposition&, std::string*)) {
  if (p.m > c.tile_m)
    return fail(why_not, "M=" + std::to_string(p.m) + " exceeds the token tile " + std::to_string(c.tile_m));
  if (p.k == 0 || p.k % 8 != 0)
    return fail(why_not, "K=" + std::to_string(p.k) + " must be a positive multiple of 8 for 16-byte loads");
  // The kernel's byte counts along K are 32-bit (a stage's bytes left: (K - chunk) x 2).
  constexpr int64_t kMaxK = int64_t{1} << 29;
  if (p.k > kMaxK)
    return fail(why_not, "K=" + std::to_string(p.k) + " exceeds the stage ring's " + std::to_string(kMaxK) +
                             " (32-bit byte counts along K)");
  const Decomposition d = decompose(c, p);
  if (!slices_fit(c, p, d, why_not)) return false;
  if (d.row_blocks > 65535) return fail(why_not, "N=" + std::to_string(p.n) + " needs too many CTAs along N");
  if (family(c.family).smem_bytes(c, p) > dev.smem_per_block_optin)
    return fail(why_not, "needs more shared memory than the device allows per block");
  return true;
}

bool tiled_supports(const Config& c, const Problem& p, const DeviceInfo& dev, int alignment, std::string* why_not) {
  const FamilyDescriptor& f = family(c.family);
  if (dev.is_cpu) return fail(why_not, c.name() + " needs a GPU");
  if (dev.cc_major != 9 || dev.cc_minor != 0)
    return fail(why_not, "kernels are built for sm_90a; device is sm_" + std::to_string(dev.cc_major) +
                             std::to_string(dev.cc_minor));
  if (!f.device || !f.device->built(c)) return fail(why_not, c.name() + " is not built into this library");
  if (alignment < 16)
    return fail(why_not, "operands are " + std::to_string(alignment) +
                             "-byte aligned; 16-byte loads need 16 (pointers and row strides)");
  return f.fits_shape(c, p, dev, why_not);
}

}  // namespace skinnygemm
