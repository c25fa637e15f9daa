#include "kernels/tma/tma_family.h"

#include <climits>
#include <cstdio>
#include <string>

#include "kernels/family.h"  // fail
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::tma {


bool fits(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  if (c.row_stream) {
    if (!row_stream_built(c.rows, c.tile_m) || c.boxes != row_stream_boxes(c.rows))
      return fail(why_not, c.name() + ": the row stream is built for 8-, 16- and 32-row tiles of 16 KB stages at token "
                                      "tiles 8 and 16");
    if (p.m > c.tile_m)
      return fail(why_not, "M=" + std::to_string(p.m) + " exceeds the token tile " + std::to_string(c.tile_m));
    if (p.k == 0 || p.k % kStageK != 0)
      return fail(why_not, "K=" + std::to_string(p.k) + " must be a positive multiple of 64 for the row stream (its copies "
                                                        "are boxes of a [K / 64][rows][64] view)");
    if (p.n > INT_MAX / 2 || p.k > INT_MAX / 2)
      return fail(why_not, "N=" + std::to_string(p.n) + ", K=" + std::to_string(p.k) +
                               " exceed the copy engine's 32-bit coordinates");
    if (row_stream_smem_bytes(c.rows, c.tile_m, c.stages) > dev.smem_per_block_optin)
      return fail(why_not, c.name() + " needs more shared memory than the device allows per block");
    return true;
  }
  if (!boxes_built(c.rows, c.tile_m, c.boxes))
    return fail(why_not, c.name() + ": " + std::to_string(c.boxes) + " boxes per stage are built for " +
                             (max_rows_for_boxes(c.boxes) > 16 ? "16- and " : "") +
                             std::to_string(max_rows_for_boxes(c.boxes)) + "-row tiles at token tiles 8 and 16 only");
  if (p.m > c.tile_m)
    return fail(why_not, "M=" + std::to_string(p.m) + " exceeds the token tile " + std::to_string(c.tile_m));
  if (p.k == 0 || p.k % 8 != 0)
    return fail(why_not, "K=" + std::to_string(p.k) + " must be a positive multiple of 8 (16-byte copy-engine rows)");
  if (p.n > INT_MAX / 2 || p.k > INT_MAX / 2)
    return fail(why_not, "N=" + std::to_string(p.n) + ", K=" + std::to_string(p.k) +
                             " exceed the copy engine's 32-bit coordinates");
  if (c.cluster > 1 && cluster_grid_for(p.n, p.k, c.rows, c.boxes, c.cluster).k_stages < c.cluster)
    return fail(why_not, "K=" + std::to_string(p.k) + " has fewer stages of " + std::to_string(kStageK * c.boxes) +
                             " than the " + std::to_string(c.cluster) + " CTAs of " + c.name() + " splitting it");
  if (smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.lead >= 0) > dev.smem_per_block_optin)
    return fail(why_not, c.name() + " needs more shared memory than the device allows per block");
  // The launcher's workspace (tma_launch.cu), so that what supports() accepts also launches.
  if ((p.n + c.rows - 1) / c.rows > kMaxCounters)
    return fail(why_not, "N=" + std::to_string(p.n) + " needs " + std::to_string((p.n + c.rows - 1) / c.rows) +
                             " row tiles of " + std::to_string(c.rows) + "; the workspace holds " +
                             std::to_string(kMaxCounters));
  if (dev.sms > 0) {
    const Grid g = launch_grid(c, p, dev.sms);
    if (!partials_fit(g, c.rows, c.tile_m, c.cluster, c.lead >= 0, dev.sms))
      return fail(why_not, c.name() + ": " + std::to_string(g.ctas) + " CTAs exceed the partials workspace of " +
                               std::to_string(dev.sms) + " SMs");
  }
  return true;
}

