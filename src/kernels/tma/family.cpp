// The tma family's descriptor (kernels/family.h): tma_m<tile>_r<rows>_b<boxes>_s<stages>_c<ctas>_u<units> (stream-K)
// or tma_m<tile>_r<rows>_b<boxes>_s<stages>_x<cluster> (cluster split-K; x1: one CTA per row tile) or ..._rs (the row
// stream, row_stream.cuh); its shape checks
// are tma_family.cpp's, its first-cut config first_cut.cpp's, its shared memory tma_shape.h's, its launch tma_launch.cu's.
#include <iterator>

#include "kernels/common/tiled.h"
#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_shape.h"
#include "runtime/config_names.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice tma_device;  // kernels/tma/device.cu
}
#endif

namespace {

// Token tiles, so that the tuner measures only the smallest tile holding M; K is walked in 64-wide boxes.
constexpr TiledTraits kTraits{kTmaTileM, std::size(kTmaTileM), tma::kStageK};

Config tma_parse(const std::string& name, const std::vector<std::string>& parts, Family id) {
  SKINNYGEMM_CHECK(parts.size() == 7 || parts.size() == 6,
                   "config '" << name << "': expected tma_m<tile>_r<rows>_b<boxes>_s<stages>_c<ctas per SM>_u<min units>"
                              << ", tma_m<tile>_r<rows>_b<boxes>_s<stages>_c<ctas per SM>_d<lead stages>"
                              << ", tma_m<tile>_r<rows>_b<boxes>_s<stages>_x<cluster>"
                              << " or tma_m<tile>_r<rows>_b<boxes>_s<stages>_rs, got " << parts.size() << " parts");
  Config c;
  c.family = id;
  auto field = [&](int i, const char* prefix, const char* what, const auto& list) {
    const int v = number_after(name, parts[i], prefix, what);
    SKINNYGEMM_CHECK(listed(list, v), "config '" << name << "': " << what << " " << prefix << v
                                                 << " is not built; expected one of " << join(list));
    return v;
  };
  c.tile_m = field(1, "m", "token tile", kTmaTileM);
  if (parts.size() == 6 && parts[5] == "rs") {  // the row stream: its own rows, 16 KB weight stages
    c.rows = field(2, "r", "rows per tile", kTmaRowStreamRows);
    c.boxes = number_after(name, parts[3], "b", "K boxes per stage");
    SKINNYGEMM_CHECK(c.boxes == tma::row_stream_boxes(c.rows),
                     "config '" << name << "': the row stream's stages are 16 KB of weights; " << c.rows
                                << " rows take b" << tma::row_stream_boxes(c.rows) << ", got b" << c.boxes);
    SKINNYGEMM_CHECK(c.tile_m <= 16, "config '" << name << "': the row stream is built for token tiles 8 and 16, got m"
                                                << c.tile_m);
    c.stages = field(4, "s", "ring stages", kTmaStages);
    c.row_stream = true, c.cluster = 1;
    return c;
  }
  c.rows = field(2, "r", "rows per tile", kTmaRows);
  c.boxes = field(3, "b", "K boxes per stage", kTmaBoxes);
  c.stages = field(4, "s", "ring stages", kTmaStages);
  if (parts.size() == 6) {
    c.cluster = field(5, "x", "cluster", kTmaCluster);
    return c;
  }
  c.ctas_per_sm = field(5, "c", "CTAs per SM", kTmaCtasPerSm);
  if (!parts[6].empty() && parts[6][0] == 'd') {
    c.lead = field(6, "d", "lead stages", kTmaLead);
    return c;
  }
  c.min_units = field(6, "u", "units per CTA", kTmaMinUnits);
  return c;
}

std::string tma_print(const Config& c) {
  std::string s = "tma_m" + std::to_string(c.tile_m) + "_r" + std::to_string(c.rows) + "_b" + std::to_string(c.boxes) +
                  "_s" + std::to_string(c.stages);
  if (c.row_stream) return s + "_rs";
  if (c.cluster >= 1) return s + "_x" + std::to_string(c.cluster);
  if (c.lead >= 0) return s + "_c" + std::to_string(c.ctas_per_sm) + "_d" + std::to_string(c.lead);
  return s + "_c" + std::to_string(c.ctas_per_sm) + "_u" + std::to_string(c.min_units);
}

// Rings of 40-110 KB: enough bytes in flight per CTA, and two CTAs (ours, or ours and the next kernel's) fit on one
// SM (tools/probes/tma_family.cu, docs/kernels.md "Session 6"). Stream-K and 8-CTA clusters only with 64- and
// 128-row tiles and rings of at most 8 (clusters 6) stages; 16- and 32-row tiles (many small stages) one CTA or a
// cluster of 2 or 4 per row tile.
std::vector<Config> tma_listed(Family id) {
  std::vector<Config> out;
  auto in_range = [](int smem, int max_bytes = 110 * 1024) { return smem >= 40 * 1024 && smem <= max_bytes; };
  for (int tile : kTmaTileM)
    for (int rows : kTmaRows)
      for (int boxes : kTmaBoxes)
        for (int stages : kTmaStages) {
          if (boxes > 2) continue;  // lab candidates for now (tma_instances.cuh): named, not listed
          Config cfg;
          cfg.family = id;
          cfg.tile_m = tile, cfg.rows = rows, cfg.boxes = boxes, cfg.stages = stages;
          const bool wide = rows >= 64, odd = stages == 5 || stages == 7;  // odd stage counts: the lead split only
          // Stream-K (cluster 0) with the others' sums of its owned tile (tma_shape.h): up to 113 KB, still two per SM.
          if (wide && stages <= 8 && !odd && in_range(tma_ring_bytes(rows, tile, stages, boxes, 0), 113 * 1024))
            for (int c : kTmaCtasPerSm)
              for (int u : kTmaMinUnits) {
                cfg.ctas_per_sm = c, cfg.min_units = u;
                out.push_back(cfg);
              }
          cfg.min_units = 0;
          // The lead split with 2 CTAs per SM (rings of up to 113 KB: 2 x (113 + 1) KB fit an H200 SM).
          if (rows >= 32 && stages >= 4 && stages <= 8 && in_range(tma_ring_bytes(rows, tile, stages, boxes, 1, true), 113 * 1024))
            for (int d : kTmaLead) {
              cfg.ctas_per_sm = 2, cfg.lead = d;
              out.push_back(cfg);
            }
          cfg.ctas_per_sm = 0, cfg.lead = -1;
          for (int x : kTmaCluster) {
            if (odd || (wide ? stages > 6 : x == 8)) continue;
            if (!in_range(tma_ring_bytes(rows, tile, stages, boxes, x))) continue;
            cfg.cluster = x;
            out.push_back(cfg);
          }
        }
  return out;
}

bool tma_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  return tma::fits(c, p, dev, why_not);
}