Grid launch_grid(const Config& c, const Problem& p, int sms) {
  if (c.cluster >= 1) return cluster_grid_for(p.n, p.k, c.rows, c.boxes, c.cluster > 1 ? c.cluster : 1);
  if (c.lead >= 0) return lead_split_grid_for(p.n, p.k, c.rows, c.boxes, c.ctas_per_sm, c.lead, sms);
  return grid_for(p.n, p.k, c.rows, c.boxes, c.ctas_per_sm, c.min_units, sms);
}

namespace {

// The grid a config gives on p: {row tiles, CTAs per row tile, CTAs} and the split's name.
struct GridShape {
  long long tiles = 0, per_tile = 0, ctas = 0;
  long long units = 0;  // (row tile, K stage) units of the problem, walked by the ctas between them
  const char* split = "";
};

GridShape grid_shape(const Config& c, const Problem& p, int sms) {
  const Grid g = launch_grid(c, p, sms);
  GridShape s;
  s.tiles = g.tiles, s.ctas = g.ctas, s.units = g.units;
  if (c.cluster >= 1)
    s.per_tile = c.cluster, s.split = "cluster CTAs";
  else if (c.lead >= 0)
    s.per_tile = g.parts, s.split = "lead-split parts";
  else
    s.per_tile = 0, s.split = "stream-K";
  return s;
}

}  // namespace