int64_t tma_smem_bytes(const Config& c, const Problem&) {
  if (c.row_stream) return tma::row_stream_smem_bytes(c.rows, c.tile_m, c.stages);
  return tma::smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.lead >= 0);
}

int tma_registers(const Config&) { return 0; }  // not modelled: the heuristic does not score this family

// Not scored by the heuristic yet: the streaming time plus the dependent-chain fixed cost and the split reduction
// measured at M <= 16 (~1.3 + ~2 us, tools/probes/tma_family.cu, docs/kernels.md).
CostBreakdown tma_estimate(const Config&, const Problem& p, const DeviceInfo&) {
  constexpr double kStreamBytesPerUs = 4.35e6;  // H200 streaming read, bytes/us (measured 4.3-4.4 TB/s)
  CostBreakdown b;
  b.stream_us = static_cast<double>(p.weight_bytes()) / kStreamBytesPerUs;
  b.us = b.stream_us + 3.3;
  b.wave_eff = b.inflight_eff = 1;
  return b;
}

Config tma_first_cut(const Problem& p, const DeviceInfo& dev) { return tma::first_cut_config(p, dev.sms); }

}  // namespace

extern const FamilyDescriptor tma_family{"tma", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                         tma_parse, tma_print, tma_listed, /*storable=*/nullptr,
                                         tiled_supports, tma_fits_shape, tma_smem_bytes, tma_registers,
                                         tma_estimate, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                         /*fitted_constants=*/nullptr, SKINNYGEMM_DEVICE_HALF(cuda::tma_device),
                                         tma_first_cut, tma::structural_pick};

}  // namespace skinnygemm