bool structural_pick(const Problem& p, const DeviceInfo& dev, Config* pick, std::string* reason) {
  if (dev.is_cpu || dev.cc_major != 9 || dev.cc_minor != 0 || dev.sms <= 0) return false;
  if (p.m < 1 || p.n < 1 || p.k < 1) return false;  // empty problems launch nothing (no grid to divide)
  // Above 16 tokens only where y's rows are not 16-byte aligned (tma_family.h: cuBLASLt 1.8-4.9x slower there), or
  // where rule U (below) takes a cluster of eight at 17-32 tokens, rule X one at 33-48, or one_tile_eights one on a
  // single row tile at 17-64 (session 51).
  const int64_t y_row_bytes = p.y_stride() * static_cast<int64_t>(dtype_size(p.dtype));
  if (p.m > 64) return false;
  std::string note;
  const Config first = first_cut_config(p, dev.sms, -1, &note);
  const GridShape g = grid_shape(first, p, dev.sms);
  // Session 46 (rule U): aligned y rows at 17-32 tokens where the first cut is a cluster of eight per 64-row tile (two
  // boxes per stage) on half the SMs or more: the first cut, not the scored pick (cuBLASLt, or bulk at M = 24). First
  // cut / scored pick, us at M = 24 / 32: 1024 x 2560 4.50 / 4.77 against 6.20 / 6.23, 1024 x 3840 5.06 / 5.31 against
  // 6.90 / 7.52 (heuristic-twentysecond-d02342d.json), 1056 x 2560 0.75 / 0.80x (twentyfourth-2a9250d), 1728 x 5120
  // 0.94 / 0.98x (the same), 1408 x 2048 0.96 / 0.99x and 1024 x 12288 0.95 / 0.97x (twentyfifth-5d2561e), 1152 x 16384
  // 1.01 / 1.02x (twentythird-36a5aea); on the H100, blind, 640 x 2880 0.55-0.58x, 1368 x 4096 0.81-0.84x and 1792 x
  // 8192 0.89-0.90x (h100/heuristic-twentysixth-cb7656b.json). The one shape on fewer CTAs lost: 392 x 13000 (56
  // CTAs) 0.99 / 1.10x (twentyfirst-2720553). Clusters of four went both ways (4096 x 1440 1.74x, 3200 x 4096 0.83x)
  // and the 64-token tile's eights lost at 17 of 22 points (1.14-1.67x), so both keep the scored pick; so do eights of
  // one box per stage (rule eights_at_32_tokens, on nearly every slot): 2048 x 1368 / 1408 at M = 32 1.17-1.20x.
  // Session 47: below the CTA line the eights win where each CTA has few stages. H100, set twenty-seven: 512 x 3000 /
  // 4608 (64 CTAs of 3 / 5 stages, rounded up) took 0.39-0.42x bulk's time at M = 24-32; set twenty-eight (blind): 352
  // x 2048, 256 x 2048, 192 x 4096 (24-48 CTAs of 2-4 stages) 0.65-0.88x bulk's; H200, set twenty-eight (blind):
  // 0.59-0.70x cuBLASLt's default. With 12-13 stages there the GPUs disagree. On the H200, 448 x 12280 (56 CTAs of 12)
  // ran the cluster at 0.99 / 1.14x cuBLASLt's default at M = 24 / 32 (1.10 / 1.14x its best algorithm), and 392 x
  // 13000 (13) at 0.99 / 1.10x (twentyfirst-2720553). On the H100, 448 x 12280 ran 1.01 / 1.04x the default, but 328 x
  // 12288 (48 CTAs of 12) 0.77 / 0.94x, the best measured (h100/heuristic-twentyninth-ce87993.json). Issue 18 is judged
  // on the H200: under the CTA line at most 8 stages per CTA (nothing measured between 5 and 12 there; 9 since session 48,
  // below), and 3 row tiles (2 since session 48)
  // or more (192 x 4096 is the narrowest measured; one- and two-tile shapes keep the scored pick, as rule R's comment
  // below says of one tile). On the CTA line or over it, any number of stages (1280 x 12352, 160 CTAs of 13: 0.94-0.99x
  // cuBLASLt's default on both GPUs; h100/heuristic-twentyeighth-6dcfcef.json,
  // h200/heuristic-twentyeighth-f743a5d.json).
  // Session 48 (H100, blind sets thirty-one and thirty-two, written to straddle those two lines): 9 stages per CTA
  // and 2 row tiles as well. 320 x 8320 and 448 x 8200 (40 / 56 CTAs of 9 stages) ran the cluster 0.82-0.95x cuBLASLt's
  // answer at M = 24-32; 128 x 5112 and 128 x 7168 (2 tiles, 16 CTAs of 5 / 7) 0.72-0.90x the stage ring's
  // (h100/heuristic-thirtyfirst-5a758ee.json). One-tile shapes stay out of rule U (session 51's one_tile_eights below
  // takes them), and so do 10-11 stages (unmeasured) and 12 or more, which lost on the H200.
  const long long stages_per_cta = (g.units + g.ctas - 1) / g.ctas;  // rule U below and the narrow grids' line
  const bool wide_eights = p.m > 16 && p.m <= 32 && first.cluster == 8 && first.boxes == 2 &&
                           (2 * g.ctas >= dev.sms || (stages_per_cta <= 9 && g.tiles >= 2));
  // Session 49 (rule X): aligned y rows at 33-48 tokens where the first cut is a cluster of eight per 64-row tile (one
  // box per stage at the 64-token tile) on 2-18 row tiles (at most SMs + SMs / 8 CTAs) with 4-10 boxes of 64 per CTA:
  // the first cut, not cuBLASLt. First cut / cuBLASLt's pick at M = 48 (every report, offline): H200 192 x 4096
  // 0.87x, 256 x 2048 0.92x, 352 x 2048 0.84x, 1024 x 2560 0.99x, 1024 x 3840 0.93x, 1056 x 2560 0.77x, 1152 x 3584 0.85x
  // (h200/heuristic-twentyeighth-f743a5d.json and older); H100 21 points 0.79-1.04x, 17 faster (128 x 5112 0.85x,
  // 384 x 2560 0.81x, 640 x 2880 0.79x; slower: 512 x 4608, 704 / 768 x 2048, 1056 x 2560 by 1.5-3.6%;
  // h100/heuristic-*.json). At M = 64 the same points went 0.86-1.18x (H100 mean 1.02x: 1024 x 2560 1.18x, 704 /
  // 768 x 2048 1.18x), so the line is M <= 48; M = 33-47 is unmeasured. Outside the line cuBLASLt stays: 2-3 boxes per
  // CTA (512 x 1024 1.21x, 256 / 512 x 1536 1.04-1.08x), 12 or more (448 x 8192 1.16x, 448 x 12280 1.37x, 1024 x
  // 12288 1.23x), or more CTAs (1216 x 7168, 152 CTAs: 1.05-1.10x; 1408 x 2048, 176: 1.20-1.22x).
  const bool short_eights_at_48 = p.m > 32 && p.m <= 48 && first.cluster == 8 && first.boxes == 1 && g.tiles >= 2 &&
                                  g.ctas <= dev.sms + dev.sms / 8 && stages_per_cta >= 4 && stages_per_cta <= 10;
  // Session 51: one row tile in a cluster of eight at 17-64 tokens keeps the first cut, where rules U and X stop at two
  // tiles (aligned y rows) and the narrow grids' line below sends it to the scored heuristic (misaligned ones too).
  // First cut / pick (bulk at 17-32, cuBLASLt at 33-64), every one-tile shape measured at M = 24 / 32 / 48 / 64: H100
  // 64 x 4096 (Hunyuan-A13B's router, set thirty-four, blind) 0.67 / 0.75 / 0.85 / 0.91x, 60 x 5000 0.77 / 0.80 / 0.86 /
  // 0.94x, 63 x 9088 0.97 / 0.74 / 0.72 / 0.75x, 32 x 6144 0.82 / 0.87 / 1.00 / 1.08x; H200 63 x 9088 1.09 / 0.81 / 0.72
  // / 0.75x (h100/heuristic-thirtyfourth-fb21188.json, twentysixth-cb7656b, twentyfifth-cf3baed, thirtysecond-1f2776c;
  // h200/heuristic-twentyfifth-5d2561e.json): 17 of 20 points faster. Each CTA streams 4-9
  // stages of 128 there at 17-32 tokens, 8-18 of 64 at 33-64, so the rule takes 8-18 boxes of 64 per CTA (fewer lost
  // to cuBLASLt under rule X: 2-3 boxes per CTA 1.04-1.21x); and 32 rows or more (narrower tiles, N = 1-24, and longer
  // K were not measured with the cluster: sets one to twelve), more than 32 at 33-64 tokens (32 x 6144 at M = 64 was the
  // one point more than 3% behind cuBLASLt). M = 17-23 and 33-47 unmeasured.
  const int64_t boxes_per_cta = stages_per_cta * first.boxes;
  const bool one_tile_eights = p.m > 16 && first.cluster == 8 && g.tiles == 1 && (p.m <= 32 ? p.n >= 32 : p.n > 32) &&
                               boxes_per_cta >= 8 && boxes_per_cta <= 18;
  if (p.m > 16 && y_row_bytes % 16 == 0 && !wide_eights && !short_eights_at_48 && !one_tile_eights) return false;
  // A grid on fewer than a quarter of the SMs streams at one ring per CTA; the scored families split such narrow rows
  // over more CTAs (144 x 7168 at M = 1: the stage ring 3.03 us, the best of 213 tma configs 4.11 on 24 CTAs; 16 x 6144
  // at M = 4: 2.38 vs 3.82; tune at 9d9b7ef), also in the whole step (the step search kept the stage ring for 144 x
  // 7168 at 717be70). Under 1 MiB the fixed cost decides and the family's is lower (1536 x 128: 1.43 vs 1.93), but only
  // while each CTA's share of K fits its ring: a CTA with more stages than ring slots waits on refills, a dependent
  // chain of ~0.3 us per stage. On one 64-row tile the cluster of 8 measured 2.68 us with 3 stages per CTA (32 x 2880,
  // M = 1), 4.30 with 8 (1 x 8192) and 6.71 with 16 (24 x 16384; held-out set seven at 0eaaa80 and bf0345d), where the
  // stage ring's split-K took 2.15-2.68 us on one-tile shapes with 6-8 stages per cluster CTA (8 x 6144 and 16 x 6144
  // at M <= 4, 48 x 8192 at M <= 2; sets two to four), and on 16 x 6144 at M = 4 every tma config measured lost to the
  // stage ring's 2.38 (heuristic-train-fourth-9d9b7ef.json).
  // Session 42 (rule R): not above 16 tokens (misaligned y rows only, see above) on two or more row tiles with at most
  // 256 KiB of weights per CTA. There the first cut's cluster of eight took 0.60-0.81x the scored pick's time on the
  // three such shapes of held-out set twenty-four (H200, 2a9250d: 150 x 3488 / 3504 at M = 24-64 3.77-5.77 us against
  // bulk 4.82-4.89 and cuBLASLt 8.15-8.32; 255 x 15992, 249 KiB per CTA, 8.70-12.89 against bulk 12.66-14.89 and
  // cuBLASLt 19.44-20.54), where up to M = 8 the scored bulk family is 0.58-0.90x the cluster's and at M = 12-16 the
  // two are within 14% either way. On an H100 the same pick was the best measured at 17 of 20 points of five older
  // shapes (250-253 x 4096-16384, 100 x 5128) and 1.1-2.4x faster than cuBLASLt (docs/tuning.md "Session 42").
  // Unmeasured: M = 17-23, more than 256 KiB per CTA, and one-tile shapes, which keep the exclusion at M <= 16 (the
  // cluster's CTAs outrun their ring there: above) and above 16 tokens take session 51's one_tile_eights.
  const bool narrow_wide_tokens =
      p.m > 16 && g.tiles >= 2 && p.weight_bytes() <= g.ctas * (int64_t{256} << 10);
  // Session 49 (rule Z): at 9-16 tokens, narrow clusters of eight on 3 or more row tiles whose CTAs' shares of K fit
  // their ring keep the first cut over 1 MiB as well. First cut / bulk's pick at M = 12 / 16: H200 150 x 3504 0.91 /
  // 0.88x, 192 x 4096 0.90 / 0.86x, 256 x 2048 0.90 / 0.87x (h200/heuristic-twentyeighth-f743a5d.json,
  // twentyfourth-2a9250d); H100 the same three 0.85-0.93x (h100/heuristic-*.json). At M <= 8 the same clusters ran
  // 0.995-1.28x bulk's time (all but 256 x 2048 at M = 8 on the H100 slower), so the exclusion stays there. The ring
  // line rests on one H200 shape: 255 x 15992 (16 stages of a 4-stage ring) 1.02-1.07x on the H200 but 0.90-0.99x on
  // the H100; on the H100 128 x 7168 (2 tiles, 7 stages) 1.12-1.15x and 136 x 5112 (3 tiles, 5 stages) 0.95-0.97x,
  // which the line leaves out unmeasured either way.
  const bool narrow_ring_fits_16 =
      p.m > 8 && p.m <= 16 && first.cluster == 8 && g.tiles >= 3 && stages_per_cta <= first.stages;
  if (g.ctas < dev.sms / 4 && !narrow_wide_tokens && !narrow_ring_fits_16 && !one_tile_eights &&
      (p.weight_bytes() >= (int64_t{1} << 20) || stages_per_cta > first.stages))
    return false;
  char text[256];
  // Session 34 (rule B): K not a multiple of 64 on 16-byte aligned y rows, where the first cut splits K without a
  // cluster (the lead split or stream-K): cuBLASLt's default at M >= 9, and from M = 2 where no cluster fits (more
  // 64-row tiles than SMs: one CTA per row tile, or stream-K). There the launcher copies every 64-wide box of a stage
  // on its own (the one-copy 3D view needs K % 64 == 0: tma_launch.cu) and x's rows, 2K bytes apart, are not 128-byte
  // aligned. On the wide such shapes the family's best time at M = 2 sat 10-20% above its M = 1 time (12000 x 2056
  // 13.68 -> 14.98 us, 12345 x 2056 14.47 -> 17.37, 40000 x 1096 24.54 -> 27.47), against 0-7% on wide shapes with
  // K % 64 == 0. Measured (first cut / cuBLASLt's
  // default, us): one CTA per row tile, 12000 x 2056 at M = 2-16 16.54-23.55 / 15.51-15.85 (heuristic-nineteenth-
  // d6706fb.json) and 40000 x 1096 28.17-30.86 / 25.39-28.61 (twentieth-e5e10d2); stream-K, 70000 x 2000 at M = 2-16
  // 73.93-77.56 / 73.22-75.65 (twentieth: cuBLASLt 0.6-2.8% ahead at 5 of 7 Ms, 0.5-0.8% behind at M = 5 and 8); lead
  // splits with parts at M = 12 / 16, 5120 x 1712 8.38 / 8.30 against 7.27 / 7.27 (tenth-2eaefeb), 5120 x 3424 11.97 /
  // 11.86 against 11.28 / 11.31 (twelfth-c942f9d), 5128 x 3000 13.22 / 13.17 against 10.87 / 11.00 (twentieth), while
  // up to M = 8 those splits beat cuBLASLt by 4-19% and stay. The counter-example the rule takes with it: 5128 x 8200
  // (parts of 20+ stages on a 5-stage ring) 25.06 / 25.48 against 25.85 / 25.66 at M = 12 / 16. Clusters keep the
  // family (2048 x 2736: 0.76-0.77x cuBLASLt at M = 12-16; 1000 x 15000 0.96-0.97x). At M = 1 the first cut stays
  // everywhere (12000 x 2056 13.94 against 15.71; 40000 x 1096 26.92 against 28.47). Misaligned y rows keep the family:
  // cuBLASLt runs several times slower there (12345 x 2056: 44.7-65.0 us at M = 4-16 against 17.2-20.9).
  const bool no_cluster_fits = (p.n + 63) / 64 > dev.sms;  // two CTAs per 64-row tile exceed the two-per-SM slots
  // K % 8 != 0 is not this rule's: the family cannot run it at all, and the scored heuristic decides (as before).
  // K > 1024: the rule's shapes all have K >= 1096; below, a stage is one or a few boxes and nothing was measured (the
  // family's fixed cost wins on small shapes, 1536 x 128 above; the review of session 34).
  if (p.k % kStageK != 0 && p.k % 8 == 0 && p.k > 1024 && y_row_bytes % 16 == 0 && first.cluster == 0 && p.m >= 2 &&
      (p.m > 8 || no_cluster_fits)) {
    const Config lt = Config::parse("cublaslt");
    std::snprintf(text, sizeof text, "cuBLASLt, not the tma first cut %s (%lld row tiles of %d, %s): K = %lld is not a "
                  "multiple of 64 (each box copied alone, x's rows not 128-byte aligned), M = %lld (session 34)",
                  first.name().c_str(), g.tiles, first.rows, g.per_tile > 1 ? "lead-split parts" :
                  g.per_tile == 1 ? "one CTA per row tile" : "stream-K", static_cast<long long>(p.k),
                  static_cast<long long>(p.m));
    *pick = lt;
    *reason = text;
    return true;
  }
  // Session 38 (rule L): the 64-row lead split in three parts per tile (67-88 tiles on H200) with K of 1536-3456, a
  // multiple of 64, at the 16-token tile: cuBLASLt's default. Three parts of 16-token partials per 64 rows meet in the
  // reduction where each part streams only 9-18 stages. Measured at M = 12 / 16 (first cut / cuBLASLt's default, us):
  // 5120 x 1728 8.37 / 7.16 and 8.37 / 7.22, 5504 x 2048 8.93 / 8.22, 5120 x 2176 / 2240 0.89-0.94x, 4864 x 2560 9.33 /
  // 8.75 and 9.54 / 8.84, 4608 x 3072 0.94x, 4320 x 3200 10.52 / 9.54 and 10.72 / 9.44, 4800 x 3200 0.94-0.95x, 5120 x
  // 3456 0.97x (held-out sets eight to twenty-two; set twenty-two's 4320 / 4800 x 3200 and 4864 x 2560 were 8 of its 9
  // points more than 3% behind cuBLASLt). Two parts per tile keep the split (90-128 tiles: 5760 x 2880, 6144 x 2048,
  // 6656 x 2240, 6912 / 7168 x 2560, 8192 x 2752-3072: cuBLASLt's default took 1.07-1.14x the split's time), and so
  // does K over 3456, where three parts went both ways (5504 x 4096 and 4544 x 4544 1.03-1.10x for the split; 5632 x
  // 4608 0.92x, 4608 x 4608 1.10 / 0.93x at M = 12 / 16). K from 1536: the early sets' 5120 x 1536 (cuBLASLt the best
  // measured at M = 16, the split untimed) is the shortest K seen. M = 9-11 and 13-15 unmeasured.
  if (first.lead >= 0 && first.rows == 64 && g.per_tile == 3 && p.m > 8 && p.k % kStageK == 0 && p.k >= 1536 &&
      p.k <= 3456 && y_row_bytes % 16 == 0) {
    std::snprintf(text, sizeof text, "cuBLASLt, not the tma first cut %s: %lld row tiles of 64 x %lld lead-split "
                  "parts with K = %lld <= 3456 at M = %lld reduce three 16-token partials of short parts (session 38)",
                  first.name().c_str(), g.tiles, g.per_tile, static_cast<long long>(p.k), static_cast<long long>(p.m));
    *pick = Config::parse("cublaslt");
    *reason = text;
    return true;
  }
  *pick = first;
  const double kib_per_cta = static_cast<double>(p.weight_bytes()) / static_cast<double>(g.ctas) / 1024.0;
  if (g.per_tile > 0)
    std::snprintf(text, sizeof text, "tma structural pick %s: %lld row tiles of %d x %lld %s = %lld CTAs on %d "
                  "two-per-SM slots, %.0f KiB of weights per CTA", pick->name().c_str(), g.tiles, pick->rows,
                  g.per_tile, g.split, g.ctas, 2 * dev.sms, kib_per_cta);
  else
    std::snprintf(text, sizeof text, "tma structural pick %s: %lld row tiles of %d, %s over %lld CTAs on %d "
                  "two-per-SM slots, %.0f KiB of weights per CTA", pick->name().c_str(), g.tiles, pick->rows, g.split,
                  g.ctas, 2 * dev.sms, kib_per_cta);
  *reason = text;
  if (!note.empty()) *reason += "; " + note;
  if (wide_eights && y_row_bytes % 16 == 0)
    *reason += "; a cluster of eight per tile on half the SMs or more, or of at most 9 stages per CTA, at 17-32 "
               "tokens (sessions 46-48)";
  else if (short_eights_at_48 && y_row_bytes % 16 == 0)
    *reason += "; a cluster of eight per tile on 2-18 tiles with 4-10 boxes of 64 per CTA at 33-48 tokens (session 49)";
  else if (one_tile_eights && y_row_bytes % 16 == 0)
    *reason += "; a cluster of eight on one row tile at 17-64 tokens (session 51)";
  if (narrow_ring_fits_16 && g.ctas < dev.sms / 4)
    *reason += "; a narrow cluster of eight on 3 or more tiles whose shares fit the ring at 9-16 tokens (session 49)";
  else if (p.m > 16 && y_row_bytes % 16 != 0)
    *reason += "; y's rows of " + std::to_string(y_row_bytes) +
               " bytes are not 16-byte aligned, where cuBLASLt runs several times slower";
  return true;
}

}  // namespace skinnygemm::tma
