// The TMA family's first cut (tma_family.h: first_cut_config): the structural rules, each with the measurements it was
// drawn from. Host-only.
#include <cstdint>
#include <string>

#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::tma {

namespace {

// 128 MiB of weights: the line between the bands where clusters and rule 4's one-CTA tiles are tried and those of
// stream-K and the lead split's large-shape rules (session 17).
bool at_least_128_mib(const Problem& p) { return p.weight_bytes() >= (int64_t{128} << 20); }

// The first cut under construction: the problem, the device's SMs, the step's lead knob (-1: the default), the
// caller's note and the config so far (the family, its token tile, 64-row tiles).
struct Cut {
  const Problem& p;
  int sms;
  int slots;  // two CTAs per SM
  int lead;
  std::string* note;
  Config c;

  // The lead split of 64-row tiles (tma_family.h: judged in the step), or of 32-row tiles where K is short and the
  // 64-row split would leave its other parts a single stage each (5128 x 1024 M = 1: 64 rows in 3 parts 4.66 us,
  // 32 rows in 1 part with 6 stages 4.02; held-out set six at 516a0f1) or no cluster fits (9728 x 896: 304 row tiles
  // of 32, more than two per SM, so a 4-stage ring that fits five: 5.53-5.79 us at M <= 8 and 6.33 at M = 16, 6
  // stages 5.98-6.24 and 8.83; 4eaa78f).
  Config lead_split(bool short_rows, bool many_tiles) {
    c.cluster = 0, c.ctas_per_sm = 2, c.lead = lead < 0 ? 6 : lead, c.boxes = 2;
    c.rows = short_rows ? 32 : 64;
    c.stages = short_rows && !many_tiles ? 6 : 4;
    return c;
  }
  // One CTA per 64-row tile over the whole K, one 64-wide box per stage, three CTAs per SM (so grids of up to three
  // tiles per SM are resident at once): rules K, S and W.
  // Session 51: on the deepest ring that keeps three per SM (a third of Hopper's 228 KiB of shared memory per SM less the
  // driver's 1 KiB per CTA; the structural pick runs on SM 9.0 only): 7 stages at the 8-token tile (70 KB), 6 at 16, 5
  // at 32, where it was 4 (44-61 KB). Deeper / 4 stages, offline over every report where both were timed (K <= 2560,
  // these rules' bands): 8 tokens, 7 stages H200 90 of 114 points faster, summed 1884.7 -> 1848.3 us, H100 141 of 176,
  // 4117.5 -> 4074.6 (16897 x 832 0.94x, 20000 x 1536 0.95x, 21749 x 960 / 1024 0.96-0.97x, 20999 x 640 0.91-0.92x on
  // the H100's blind set thirty-four); 8 stages, which no longer fit three, lost at every point (+20% / +10% summed). 16
  // tokens, 6 stages H200 35 of 38 faster and none slower (652.2 -> 640.9), H100 50 of 59 (1423.8 -> 1406.1); 7 lost at
  // every point (+23% / +12%). 32 tokens, 5 stages H200 26 of 26 (407.3 -> 401.8), H100 33 of 34 (746.9 -> 735.3); 6
  // lost at every point.
  Config one_box_tiles() {
    lead_split(false, true);
    c.boxes = 1, c.stages = 4;
    constexpr int kThirdOfSm90 = 228 * 1024 / 3 - kReservedSmemPerCta;  // sm_90's 228 KiB of shared memory per SM
    while (c.stages < 8 && smem_bytes(c.rows, c.tile_m, c.stages + 1, c.boxes, c.cluster, c.lead >= 0) <= kThirdOfSm90)
      ++c.stages;
    return c;
  }
  // Session 48: the same one-box tiles on a 5-stage ring where K is 512-768 (8-12 boxes of 64) and the 64-row tiles give
  // 5 per SM or more (rule 4's band at M = 3-16, rule H's at 32 tokens), instead of two boxes per stage on 4. Summed
  // over every point where both were timed (M = 1-16): H200 489.2 us against 524.5 (24 points; within 5% of the best 0
  // -> 14), H100 933.9 against 971.9 (40; 20 -> 37), on 49152 x 576, 50257 / 51865 x 768 and 51865 / 58101 x 512
  // (h200/heuristic-twentyeighth-f743a5d.json, h100/heuristic-twentyeighth-6dcfcef.json to thirtieth-e426124); 4 and
  // 6 stages summed 502.0 / 486.1 and 940.8 / 955.5. At M = 24 / 32: H200 137.9 against 158.2 (6 points), H100 210.7
  // against 227.1 (8). (The sums include 58101 x 512, which the 128-row tiles below take.) 5 stages, not 6: the H100
  // summed 6 stages 2.3% slower, the H200 0.6% faster. From K = 832 to 2048 the two-box ring stays: one box on 4-6
  // stages summed 1.5-5.6% more on the H200 (1315.6-1337.8 against 1282.5 us at K 832-1024, 917.5-960.4 against 909.6
  // at 1088-2048). From K = 512: Whisper-tiny's 51865 x 384 (6 boxes) ran this ring 1.08-1.19x the two-box one at M =
  // 1-16 on the H100 (h100/heuristic-thirtyfirst-5a758ee.json; 128-row tiles on a 5-stage ring were 0.76-0.81x, one
  // shape). Under 128 MiB, where its data is (rule H's band has no size line of its own). From 5 tiles per SM: every
  // shape above had 768-908 tiles of 64, and set thirty-two's 26003 x 768 (407 tiles, written to straddle the K line,
  // blind) ran it 1.20-1.23x the best at M = 1-3 and 1.05-1.19x at 4-16, where two boxes on 5 stages were the best
  // measured and the two-box 4-stage ring it now keeps 1.03-1.07x (H100, h100/heuristic-thirtysecond-1f2776c.json).
  // Between 407 and 768 tiles nothing was measured.
  static bool short_k_one_box(const Problem& p, int sms) {
    return p.k >= 512 && p.k <= 768 && p.k % kStageK == 0 && !at_least_128_mib(p) &&
           (p.n + 63) / 64 >= 5 * int64_t{sms};
  }
  // Session 48: 128-row tiles of one box per stage (4-stage ring, one CTA per tile) in the same bands, where those
  // tiles fill their waves of two per SM to 85% or more, with K <= 2048 under 128 MiB. They fit two per SM as the
  // 64-row two-box tiles do, with the same 64 KB in flight per CTA: half the CTAs, each twice as long, so only the
  // waves differ. r128 / pick at M = 1-16 (H200): 58101 x 512 (454 tiles, 0.86 of two waves) 0.78-0.90x, 33337 x 1000
  // / 1024 (261, 0.99) 0.84-1.01x / 0.94-0.97x, 32768 x 1024 0.94-0.96x, 32000 / 32064 x 2048 (0.95) 0.96-0.97x,
  // 64002 / 65534 x 1024 0.98-1.00x; at 24-32 0.83-0.99x (h200/heuristic-twentyeighth-f743a5d.json and older
  // reports). Offline over every report: 72 H200 points timed both ways, 70 faster (slower: 33337 x 1000 M = 1 +0.9%,
  // 64002 x 1024 M = 1 +0.2%), summed 1867.1 -> 1775.5 us; 40 H100 points, 34 faster (33337 x 1000, K % 64 = 40, up
  // to +6.6% at M = 1). Under the line r128 lost wherever the 64-row tiles fill their waves better: 49155 / 50257 /
  // 50265 x 768-1536 (0.73-0.74 of two waves of 128 rows, 0.97-0.99 of 64) 1.01-1.07x on both GPUs; at 0.75-0.77
  // (25600 x 2048, 25933 x 1280, 51865 x 512-1280) it went both ways. Nothing measured between 0.77 and 0.86.
  static bool full_waves_of_128(const Problem& p, int slots) {
    const int64_t tiles = (p.n + 127) / 128, waves = (tiles + slots - 1) / slots;
    return p.k <= 2048 && 100 * tiles >= 85 * waves * slots && !at_least_128_mib(p);
  }
  Config wide_tiles_of(const Problem& p) {
    lead_split(false, true);
    if (full_waves_of_128(p, slots)) {
      c.rows = 128, c.boxes = 1, c.stages = 4;
      if (note) *note = "one CTA per 128-row tile of one box per stage, where those tiles fill their waves of two per "
                        "SM to 85% or more with K <= 2048 (session 48)";
    } else if (short_k_one_box(p, sms)) {
      c.boxes = 1, c.stages = 5;
      if (note) *note = "one CTA per 64-row tile of one box per stage on a 5-stage ring, where those tiles give 1.5x "
                        "the slots or more with K 512-768, 5 or more per SM (session 48)";
    }
    return c;
  }
};

// Session 41 (rule O): K over 1024 and not a multiple of 64 at M >= 2, where one CTA per 32-row tile lost to stream-K
// (rule E and the 32-row tiles of medium K in unclustered_short). There each stage's boxes are copied one by one and
// x's rows, 2K bytes apart, are not 128-byte aligned (rule B's reading, tma_family.cpp); the 32-row tiles copy x's
// tokens twice as often per weight byte as stream-K's 64-row tiles. Stream-K / one CTA per 32-row tile, us (y's rows
// not 16-byte aligned, where the family is the pick; aligned ones take rule B's cuBLASLt from M = 2): 11003 x 3080 (344
// tiles of 32, rule E) at M = 2-16 19.40-24.20 / 23.46-28.89, 0.79-0.84x (heuristic-twentythird-36a5aea.json, blind);
// 12345 x 2056 (386 tiles, medium K) 0.87-0.96x at M = 2, 4-16 and 1.01x at M = 3 (twelfth-c942f9d). Offline over every
// report: 14 points change, 13 faster and 1 slower (12345 x 2056 M = 3, 0.7%), 319.4 -> 276.2 us, within 5% 0 -> 13.
// M = 1 keeps the 32-row tiles: 12345 x 2056 1.09x and 12000 x 2056 1.02x for stream-K (twelfth, nineteenth-d6706fb;
// 11003 x 3080 0.97x). Measured at K = 2056 and 3080 only: K <= 1024 is left as it was, and K above 3080 (rule E's
// band reaches 12288) takes the rule unmeasured.
bool misaligned_k_rows(const Problem& p) { return p.k > 1024 && p.k % kStageK != 0 && p.m >= 2; }

// The shortest K at which rules S, W and K take the one-box 64-row tiles (sessions 46, 47). Session 47: 960, from the
// H100's blind set twenty-seven, where K = 960 missed at every M as K = 1024 did before session 46: one-box tile /
// pick at M = 1-16, 19001 x 960 (297 tiles, rules S and W) 13.16-13.91 us against 14.58-16.01 (32-row lead split),
// 0.87-0.91x, at M = 24-32 14.11-14.53 against 17.90-18.19 (stream-K); 24001 x 960 (376 tiles, rule K) 15.67-16.75
// against 16.50-18.18, 0.92-0.95x, 16.92-17.00 against 21.50-22.00 (h100/heuristic-twentyseventh-3cc07e6.json). Then
// 832, from the H100's blind sets twenty-eight and twenty-nine (both written before this line moved): 16897 x 832 (265
// tiles) one-box tile 11.15-11.71 us against 12.76-13.91 at M = 3-16 and 11.87 / 12.18 against 14.64 / 15.22 at M = 24
// / 32 (h100/heuristic-twentyeighth-6dcfcef.json), 20347 / 24331 x 896 (318 / 381 tiles) 0.91-0.96x at M = 3-16 and
// 0.73-0.78x at 24-32 (twentyninth-ce87993). Session 48: 768, from the H100's blind set thirty (written before the
// line moved): one-box tile / pick at M = 1-16, 18627 x 768 (292 tiles, rule S's band) 10.74-11.51 us against
// 11.43-12.52 (32-row lead split), 24707 x 768 and 25136 x 768 (387 / 393 tiles, rule K's) 0.90-0.97x; at M = 24 / 32
// 11.73-14.24 against 14.47-19.14 (stream-K), 0.74-0.81x (h100/heuristic-thirtieth-e426124.json). Then 704, from the
// H100's blind set thirty-two (written to straddle 768): 24571 x 704 (384 tiles, rule K's band) one-box tile 0.87-0.90x
// the 32-row lead split at M = 1-16 and 0.72-0.75x stream-K at 24-32 (h100/heuristic-thirtysecond-1f2776c.json). Session
// 49: 640, from the H100's blind set thirty-three (written to straddle 704): 19197 x 640 (300 tiles, rule S's band)
// one-box tile 0.89-0.94x the 32-row lead split at M = 1-16 and 0.80-0.82x stream-K at 24-32
// (h100/heuristic-thirtythird-57e0253.json). Session 51: 576, from the H100's blind set thirty-four (written to
// straddle 640): 20999 x 576 (329 tiles, rule S's band) one-box tile (4 stages) 0.85-0.90x the 32-row lead split at M
// = 3-16 and 0.65-0.68x stream-K at 24-32, within 2% of stream-K at M = 1-2 (h100/heuristic-thirtyfourth-fb21188.json).
// At every K line so far the outside won as well; under 576 nothing was measured in these bands.
constexpr int64_t kOneBoxMinK = 576;

// Rule 6's short-K band at 32 tokens (unclustered): from K = 704 (session 48's kOneBoxMinK; under it nothing was
// measured with one CTA per tile on 1-2 tiles per SM) to 1664 (session 49).
constexpr int64_t kRuleSixMinK = 704, kRuleSixMaxK = 1664;

// Rule S's band (sessions 42, 45-51): 64-row tiles 2 to 2.7 per SM (more than the two-per-SM slots) with K 576-2560, a
// multiple of 64, where rule K's one-box tiles (three CTAs per SM) are all resident. Rule S takes it at token tiles up
// to 16, rule W at 32.
bool rule_s_band(const Problem& p, int sms) {
  const int64_t tiles64 = (p.n + 63) / 64;
  return tiles64 > 2 * int64_t{sms} && 10 * tiles64 < 27 * int64_t{sms} && p.k >= kOneBoxMinK && p.k <= 2560 &&
         p.k % kStageK == 0;
}

// Under 128 MiB, where clusters of x CTAs per 64-row tile fit (the largest of 8, 4 and 2 that does, g the grid of
// whole tiles): the cluster, or what a rule of its band takes instead. Each rule below either decides (true: the
// config is in c) or leaves it to the rules after it, in the order clustered() calls them.
struct ClusterBand {
  Cut& cut;
  const Problem& p;
  Config& c;
  const int sms, slots, lead;
  std::string* note;
  const int x;         // CTAs per cluster
  const Grid& g;       // the grid of whole 64-row tiles
  const int64_t ctas;  // tiles x x
  const bool short_k;  // at most 32 boxes of 64

  // Each CTA's share of K in stages of 128 (two boxes), a partial one counted: the long fours' and rule M's lines.
  int64_t stages_of_128_per_cta() const { return ((p.k + 127) / 128 + x - 1) / x; }

  bool few_ctas_of_large_shares();
  bool halved_clusters();
  void cluster_ring();
  bool fours_with_long_ranges();
  bool one_cta_per_tile_at_32_64_tokens();
  bool one_cta_per_tile_for_short_fours();
  void eights_at_32_tokens();
  bool fours_past_the_sms();
  void twos_as_lead_split();
};

bool ClusterBand::few_ctas_of_large_shares() {
  // Clusters on fewer CTAs than SMs with more than 192 KiB of weights each stream at one ring per SM; stream-K
  // over two CTAs per SM is faster (1000 x 16384: 128 CTAs of 256 KiB 13.1 us, stream-K 11.3).
  // Only where stream-K gives each row tile at most 32 CTAs: on one tile (60 x 16384) its 128 CTAs' partials
  // all go to one reducer, 5.3-23.8 us at M = 1-16 against 4.6-6.9 for the best tma config measured (held-out set
  // ten at 2eaefeb); with the cluster kept, the grid is narrow and the scored families decide (104 x 16384 on
  // the stage ring: 2.9-4.3 us at M = 1-16, sets one and two).
  // Session 33: stream-K here only at the 64-token tile. The measurements above ran with the old maps' 256-byte L2
  // promotion (set six: 1000 x 16384 in clusters of 8 12.79-13.28 us at M = 1-4 in 516a0f1's run, stream-K
  // 11.39-12.69 in 4eaa78f's, level at M = 5-8, 13.83-13.90 against 14.70-14.75 at 12-16). Under the new maps
  // (session 31) the cluster of 8 beat stream-K at every measured point up to 32 tokens on 1002 x 16384 (16 tiles
  // of 64, 16 stages per CTA; held-out set eighteen, heuristic-eighteenth-eeae1f9.json): 11.96-12.33 us against
  // 12.48-13.47 at M = 1-5, 12.09-12.34 against 13.07-14.47 at M = 8-16, 13.56 / 13.94 against 18.70 / 19.36 at
  // M = 24 / 32. This band holds 9-16 row tiles of 64 with K over 12288 only; the 64-token tile's cluster (one box
  // per stage) was not measured there, so it keeps stream-K.
  if (ctas < sms && p.weight_bytes() / ctas > 192 * 1024 && 32 * int64_t{g.tiles} >= slots) {
    // Session 35 (rule I): at the 64-token tile stream-K at one CTA per SM as well, not two: 589 x 16120 at M = 48
    // / 64 20.99 / 24.65 us against 25.94 / 31.59 (heuristic-twentyfirst-2720553.json), 1002 x 16384 20.11 / 22.60
    // against 23.60 / 27.44 (eighteenth-eeae1f9); y's rows not 16-byte aligned on both, where the first cut is the
    // pick up to M = 64. K outside 13000-16384 (the band reaches K = 32768 near 1000 rows) was not measured.
    if (c.tile_m == 64) {
      c.cluster = 0, c.boxes = 2, c.stages = 3, c.ctas_per_sm = 1, c.min_units = 1;
      if (note) *note = "stream-K at one CTA per SM at the 64-token tile on fewer cluster CTAs than SMs of > 192 KiB "
                        "each (session 35)";
      return true;
    }
    // Session 34 (rule A): at M <= 2 in this band, stream-K at one CTA per SM (one share of the tiles' stages per
    // SM, 132 CTAs on H200 where the clusters launch 72-128) instead. On all three shapes of the band measured with
    // it, blind each time, stream-K at one CTA per SM (min units 1, 2 or 8: the same grid, within 0.3%) was the
    // fastest tma config at M = 1-2 (c1_u1 / cluster of 8, us): 1002 x 16384 10.74 / 11.96 and 11.18 / 12.15
    // (heuristic-eighteenth-eeae1f9.json), 1024 x 16384 10.87 / 12.16 and 11.29 / 12.11 (nineteenth-d6706fb),
    // 1000 x 15000 10.92 / 11.97 and 11.27 / 12.16 (twentieth-e5e10d2): 0.89-0.93x. Its times grow with M where
    // the cluster's do not (1002 x 16384: 10.74 / 11.59 / 12.19 at M = 1 / 4 / 8, the cluster 11.96 / 12.07 /
    // 12.09): at M = 3-4 they split (3-4% ahead on 1002 and 1024 x 16384, 2-5% behind on 1000 x 15000: 12.52 /
    // 12.73 against 12.29 / 12.11), from M = 5 the cluster won on all three. Stream-K at two CTAs per SM, the pick
    // before session 33, stays out (12.48 / 13.47 at M = 1 / 2 on 1002 x 16384).
    // Only where each row tile gathers at most about nine shares (15 or more tiles on H200): on 589 x 16120 (10
    // tiles, 13 shares each) the cluster of 8 was 13% / 22% faster at M = 1 / 2 (8.69 / 8.73 us against 9.84 /
    // 10.65, heuristic-twentyfirst-2720553.json; session 35).
    if (p.m <= 2 && 9 * int64_t{g.tiles} >= sms) {
      c.cluster = 0, c.stages = 4, c.ctas_per_sm = 1, c.min_units = 1;
      if (note) *note = "stream-K at one CTA per SM, not a cluster of 8, at M <= 2 on fewer cluster CTAs than SMs "
                        "of > 192 KiB each (session 34)";
      return true;
    }
    if (note) *note = "a cluster of 8 per tile, not stream-K, on fewer CTAs than SMs of > 192 KiB each (set eighteen)";
  }
  return false;
}

bool ClusterBand::halved_clusters() {
  // A cluster that puts two CTAs of at most 2 stages on more than a quarter of the SMs: clusters of half the size
  // instead, half the CTAs, each with its whole range (at most 4 stages) in a 4-stage ring. 4000 x 1000 and 4104 x
  // 1024 (8 stages; 252 CTAs in fours with 3 stages, 4.35-4.97 us at M <= 8) ran 3.41-4.06 in twos with 4, and the
  // twos with 3 stages 4.02-4.88 (held-out set ten at 2eaefeb). Set eleven (e2c09d8, blind) showed the same with
  // fewer CTAs: 3072 x 1024 (192 CTAs in fours) 4.18-4.45 us at M <= 4 against 3.64-3.88 in twos, 1536 x 2048 (192
  // in eights) 4.24-4.47 against 3.67-3.91 in fours; 1280 x 2048 (160 in eights, set nine at 581d850) kept its
  // eights: 2.94-3.20 us against 3.24-3.54 in fours.
  // Session 34 (rule D): the same for clusters of four that fill the two-per-SM slots (over 231 CTAs on H200) with
  // at most 2.75 stages per CTA (11 stages of 128 per tile): there each CTA's share is little more than the fill of
  // its 3-stage ring and the four-way reduction, and twos of 5-6 stages on a 4-stage ring were 3-11% faster at M =
  // 1-12 on all three such shapes measured (x2 s4 / x4 s3, us): 4096 x 1376 4.91-5.36 / 5.19-5.72 at M = 1-8
  // (heuristic-thirteenth-48ba1b1.json, where session 33 noted it), and blind in set twenty 3840 x 1280 4.21-4.70 /
  // 4.54-5.07 and 4096 x 1408 4.71-5.37 / 5.01-5.76 (heuristic-twentieth-e5e10d2.json); at M = 16 0.97-1.01x. With
  // more stages per CTA the fours stay: 4096 x 1600 (3.25; twos 1.01-1.05x, eleventh-partial-e2c09d8), 4096 x 1712
  // and 4096 x 1792 (3.5; 0.95-1.05x), 3840 x 1920 (3.75; 1.10-1.17x, twelfth-c942f9d), and so do 224 CTAs (3584 x
  // 1792: 1.00-1.12x).
  const bool few_stage_fours = x == 4 && ctas > slots - sms / 4 && 4 * g.k_stages <= 11 * x;
  // Session 37 (rule J): clusters of eight with up to 3 stages each, on more than 1.25 CTAs per SM, too. The fours on a
  // 4-stage ring against the eights on 3 (x4 s4 / x8 s3, us, the rule's own data): 1920 x 2560 (240 CTAs, 2.5 stages)
  // 3.86-4.34 / 4.75-5.25 at M = 1-16 (heuristic-fourteenth-fbbcfa9.json), 1514 x 3072 (192, 3) 4.55-5.16 / 4.96-5.21,
  // 0.91-0.99x (eighteenth-eeae1f9), 2048 x 3072 (256, 3) 5.17-6.17 / 5.50-6.46 (thirteenth-48ba1b1); even at M = 1-8
  // and ahead at 12-16 with 2.75 stages: 2048 x 2752 0.94-1.02x and 0.91-0.92x, 2048 x 2736 0.97-1.04x and 0.95-0.96x
  // (fourteenth). Offline over every report: 40 points timed both ways, 35 faster and 5 slower (by 0.2-3.6%), summed
  // 215.5 -> 200.5 us, within 5% of the best 12 -> 38. Fewer CTAs keep the eights: 1280 x 3072 (160) and 1152 x 3072
  // (144) ran the fours 7-30% slower. Clusters of four with 3 stages each were not measured in this band, so x == 8
  // only.
  // Session 41 (rule N): only on more than 1.4 CTAs per SM (over 184 on H200; the fours then fill more than 0.7 of
  // the SMs). Set twenty-three (heuristic-twentythird-36a5aea.json, blind) measured the eights 1.22-1.29x faster
  // than the fours below that line (x4 s4 / x8 s3, us, M = 1-16): 1350 x 3000 (176 CTAs, 2.93 stages) 4.45-5.25 /
  // 3.61-4.12, and 1281 x 3080 (168; 3.01 stages, outside the rule) 1.19-1.25x; the rule's own shapes all have 192
  // CTAs or more (1514 x 3072: fours 0.91-0.99x). Offline over every report: the 8 points of 1350 x 3000 change,
  // all faster, 38.1 -> 30.5 us, within 5% 0 -> 8. Not extended to session 16's halving of eights with at most 2
  // stages (1330 x 2048, 168 CTAs, fourteenth-fbbcfa9: the eights 6 of 8 points faster, 28.8 -> 26.4 us, but 5.5%
  // and 3.4% slower at M = 1 and 4). Between 177 and 184 CTAs nothing was measured.
  const bool few_stage_eights = x == 8 && g.k_stages <= 3 * x && 5 * ctas > 7 * int64_t{sms};
  if (c.tile_m <= 16 && x >= 4 &&
      ((ctas > sms + sms / 4 && (g.k_stages <= 2 * x || few_stage_eights)) || few_stage_fours)) {
    c.cluster = x / 2, c.stages = 4;
    if (note && g.k_stages > 2 * x)
      *note = x == 8 ? "clusters of four on a 4-stage ring, not of eight on 3, where eights of at most 3 stages each "
                       "fill more than 1.4 CTAs per SM (sessions 37, 41)"
                     : "clusters of two on a 4-stage ring, not of four on 3, where fours fill the slots with at most "
                       "2.75 stages each (session 34)";
    return true;
  }
  return false;
}

// The cluster itself and its ring: 3 or 4 stages.
void ClusterBand::cluster_ring() {
  // With fewer than 1/8 of the slots left, a 3-stage ring leaves the next kernel room to start early (2112x7168 M = 1
  // on 264 CTAs: 13.3 us with 4 stages, 10.2 with 3). So does it where some SMs hold two CTAs that have at most 4
  // stages each, whose fourth slot holds little or nothing: 1280 x 2048 in clusters of 8 (160 CTAs of 2 stages)
  // 2.95-3.20 us with 3 stages against 3.61-3.92 with 4 at M <= 8 (held-out set nine at 581d850), 1792 x 4096 (224 CTAs
  // of 4) 10-12% faster with 3 at M = 1 and 3-8 (set six at 516a0f1), q_b_proj 2304 x 1536 (144 of 3) 3.43 against 4.15
  // us at M = 1 and even in the step (docs/step.md "Session 16"); with fewer CTAs than SMs 4 stay (128 x 2048 on 16
  // CTAs: 2.37 us against 2.53). Session 35: at the 8-token tile also above 7/8 of the SMs (117 CTAs and more on H200):
  // clusters of four or eight fill fewer SMs than the device has (whole clusters per GPC, likely), so 128 such CTAs
  // already double up on some. 3 stages against 4 at M <= 8 (us): 2048 x 1408 3.10-3.50 against 3.95-4.14
  // (heuristic-twentyfirst-2720553.json), 1024 x 3072 3.32-3.94 against 4.12-4.28 (fifteenth-9bdc087), 1000 x 4096 and
  // 1024 x 4096 0.92-0.98x (fourteenth, twentieth), 2048 x 1024 and 1024 x 2048 0.83-0.97x (thirteenth-48ba1b1); 1001 x
  // 3080 0.98-1.04x at M = 1-8, 2048 x 1376 0.94-1.03x. At M = 12-16 the 4-stage ring was ahead on five of those seven
  // shapes (1.01-1.07x), so it stays there.
  // Session 48: at the 16-token tile too for clusters of eight (120-128 CTAs: 15-16 row tiles) with at most 4 stages
  // each. 3 / 4 stages at M = 12-16: H100 (blind sets thirty-one and thirty-two) 1024 x 2304 0.80x, 1024 x 2816
  // 0.82-0.83x (h100/heuristic-thirtyfirst-5a758ee.json, thirtysecond-1f2776c); H200 1024 x 2560 0.88-0.92x, 1024 x
  // 3072 0.91-0.94x, 1000 / 1024 x 4096 0.94-0.98x, 1024 x 3840 0.96-0.97x, but 1024 x 2048 1.03-1.04x, 1000 x 3000
  // 1.03-1.06x and 1001 x 3080 1.06x (sets thirteen to twenty-two): mean 0.98x over 16 points, 6 of them slower.
  // With more stages per CTA 4 stay (1024 x 5120-5376 1.02-1.07x with 3, 960 x 5120 1.14-1.16x).
  const int doubled_from = c.tile_m <= 8 || x == 8 ? sms - sms / 8 : sms;
  // Session 49: up to 5 stages of 128 per CTA where the clusters give more than 1.4 CTAs per SM (rule J's line; 188-224
  // CTAs measured), for fours and eights. 3 / 4 stages at M = 1-16: eights 1784 x 4136 (224 CTAs, 4.1 stages)
  // 0.88-0.91x, 1728 x 5120 (216, 5) 0.87-0.92x on both GPUs, 1536 x 4480 (192, 4.4) 0.92-0.96x; fours 3584 x 2368 (224,
  // 4.75; Qwen2.5-7B's down at TP 8, the H100's blind set thirty-three) 0.87-0.89x, 3072 x 2560 (192, 5) 0.99-1.02x,
  // 3000 x 2560 (188, 5) 0.98x at M = 5 and 8 on the H200 (H100, h100/heuristic-*.json; H200, h200/heuristic-*.json).
  // 160 CTAs keep 4 (fours of 5-5.75 stages: 2560 x 2560, 2504 x 2504, 2560 x 2880, 1.01-1.13x with 3 on either GPU),
  // and so do more stages (2880 x 2880, 180 CTAs of 5.75: 1.07-1.09x on the H100, 0.95-0.97x on the H200; 3584 x 3072, 6
  // stages: 0.97-0.98x; 1344 x 6144 in eights 1.05-1.08x). Between 160 and 188 CTAs nothing with up to 5 stages was
  // timed with both rings (a review's offline search).
  const bool five_stages_doubled = x >= 4 && 5 * ctas > 7 * int64_t{sms} && g.k_stages <= 5 * x;
  const bool few_stages_doubled =
      c.tile_m <= 16 && ((ctas > doubled_from && g.k_stages <= 4 * x) || five_stages_doubled);  // at M <= 16
  const bool big_ring = smem_bytes(c.rows, c.tile_m, 4, c.boxes, x) > 110 * 1024;
  // Session 41 (rule P): clusters of two at token tiles 32 and 64 keep the 4-stage ring past that line. On every shape
  // where both rings were measured there (232-264 CTAs; s4 / s3, us): 7551 x 4104 at M = 48 / 64 30.49 / 34.63 against
  // 41.19 / 47.52 (one box per stage, 0.73-0.74x; heuristic-twentythird-36a5aea.json, blind), 7543 x 3968 0.76-0.79x
  // (twentysecond-d02342d), 8004 x 4096 0.79-0.80x (nineteenth-d6706fb), 8004 x 5120 0.75-0.79x (twentyfirst-2720553);
  // at the 32-token tile (two boxes) 0.96-0.99x on those four, 7561 x 4160, 7605 x 3968 and 8391 x 2432. Rules G and M
  // below take most such shapes to one CTA per tile; this is the ring of those they leave (116-118 tiles with K over
  // 4096 on H200). Offline over every report: 4 points change (7551 x 4104 at M = 24-64), all faster, 135.9 -> 111.1
  // us, within 5% 2 -> 4. Clusters of four and eight at 64 tokens keep 3 stages (4002 x 5120 / 8192 in fours: 4 stages
  // 1.25-1.40x, 3900 x 1344 1.19-1.20x; 1850 x 1280 in eights 1.00-1.04x); 3900 x 5000 in fours went the other way
  // (0.89-0.94x), unexplained.
  const bool twos_ring = x == 2 && c.tile_m >= 32;
  // Session 47: fours just past that line (at most slots - SMs / 8 CTAs: 232-248 on 132 SMs) with 10 or more stages of
  // 128 per CTA, a partial one counted (K over 4608), keep the 4-stage ring, at every token tile. s4 / s3 (H100, blind
  // set twenty-nine): 3827 x 4984 (240 CTAs, 9.75 stages) 0.89-0.90x at M <= 16, 0.97-0.99x at 24-32 and 0.80-0.82x at
  // 48-64, 3827 x 5000 0.80-0.81x at 48-64 (h100/heuristic-twentyninth-ce87993.json); H200: 3840 x 15360 (240 CTAs, 30
  // stages) 0.81-0.84x, 3840 x 5120 (10) 0.94-0.97x, 3968 x 14848 (248) 0.93-0.99x, 3900 x 5000 (244) 0.89-0.94x at
  // 48-64 (rule P's "unexplained" counter-example). Outside it 3 stay: fewer stages (3840 x 1280-2560, 2.5-5 stages:
  // 1.08-1.24x with 4; 3840 x 3840 / 4096, 7.5-8: 0.98-1.07x) or more CTAs (4000 / 4002 x 8192, 252 CTAs: 1.10-1.16x;
  // 4096 x 12288, 256: 1.03-1.06x).
  // Session 48: from 9 such stages (K over 4096), from the H100's blind set thirty: 3711 x 4104 (232 CTAs, 8.25
  // stages) 0.85-0.90x with 4 at M <= 16 and 0.79x at 48-64, 3839 x 4608 (240, 9) 0.94-0.95x at M <= 16
  // (h100/heuristic-thirtieth-e426124.json). At 8 stages the GPUs disagree: 3711 x 4088 (232 CTAs) 0.86-0.92x on the
  // H100, 3840 x 3840 / 4096 (240) 0.96-0.97x on the H100 but 0.98-1.00x at M <= 5 and 1.02-1.05x at 8-16 on the H200
  // (heuristic-twentyfifth-5d2561e.json, twentysecond-d02342d), so 8 keeps 3.
  const bool long_fours = x == 4 && ctas <= slots - sms / 8 && stages_of_128_per_cta() >= 9;
  c.stages = (ctas > slots - sms / 4 && !twos_ring && !long_fours) || few_stages_doubled || big_ring ? 3 : 4;
  c.cluster = x;
}

bool ClusterBand::fours_with_long_ranges() {
  // Session 33: clusters of four on (nearly) every two-per-SM slot with 10 or more stages per CTA, at token tiles
  // up to 32: clusters of two on a 4-stage ring instead (about one CTA per SM, each with its half of the tile's K
  // streaming through the ring). On every such shape measured the twos were faster (the rule's own data; x4 s3 ->
  // x2 s4, median per shape at M <= 16): 4002 x 8192 19.13-19.92 us -> 17.73-18.73 (0.935x; and 26.79 / 27.79 ->
  // 20.20 / 20.79 at M = 24 / 32; heuristic-eighteenth-eeae1f9.json), 4000 x 8192 0.933x (fifteenth-9bdc087),
  // 4096 x 8192 0.943x and 4096 x 6848 0.964x (sixteenth-4e746d5), 4096 x 7168 0.932x (sixth-516a0f1), 4096 x
  // 6144 0.968x and 3840 x 5120 (10 stages) 0.974x (tenth-2eaefeb), 4096 x 12288 0.884x (fourteenth-fbbcfa9),
  // 3840 x 15360 0.862x (fifteenth-9bdc087). With 8 or fewer stages per CTA the fours stay, 5-14% faster: 4000 x
  // 4096 (8: 1.053x in twos, sixteenth), 4096 x 3584 (7), 4096 x 3200 (6.25), 4096 x 2560 and 3840 x 2560 (5:
  // 1.13-1.14x). Not for clusters of eight (2048 x 16384: fours 1.185x the eights' time, thirteenth-48ba1b1; 1984 x
  // 14848 0.937x) nor the 64-token tile (4002 x 8192 at M = 48 / 64: twos 1.02-1.10x).
  // Session 34 (rule C): at M <= 4 in this band, the 64-row lead split (four parts per tile, about as many CTAs as
  // the fours, two 4-stage rings per SM) instead. On both band shapes it was measured on, blind, it beat the twos
  // at M = 1-4 (lead split / twos, us): 4002 x 5120 10.86-11.50 / 12.52-12.68, 0.87-0.91x (10 stages per CTA of
  // four; heuristic-twentieth-e5e10d2.json), 4096 x 10240 20.15-20.81 / 21.81-21.99, 0.92-0.95x (20;
  // nineteenth-d6706fb); from M = 5 it was even (0.99-1.01x at M = 5-8) and 6-12% behind at M = 12-16. 4096 x
  // 16384 (32 stages, over 128 MiB and outside the band: stream-K there) showed the same line, 0.96-0.98x the twos
  // at M <= 4 and 1.01-1.05x above (heuristic-fourteenth-fbbcfa9.json): the gain shrinks as the stages per CTA
  // grow. The
  // 4-stage ring is the one measured on the band (the 5-stage ring the long-parts rule below would give was
  // measured on 4096 x 16384 only, 1.5% faster there). The band's other shapes (4002 x 8192, 4096 x 6144-12288,
  // 3840 x 5120 / 15360) never had the lead split measured: a blind set will say.
  if (x == 4 && c.tile_m <= 32 && ctas > slots - sms / 4 && g.k_stages >= 10 * x) {
    if (p.m <= 4) {
      cut.lead_split(false, false);
      c.stages = 4;
      if (note) *note = "the 64-row lead split at M <= 4, not clusters of two, where fours fill the slots with 10+ "
                        "stages each (session 34)";
      return true;
    }
    // Session 35 (rule F): at M = 5-16, 32-row tiles (as many CTAs as the 64-row twos, each with half the rows and the
    // same K) on an 8-stage ring (107 KB at the 16-token tile, two per SM), then in clusters of two. On all five band
    // shapes where those were measured they beat the 64-row twos at every M = 5-16 (us; heuristic-twentyfirst-
    // 2720553.json): 4096 x 5504 12.61-13.22 against 13.82-14.58 (0.91-0.92x), 4096 x 6400 0.92-0.93x, 3968 x 14848
    // 0.95-0.96x; 4002 x 5120 0.89-0.91x (twentieth-e5e10d2), 4096 x 10240 0.94-0.96x (nineteenth-d6706fb). With a
    // 3-stage ring, the only one earlier sets measured, the 32-row twos were 1.13-1.26x (sets ten to sixteen). At M <=
    // 4 the lead split above was faster still (4002 x 5120: 0.87-0.91x the 64-row twos, the 32-row twos 0.92-0.93x); at
    // 24-32 tokens the 8-stage ring does not fit twice. Session 42 (rule T): those 32-row tiles and 8-stage ring as the
    // lead split of lead 9 (two parts per tile, as many CTAs) instead of clusters of two. At every point where rule F's
    // twos were measured beside it, the lead split was faster (its time / the twos', M = 5-16): 4096 x 5120 0.91-0.92x
    // (heuristic-twentyfourth-2a9250d.json), 3900 x 5000 0.94-0.98x (twentythird-36a5aea), 4096 x 10944 and 4096 x
    // 11520 0.96-0.97x (twentysecond-d02342d). On the same points lead 6 was within 2% of lead 9 either way and lead 12
    // up to 4% slower (3900 x 5000 at M = 12). (A lead asked for by the step's knob never reaches here: the 32-row lead
    // split at the top of first_cut_config takes every shape of this band first.)
    if (p.m >= 5 && c.tile_m <= 16) {
      cut.lead_split(true, true);
      c.lead = 9, c.stages = 8;
      if (note) *note = "the lead split of 32-row tiles with an 8-stage ring, not clusters of four on 3, where fours "
                        "fill the slots with 10+ stages each (sessions 35, 42)";
      return true;
    }
    c.cluster = 2, c.stages = 4;
    if (note) *note = "clusters of two on a 4-stage ring, not of four on 3, where fours fill the slots with 10+ stages "
                      "each (session 33)";
    return true;
  }
  return false;
}

bool ClusterBand::one_cta_per_tile_at_32_64_tokens() {
  // Session 35 (rule G): at token tiles 32 and 64, where the 64-row tiles alone give nine tenths of the SMs or more,
  // one CTA per tile over the whole K (two boxes per stage) instead of clusters of two. Measured where y's rows are
  // not 16-byte aligned (the first cut is the pick up to M = 64 there), x1 / the pick (clusters of two, one box per
  // stage at the 64-token tile), us: 8004 x 5120 at M = 24 / 32 / 48 / 64 22.18 / 22.29 / 26.73 / 25.35 against
  // 23.38 / 24.21 / 36.88 / 35.26 (heuristic-twentyfirst-2720553.json); 8004 x 4096 18.33 / 18.54 / 22.35 / 20.84
  // against 19.34 / 20.15 / 28.26 / 29.94 (nineteenth-d6706fb). Below (6300 x 4096, 99 tiles) the twos were within
  // 0-5% of the best (eighteenth-eeae1f9) and stay. Only K = 4096-5120 was measured; the band reaches K = 256-8400.
  if (x == 2 && c.tile_m >= 32 && 10 * int64_t{g.tiles} >= 9 * int64_t{sms}) {
    c.cluster = 1, c.boxes = 2, c.stages = c.tile_m == 64 ? 3 : 4;
    if (note) *note = "one CTA per 64-row tile, not clusters of two, where the tiles fill nine tenths of the SMs at "
                      "32-64 tokens (session 35)";
    return true;
  }
  // Session 39 (rule M): at token tiles 32 and 64, clusters of two or four that fill the two-per-SM slots (more CTAs
  // than slots - SMs / 4, the 3-stage ring's line) with K <= 4096: one CTA per tile over the whole K, as rule G. x1 /
  // the pick, us, at M = 24 / 32 / 48 / 64 (y's rows misaligned; heuristic-twentysecond-d02342d.json): 3900 x 1344 (244
  // CTAs in fours) 6.57 / 6.81 / 8.55 / 8.83 against 8.08 / 8.61 / 9.41 / 10.68, 7543 x 3968 (236 in twos) 17.85 /
  // 17.89 / 23.14 / 21.13 against 18.43 / 19.02 / 28.12 / 29.14. The lines: fewer CTAs keep the twos (6300 x 4096, 198
  // CTAs: x1 1.08-1.14x at M = 24-32, eighteenth-eeae1f9), longer K the fours (4002 x 5120 / 8192 at M = 48-64, 252
  // CTAs: 1.08-1.19x, twentieth-e5e10d2 / eighteenth), and eights stay (1850 x 1280, 232 CTAs: 1.07-1.15x at M =
  // 24-48, 0.95x at 64). In the band only K = 1344 and 3968 were measured, and M = 17-23 not at all (session 48: and
  // 4088, below, which took fours of more than 4 stages out; between K = 1344 and 4088 no four was measured).
  // Session 48: not fours of more than 4 stages of 128 per CTA on at most slots - SMs / 8 CTAs (the long fours'
  // line, 248 on 132 SMs). 3711 x 4088 (232 CTAs of 8 stages) ran x1 1.40 / 1.43x the fours' time at M = 24 / 32 and
  // 1.30-1.33x stream-K's at 48-64 (H100, blind set thirty, h100/heuristic-thirtieth-e426124.json); 3711 x 4104 beside
  // it (K over 4096) kept the fours and was within 2.2% of the best at M = 24-32. Past the line x1 stays: 4003 x 4096
  // (252 CTAs of 8) ran the fours 1.24-1.30x x1's time at M = 24-32 on the H200 (heuristic-twentyfourth-2a9250d.json).
  const bool room_for_fours = x == 4 && stages_of_128_per_cta() > 4 && ctas <= slots - sms / 8;
  if (c.tile_m >= 32 && x <= 4 && !room_for_fours && ctas > slots - sms / 4 && p.k <= 4096) {
    c.cluster = 1, c.boxes = 2, c.stages = c.tile_m == 64 ? 3 : 4;
    if (note) *note = "one CTA per 64-row tile, not clusters of two or four that fill the slots, with K <= 4096 at "
                      "32-64 tokens (session 39)";
    return true;
  }
  return false;
}

void ClusterBand::eights_at_32_tokens() {
  // Clusters of eight at 32 tokens on (nearly) every two-per-SM slot: a ring of four one-box stages (61 KB with the
  // receive buffer) fits three CTAs per SM, so the next launch finds room beside them. 2112 x 7168 (264 CTAs) at
  // M = 32: 11.99-12.03 us against 16.90 for the two-box 3-stage ring (85 KB), cuBLASLt 12.42-12.71. With fewer
  // CTAs the two-box 4-stage ring stays: 1536 x 7168 (192) 9.56-9.59 us against 10.87 with this one, 896 x 7168
  // (112) 6.88 against 7.94 (session 23, calls 1-2; docs/kernels.md "Session 23").
  if (c.tile_m == 32 && x == 8 && ctas > slots - sms / 4) c.boxes = 1, c.stages = 4;
}

bool ClusterBand::fours_past_the_sms() {
  // Clusters of four on 64-row tiles that give a few more CTAs than SMs (up to 1.5 x) with 5 or more stages each
  // load some SMs with two CTAs' bytes and the rest with one. On the five held-out shapes in this band
  // (heuristic-sixth-516a0f1.json, heuristic-seventh-partial-0eaaa80.json) the 64-row lead split (2560 x 10240: six
  // parts of 40 tiles, 240 CTAs) was the best measured candidate at every M <= 2, 5-18% faster than this cluster;
  // at M >= 3, where each CTA has 7 or more stages, clusters of four on 32-row tiles (twice the CTAs, 46-56 KB
  // each) were the best at 18 of 24 points (2560 x 10240: 14-16% faster; the 6-stage 32-row x4 the best at M = 3-8;
  // 2816 x 4096 at M = 12-16 stream-K), at 5 stages (3000 x 2560) they were not measured. Not judged in the step:
  // no Kimi-K3 TP8 shape is in the band (2304 x 1536 has 3 stages per CTA, 3584 x 7168 224 CTAs).
  if (x == 4 && c.tile_m <= 16 && ctas > sms && 2 * ctas <= 3 * int64_t{sms} && g.k_stages >= 5 * x) {
    if (p.m <= 2) {
      cut.lead_split(false, false);
      return true;
    }
    if (g.k_stages >= 7 * x) {
      c.rows = 32, c.stages = 4;
      // Twice the CTAs in 32-row tiles; past 2.75 per SM in clusters of four they no longer all start at once:
      // 3072 x 12288 (384 such CTAs) ran 28.0-29.8 us at M = 3-16 against 20.8-22.0 in clusters of two (192
      // CTAs; held-out set nine at 581d850), 3072 x 6144 (384) 40-43% slower in fours (set ten at 2eaefeb,
      // blind), where 2560 x 10240 (320; set seven) and 2816 x 4096 (352; set six) were the best in fours.
      if (4 * 2 * ctas > 11 * int64_t{sms}) c.cluster = 2;
      return true;
    }
  }
  return false;
}

void ClusterBand::twos_as_lead_split() {
  if (x != 2 || c.tile_m > 16) return;
  const Grid split = lead_split_grid_for(p.n, p.k, 64, 2, 2, lead < 0 ? 6 : lead, sms);
  const bool thin_parts = split.parts > 1 && split.k_stages - split.lead_stages < 2 * (split.parts - 1);
  // Session 48: one part per 64-row tile (K of at most 6 stages of 128 against lead 6) where 32-row tiles number at
  // most the SMs: the 64-row grid leaves half the SMs idle. 32-row tiles on an 8-stage ring (the whole K in flight) /
  // the 64-row split, us at M = 1-16: 4096 x 768 (64 tiles of 64) 2.96-3.19 against 4.08-4.37, 4096 x 688 3.01-3.81
  // against 4.11-4.38 but 4.31 / 3.77 against 4.30 / 4.29 at M = 4 / 5 (H100, blind sets thirty and twenty-nine:
  // h100/heuristic-thirtieth-e426124.json, twentyninth-ce87993); the 6-stage ring 1.02-1.24x the 8-stage one's time.
  // Set thirty-one (H100, after the rule): 2048 x 768 (32 tiles of 64) ran it 0.82-0.88x the 64-row split, though
  // clusters of two of the 32-row tiles were 0.87-0.92x its time at M = 2-8 (not acted on). Above 4224 rows the 64-row
  // split stays (8192 x 512, 128 tiles: 1.004x the best on the H200 in set six). At the default lead one part means K
  // of at most 768, so that is the rule's whole K range.
  // Set thirty-two (H100, blind): 4223 x 712 ran it 0.95-1.11x the 64-row split (7 of 8 Ms faster), but Phi-3.5-MoE's
  // expert down 4096 x 400 (4 stages of 128) 1.00-1.17x (5 of 8 slower; h100/heuristic-thirtysecond-1f2776c.json), so
  // from K = 512.
  const bool idle_half = split.parts == 1 && (p.n + 31) / 32 <= sms && p.k >= 512;
  cut.lead_split(short_k && (thin_parts || idle_half), false);
  if (short_k && idle_half) {
    c.stages = 8;
    if (note) *note = "32-row tiles on an 8-stage ring, not one part per 64-row tile, where 64-row tiles would leave "
                      "half the SMs idle (session 48)";
  }
  // Parts of 8 or more stages each (the lead's too) stream past a 4-stage ring: 5 stages (99 KB at the 8-token
  // tile, 112 KB at 16; still two per SM). Step trials (session 17, c942f9d, skinny_fused at M = 1 / 8 / 16
  // against the 4-stage table in the same call): 6288 x 7168, 4480 x 7168 and 7168 x 3584 on 5 stages -87 /
  // -116 / -52 us; with 7168 x 1536 (parts of 9 and 3 stages) and the dense layer's 8448 x 7168 and 7168 x 4224
  // too -74 / -111 / -36. This rule is the first trial plus the two dense shapes (one launch each); the step
  // with exactly it has not run. Alone, 6400 x 4096 (parts of 19 and 13) ran 13.6-14.7 us against 14.8-15.5
  // (held-out set eleven at e2c09d8). Not applied to the band's lead split at M <= 2 (below; 2560 x 10240 has
  // parts of 18 and 12): not judged there.
  // Session 35: also where two or three parts leave the others 2 x P stages or more each (4 in halves, 6 in
  // thirds). 5 stages against 4 at M <= 8 (us, lead 6): halves, 6656 x 1664 and 6656 x 2240 0.92-0.97x
  // (heuristic-nineteenth-d6706fb.json), 6144 x 2048 and 7777 x 2048 0.92-0.95x, 7168 x 2560 0.95-0.96x (tenth-
  // 2eaefeb), 6400 x 1600 0.93-0.98x (fifteenth-9bdc087); thirds, 5128 x 3000 0.93-0.95x (twentieth-e5e10d2),
  // 4608 x 3072 and 5120 x 3456 0.87-0.94x (tenth), 5120 x 3424 0.93-0.99x (twelfth-c942f9d); at M = 12-16
  // 0.97-1.00x. Thirds with 4 stages each kept the 4-stage ring ahead (5120 x 2176 / 2240 / 1712: 1.02-1.06x).
  const long long other_stages = split.k_stages - split.lead_stages;
  const bool long_parts = other_stages >= 8 * (split.parts - 1) ||
                          (split.parts <= 3 && other_stages >= 2LL * split.parts * (split.parts - 1));
  // Session 46: halves on CTAs that leave the next kernel room (at most slots - SMs / 4, the 3-stage ring's line) take
  // the 5-stage ring whatever their parts' lengths. 5 / 4 stages at M = 1-16 (us): 7001 x 1528 (110 tiles) 0.92-0.97x
  // (heuristic-twentyfourth-2a9250d.json), 6400 x 1280 0.94-0.97x (twentythird-36a5aea), 6013 x 1280 0.94-1.00x
  // (sixteenth-4e746d5), 6912 x 1152 0.95-1.00x (twentysecond-d02342d); with 128 tiles (8192 x 1376, 256 CTAs)
  // 1.00-1.03x, so that stays at 4, and so do thirds of 4 stages (5120 x 1712-2240, 5504 x 2048, 4864 x 2560:
  // 1.01-1.07x). Offline over every report 32 H200 points change (all faster, within 5% 20 -> 32 with those above) and
  // 16 H100 points.
  const bool roomy_halves = split.parts == 2 && 2 * int64_t{split.tiles} <= slots - sms / 4;
  if (c.rows == 64 && split.parts > 1 && (long_parts || roomy_halves)) c.stages = 5;
}

bool ClusterBand::one_cta_per_tile_for_short_fours() {
  // Session 51: at token tiles 32 and 64, clusters of four whose CTAs get under 4 boxes of 64 of K each (K < 1024), on
  // a quarter of the SMs' worth of tiles or more, and not taken by rules G or M above: one CTA per tile (the cluster's
  // boxes per stage, a 4-stage ring). x1 / fours at M = 24 / 32 / 48 / 64 (H100, set thirty-four, blind:
  // h100/heuristic-thirtyfourth-fb21188.json): 3331 x 448 (53 tiles of 64; 2 boxes per CTA at 32 tokens, 1.75 at 64)
  // 0.72 / 0.69 / 0.83 / 0.77x, 3331 x 512 0.73 / 0.68 / 0.85 / 0.80x. At 4 boxes per CTA the fours stay: 2501 x 1024 (40
  // tiles) x1 1.03 / 0.98x at M = 24 / 32 and 1.08 / 1.00x at 48 / 64 (H200). Clusters of eight stay (512 x 1024, 8 tiles
  // of 1 stage per CTA: x1 1.38-1.44x on the H100; with eights a quarter of the SMs' tiles is the slots' whole grid).
  // Only N = 3331 was measured in the band (K 448-512, 53 tiles).
  if (x != 4 || c.tile_m < 32 || g.k_stages * c.boxes >= 4 * x || 4 * int64_t{g.tiles} < sms) return false;
  c.cluster = 1, c.stages = 4;
  if (note) *note = "one CTA per tile, not clusters of four of under 4 boxes of 64 per CTA, at 32-64 tokens on SMs / 4 "
                    "tiles or more (session 51)";
  return true;
}

Config clustered(Cut& cut, int x, const Grid& g, bool short_k) {
  ClusterBand b{cut, cut.p, cut.c, cut.sms, cut.slots, cut.lead, cut.note, x, g, int64_t{g.tiles} * x, short_k};
  if (b.few_ctas_of_large_shares() || b.halved_clusters()) return cut.c;
  b.cluster_ring();
  if (b.fours_with_long_ranges() || b.one_cta_per_tile_at_32_64_tokens() || b.one_cta_per_tile_for_short_fours())
    return cut.c;
  b.eights_at_32_tokens();
  if (!b.fours_past_the_sms()) b.twos_as_lead_split();
  return cut.c;
}

// Under 128 MiB where no cluster fits (g the grid of whole 64-row tiles): one CTA per row tile where K is short or the
// tiles fill the slots, or false.
bool unclustered_short(Cut& cut, const Grid& g, Config* out) {
  const Config& c = cut.c;
  const int slots = cut.slots;
  std::string* note = cut.note;
  // No cluster fits, at M <= 16 with K of two or more stages: one CTA per row tile (the lead split's grid gives
  // one part) where that fills nine tenths of the slots (16032 x 4096, 251 tiles: stream-K 34.4 us, 64-row lead
  // split 32.3) or K is short and 32-row tiles (9728 x 896, 152 tiles of 64: stream-K 8.91 us, 304 of 32 5.54);
  // stream-K otherwise (9216 x 7168, 144 tiles: stream-K within 0.5% of the best).
  // With short K, 64-row tiles where they fill between three quarters of the slots and all of them: 14336 x 1792
  // (224 tiles of 64, 0.85 of the slots) 13.3-13.9 us against 18.2-19.6 in 32-row tiles at M <= 16 (held-out set
  // nine at 581d850); 32-row tiles below (9728 x 896: 152, 0.58) and above: 20000 x 1536 (313, 1.19) lost 24-27%
  // in 64-row tiles of two boxes per stage against 10-13% in 32 (set ten at 2eaefeb, blind; the best there, and
  // on 24576 x 1536 in set seven, was 64 rows of one box per stage, whose smaller ring fits three CTAs per SM).
  // The same up to K = 3072 (session 17): 11520 x 3072 (180 tiles of 64) ran stream-K 19.3-20.4 us at M <= 16
  // against 17.9-18.5 in one CTA per 32-row tile, 9728 x 2560 (152) 14.9-16.0 against 13.9-14.6 (held-out set
  // twelve at c942f9d, blind), 12288 x 3072 (192) 20.4-21.4 against 18.9-19.6 (set nine); 12800 x 2560 (200, three
  // quarters of the slots) 18.3-19.5 against 17.9-18.6 in one CTA per 64-row tile (set eleven). It lost on 12345 x
  // 2056 at M = 2-16, whose 17th stage holds 8 of K (32-row tiles 17.3-23.4 us against stream-K's 17.2-20.9).
  const bool medium_k = g.k_stages * c.boxes <= 48;
  const bool wide_tiles_fill = 4 * int64_t{g.tiles} >= 3 * slots && g.tiles <= slots;
  // Session 33 (rule 4): 64-row tiles again where they give one and a half times the slots or more (32-row tiles
  // three waves or more; N over 25280 on H200, under 128 MiB). There the 32-row one-part split lost at every point
  // measured, M = 1-16, to the one-part split of 64-row tiles (the rule's own data; 64-row time / 32-row time):
  // 25600 x 2048 0.933-0.964 (heuristic-sixteenth-4e746d5.json), 32000 x 2048 0.907-0.931, 32064 x 2048
  // 0.900-0.930, 32768 x 1024 0.858-0.886 (18.87-20.35 us -> 16.2-17.9), 50265 x 1024 0.908-0.940, 51865 x 1024
  // 0.920-0.944, 65534 x 1024 0.924-0.959 (heuristic-nineteenth-d6706fb.json), 51866 x 1280 0.888-0.935
  // (heuristic-eighteenth-eeae1f9.json). 128-row tiles summed the same (1830 against 1831 us over these 64
  // points) but lost 0-3.5% on 25600 x 2048; 64-row stream-K summed 1848. Below the line the 32-row tiles stay:
  // 9001 x 1024 to 12600 x 2560 (1.07-1.49 waves of 32-row tiles) 3-23% ahead of every 64- and 128-row config
  // measured; between two and three waves no one config won throughout (16941 x 3072 and 18432 x 3072: 64-row
  // one-part 0.99-1.07x, stream-K 0.86-0.99x; 20000 x 1536, 21888 x 2048 and 24576 x 1536: one-box 64-row tiles
  // 0.92-0.96x, two-box 1.04-1.14x where measured, 128-row 1.14-1.19x, one-box 64-row 1.08-1.10x on 25600 x 2048).
  const bool many_wide_tiles = 2 * int64_t{g.tiles} >= 3 * slots;
  const bool short_rows = medium_k && !wide_tiles_fill && !many_wide_tiles;
  if (c.tile_m <= 16 && g.k_stages >= 2 && (medium_k || 10 * int64_t{g.tiles} >= 9 * slots)) {
    // Session 41 (rule O): not the 32-row tiles where K is not a multiple of 64 at M >= 2 (stream-K instead; rule E
    // below has the same line and the data).
    if (short_rows && misaligned_k_rows(cut.p)) return false;
    // Session 49: with K up to 1024 not a multiple of 64 at M >= 2, the 64-row lead split on a 5-stage ring instead
    // of the 32-row tiles (each 64-wide box is its own copy there: a 32-row tile's copies carry half the bytes). 64-row
    // s5 / 32-row tile (H100, blind set thirty-three, h100/heuristic-thirtythird-57e0253.json): Arctic's expert down
    // 7168 x 304 (K % 64 = 48) 0.69-0.78x at M = 2-16, 10240 x 1016 0.90-0.99x; 10007 x 1016 0.91-0.99x on the H100
    // (twenty-fifth-cf3baed) and 0.83-0.94x on the H200 (heuristic-twentyfifth-5d2561e.json). At M = 1 the 32-row tiles
    // stay (10007 / 10240 x 1016 1.04-1.06x for the 64-row split; 7168 x 304 0.83x). Aligned K keeps the 32-row tiles
    // (6144 x 320: 1.03-1.12x for the 64-row split on the H100).
    if (short_rows && cut.p.k % kStageK != 0 && cut.p.m >= 2) {
      *out = cut.lead_split(false, true);
      out->stages = 5;
      if (note) *note = "the 64-row lead split on a 5-stage ring, not 32-row tiles, where K <= 1024 has a partial box "
                        "of 64 at M >= 2 (session 49)";
      return true;
    }
    if (medium_k && many_wide_tiles && note)
      *note = "one CTA per 64-row tile, not 32-row, where the 64-row tiles give 1.5x the slots or more (session 33)";
    // Session 42 (rule S): rule K's one-box 64-row tiles (below) also where those tiles give 2 to 2.7 per SM with K of
    // at most 2560, a multiple of 64: a ring that fits three CTAs per SM (one_box_tiles), so the whole grid is
    // resident. One-box tile / pick (32-row lead split, or stream-K), us at M = 1-16: 18432 x 1152 (288 tiles) 12.01-12.47 against
    // 13.49-14.45, 0.86-0.89x (heuristic-twentyfourth-2a9250d.json, blind); 21888 x 2048 (342) 22.80-23.17 against
    // 23.65-24.65, 0.94-0.96x (fourteenth-fbbcfa9); 22781 x 2560 (356) 27.92-29.27 against 28.51-31.08, 0.94-0.98x
    // (twentythird-36a5aea). At K = 3072 the same tile lost: 16941 x 3072 (265) 1.08-1.12x, 18432 x 3072 (288)
    // 1.06-1.08x (fifteenth-9bdc087, fourteenth-fbbcfa9), so K stops at 2560; 2.7-3 tiles per SM are rule K's band
    // (from K = 1536 until session 46, from 1024 in it, from 832 since session 47). Session 45: K from 1088, where the
    // 32-row lead split lost at every M <= 16 on both GPUs: 19208 x 1088 (301 tiles) one-box tile 11.73-12.10 us
    // against 14.07-14.54 at M = 2-16, 0.82-0.85x (heuristic-twentyfifth-5d2561e.json, H200, blind), 0/12 of the set's
    // Ms within 5% there and 3/12 on the H100 (h100/heuristic-twentyfifth-cf3baed.json). Session 46: K from 1024, on
    // the H100's blind set twenty-six (21011 x 1024, 329 tiles: one-box tile 15.08-15.98 us against 15.88-17.23 at M =
    // 1-16, 0.92-0.95x; 8 of 8 points faster offline, within 5% 0 -> 8; h100/heuristic-twentysixth-cb7656b.json).
    // Session 47: K from 832, session 48 from 768 and then 704, session 49 from 640, session 51 from 576 (kOneBoxMinK,
    // with rule K's line).
    if (rule_s_band(cut.p, cut.sms)) {
      *out = cut.one_box_tiles();
      if (note) *note = "one CTA per 64-row tile of one box per stage, all resident at three per SM, where those tiles "
                        "give 2-2.7 per SM with K 576-2560 (sessions 42, 45-51)";
      return true;
    }
    // Session 48: at M <= 2 rule 4's band keeps stream-K (below), as rule 7 does at 128 MiB and more. Stream-K / one
    // CTA per 64-row tile summed over every point where both were timed at M = 1-2 (N over 25280, under 128 MiB): K <=
    // 768, H200 107.4 against 123.1 us (6 points; within 5% 0 -> 6), H100 218.3 against 233.6 (10; 4 -> 10); K 832-1024
    // even (305.9 against 307.6; 503.7 against 504.0); K 1088-2048, H200 449.4 against 467.1 (16; 11 -> 15), H100
    // 552.6 against 561.7 (16; 13 -> 16). On 58101 x 512 at M = 1 stream-K took 14.88 us against the 128-row tiles'
    // 16.31 (H200, heuristic-twentyeighth-f743a5d.json).
    // Not where the 128-row tiles fill their waves with K over 768 (below): there they led at M = 1-2 on the H200 over
    // those points (227.6 against 231.9 us; 33337 x 1000 at M = 2 19.36 against stream-K's 22.27, 32000 x 2048 and
    // 33337 x 1024 0.97-0.99x; 64002 x 1024 1.02-1.03x). With K <= 768 stream-K stays: 58101 x 512 ran the 128-row
    // tiles 1.07-1.11x stream-K at M = 1-2 on both GPUs.
    if (many_wide_tiles && cut.p.m <= 2 && !(Cut::full_waves_of_128(cut.p, slots) && cut.p.k > 768)) {
      if (note) *note = "stream-K at M <= 2 where the 64-row tiles give 1.5x the slots or more (session 48)";
      return false;
    }
    *out = many_wide_tiles ? cut.wide_tiles_of(cut.p) : cut.lead_split(short_rows, true);
    return true;
  }
  // K of one stage at the 16-token tile with a CTA per 64-row tile: the lead split's grid is stream-K's (one part per
  // tile, the same CTAs), with the lead split's staged epilogue (16-byte output stores). f_b_proj 1536 x 128 (69
  // launches) in the step at M = 16: -39 / -48 us (trial FB, session 19 call 3; +-10 us at M <= 8, where it stays
  // stream-K). Other shapes it reaches (K <= 128, up to 264 row tiles: 16896 x 128) were not measured.
  if (c.tile_m == 16 && g.k_stages == 1 && g.tiles <= slots) {
    *out = cut.lead_split(false, true);
    return true;
  }
  return false;
}

// Session 49 (rule Y): at the 64-token tile with K not a multiple of 64, where 128-row tiles number seven tenths of the
// two-per-SM slots or more: 128-row tiles of one box per stage on a 3-stage ring, in the grid the rules chose (one CTA
// per tile, or stream-K), instead of 64-row tiles of two boxes. There each 64-wide box of a stage is its own copy and
// x's rows are not 128-byte aligned (rule B's reading, tma_family.cpp); a 128-row tile copies x's 64 tokens once per
// 128 rows, half as often per weight byte. 128-row / 64-row tile at M = 48 / 64 on the H200 (every report, offline;
// y's rows misaligned, where the first cut is the pick): 33337 x 1000 (261 tiles of 128) 0.81 / 0.82x, 50683 x 984
// (396) 0.86 / 0.91x, 25279 / 25283 x 2504 (198) 0.89-0.98x, 33006 x 2904 (258) 0.88 / 0.99x, 24003 x 4040 (188) 0.96
// / 1.00x, 50695 x 984 0.96 / 1.00x (h200/heuristic-twentyeighth-f743a5d.json and older). On the H100 the same shapes
// were even: 33337 x 1000 0.86 / 0.93x, 50683 x 984 0.96 / 0.99x, but 25283 x 2504 1.07x and 50695 x 984 1.04 / 1.07x
// (h100/heuristic-*.json); issue 18 is judged on the H200. By grid (a review's offline sums over every report): one CTA
// per tile faster on both GPUs; stream-K H200 692.5 -> 659.2 us but H100 405.4 -> 420.1 (+3.6%). Fewer tiles keep the
// 64-row ones: 10007 x 1016 / 1032 (79 tiles of 128) 1.11-1.65x on both GPUs, 14001 x 1016 (110) 1.22-1.26x on the
// H100, though 11003 x 3080 (86 tiles) ran them 0.94 / 0.96x on the H200; between 110 and 184 tiles nothing was
// measured. With K % 64 == 0 the 128-row tiles lost at 64 tokens at all but two points (33337 x 1024 and 26003 x 832
// at M = 48: 0.97-0.99x; 1.01-1.43x elsewhere), so the line is the misaligned K.
Config misaligned_k_128_rows(const Problem& p, int slots, Config c, std::string* note) {
  const int64_t tiles128 = (p.n + 127) / 128;
  if (c.tile_m != 64 || p.k % kStageK == 0 || 10 * tiles128 < 7 * int64_t{slots}) return c;
  c.rows = 128, c.boxes = 1, c.stages = 3;
  if (note) *note += std::string(note->empty() ? "" : "; ") + "128-row tiles of one box per stage at 64 tokens, where "
                     "K is not a multiple of 64 and those tiles give 0.7x the slots or more (session 49)";
  return c;
}

// Where no cluster was taken (or 128 MiB and more): rules E, W and H, the two bands over 128 MiB, rule V, stream-K
// otherwise.
Config unclustered(Cut& cut) {
  const Problem& p = cut.p;
  Config& c = cut.c;
  const int sms = cut.sms, slots = cut.slots;
  std::string* note = cut.note;
  // Session 35 (rule E): no cluster fits, K over 3072 (24 stages of 128), and 32-row tiles that give between 2.6 and 3
  // CTAs per SM: one CTA per 32-row tile (the lead split's grid of one part) instead of stream-K, at any size. On the
  // 11 shapes of the recorded sets in that band, at M = 3-16 it ran 0.91-0.98x stream-K's best on K = 4096-5120 and
  // 0.95-1.02x on K = 8192-12288 (12288 x 5120 29.80 against 31.42 us at M = 3, heuristic-twentyfirst-2720553.json;
  // 11520 x 4096 0.92-0.98x, twentieth-e5e10d2; 12544 / 12672 x 4096-5120 0.92-0.99x, nineteenth-d6706fb; 12288 x 12288
  // 0.97-1.01x, eighteenth-eeae1f9), at M = 1-2 0.96-1.02x. Outside the band it loses: a few CTAs more per SM than the
  // rest (12800 x 4096-8192: 400 CTAs, 1.14-1.21x; 13696-15111 rows: 428-473, 1.13-1.23x) or fewer than 2.6 per SM
  // (8453-10240 rows: 265-320 CTAs, 0.97-1.29x, 1.05-1.22x above 9216 rows; 10752 x 5376 at 2.55: 0.97-1.05x). Not
  // measured: K over 12288. Session 41 (rule O, misaligned_k_rows): K % 64 != 0 at M >= 2 takes stream-K (11003 x
  // 3080, y's rows misaligned: 0.79-0.84x at M = 2-16); at M = 1 it keeps the rule (stream-K 0.97x there). Kimi-K3
  // TP1's g_proj (12288 x 7168) is in the band, untimed; no TP8 shape is.
  const int64_t tiles32 = (p.n + 31) / 32, tiles64 = (p.n + 63) / 64;
  if (c.tile_m <= 16 && p.k > 3072 && !misaligned_k_rows(p) && 5 * tiles32 >= 13 * int64_t{sms} &&
      tiles32 <= 3 * int64_t{sms}) {
    if (note) *note = "one CTA per 32-row tile, not stream-K, where those tiles give 2.6-3 CTAs per SM (session 35)";
    return cut.lead_split(true, true);
  }
  // Session 46 (rule W): at the 32-token tile, rule S's band (64-row tiles 2 to 2.7 per SM, K 576-2560, a multiple of
  // 64): its one-box 64-row tiles, all resident at three per SM, instead of stream-K (rule Q does the same at 2.7-3).
  // One-box tile / stream-K at M = 24 / 32, us (y's rows misaligned, where the first cut is the pick; 356 tiles): 22779
  // x 1408 17.30 / 17.54 against 21.70 / 22.29 (heuristic-twentyfifth-5d2561e.json), 22781 x 2560 29.63 / 30.21 against
  // 32.96 / 33.54 (twentythird-36a5aea), as their 357-tile twins 22789 x 1408 and 22790 x 2560 under rules Q and K; on
  // the H100, blind, 21011 x 1024 / 1088 and 22783 x 1216 0.70-0.81x (h100/heuristic-twentysixth-cb7656b.json), where
  // stream-K's 64-row tiles of two boxes leave 2.5-2.7 CTAs' bytes per SM on two-per-SM slots; session 48, 18627 x 768
  // 0.79-0.81x (h100/heuristic-thirtieth-e426124.json); session 49, 19197 x 640 0.80-0.82x (h100/heuristic-thirtythird-
  // 57e0253.json); session 51, 20999 x 576 0.65-0.68x (h100/heuristic-thirtyfourth-fb21188.json). Not measured: K under
  // 576 or over 2560 in this band. The
  // 64-token tile is taken below (the one-box ring of session 47, or rule V).
  if (c.tile_m == 32 && rule_s_band(p, sms)) {
    if (note) *note = "one CTA per 64-row tile of one box per stage, all resident at three per SM, where those tiles "
                      "give 2-2.7 per SM with K 576-2560 at 32 tokens (sessions 46-51)";
    return cut.one_box_tiles();
  }
  // Session 48: at the 32-token tile, 64-row tiles 1 to 2 per SM (no cluster fits): one CTA per tile (two boxes per
  // stage, a 4-stage ring) instead of stream-K where K is at most 1088 or the tiles give 1.75 per SM or more (K <= 5376,
  // not rule O's misaligned K). One CTA per tile / stream-K at M = 24 / 32, us (y's rows misaligned, where the first cut
  // is the pick): 10007 x 1016 11.69 / 11.97 against 14.12 / 14.27 (H200, heuristic-twentyfifth-5d2561e.json) and 0.77-
  // 0.78x on the H100 (h100/heuristic-twentyfifth-cf3baed.json), 10007 x 1032 0.83-0.87x on both, 14001 x 1016 / 1032
  // 0.67-0.70x and 16388 x 3840 0.87-0.89x (h100/heuristic-twentyseventh-3cc07e6.json), 10003 x 1016 0.78x
  // (h100/heuristic-thirtyfirst-5a758ee.json, blind), 15157 / 15171 x 4608 (237-238 tiles) 0.90-0.91x (h100/twentysixth-
  // cb7656b), 16388 x 5376 (257) 0.87-0.88x on the H200 (twentyfifth-5d2561e); 16889 x 832 (264) 0.98-0.99x on both.
  // Outside, stream-K stays: longer K on fewer tiles (12628 x 5120, 198 tiles: 1.00-1.03x; 10970 x 3136 1.03x; 12605 x
  // 7040 1.04x; 10001 x 5376 / 5440 1.09-1.13x on the H100; 9995 x 12288 1.33x) and rule O's K (11003 x 3080 1.14-1.17x).
  // K under 832 was not measured in this band, so the short-K line started at session 48's kOneBoxMinK, 704. Up to K =
  // 1600 since the H100's blind set thirty-two: 14715 x 1600 (230 tiles, written to sit under the 1.75 line) ran
  // stream-K 1.31-1.34x one CTA per tile at M = 24 / 32 (h100/heuristic-thirtysecond-1f2776c.json); 14723 x 1600 (231)
  // took it, within 3.2%. Up to 1664 since the H100's blind set thirty-three: 12347 x 1664 (193 tiles, 1.46 per SM)
  // ran stream-K 1.23x one CTA per tile at M = 24 / 32 (h100/heuristic-thirtythird-57e0253.json). K % 64 != 0 past 1088
  // was not measured with one CTA per tile here (rule O's 11003 x 3080 ran it 1.14-1.17x), so rule O's K stays out of
  // the short-K line above 1088 too.
  const bool short_k_or_near_two = ((p.k >= kRuleSixMinK && p.k <= kRuleSixMaxK && (p.k <= 1088 || !misaligned_k_rows(p))) ||
                                    (4 * tiles64 >= 7 * int64_t{sms} && p.k <= 5376 && !misaligned_k_rows(p)));
  if (c.tile_m == 32 && tiles64 > sms && tiles64 <= slots && short_k_or_near_two) {
    if (note) *note = "one CTA per 64-row tile, not stream-K, where the tiles give 1-2 per SM with K <= 1664 or 1.75-2 "
                      "per SM with K <= 5376 at 32 tokens (sessions 48, 49)";
    return cut.lead_split(false, true);
  }
  // Session 35 (rule H): at the 32-token tile, 64-row tiles for 1.5x the slots or more: one CTA per tile (two boxes per
  // stage, a 4-stage ring) instead of stream-K. On all 13 such shapes measured (y's rows not 16-byte aligned, where the
  // first cut is the pick above 16 tokens) it ran 0.93-0.995x stream-K at M = 24 and 32: 32002 x 4096 0.94-0.96x,
  // 50257 x 2560 0.93x, 49155 x 1024 0.93-0.94x, 256206 x 1024 0.97-0.98x (heuristic-eighteenth-eeae1f9.json to
  // twentyfirst-2720553). One box per stage was 0.89-0.98x on some (49155-50265 x 1024-2048) and 1.01-1.10x on others
  // (33006 x 2904, 51865 x 1024-1280). With fewer tiles it lost (19998 x 8192, 1.19x the slots: 1.03-1.05x), and at the
  // 64-token tile one CTA per tile went either way (0.89-1.07x), so stream-K stayed there (rule V below since session
  // 46, at up to 6 tiles per SM and K <= 5376). Between 1.5x and 1.9x the
  // slots (25281-32000 rows on H200) and K over 4096 nothing was measured: set twenty-two has shapes there.
  if (c.tile_m == 32 && 2 * tiles64 >= 3 * int64_t{slots}) {
    if (note) *note = "one CTA per 64-row tile, not stream-K, at the 32-token tile on 1.5x the slots or more (session 35)";
    return cut.wide_tiles_of(p);
  }
  // Session 48: 128 MiB or more with more 64-row tiles than slots and K of at most 24 stages of 128, at M = 3-16: one CTA
  // per 64-row tile (rule 4's grid below 128 MiB) instead of stream-K. Summed over every point where both were timed:
  // at M = 3-5 H200 4895.0 us against 4962.2 (79 points; within 5% of the best 64 -> 67), H100 2882.3 against 2951.9
  // (39; 31 -> 39); at M = 8-16 H200 5126.7 against 5232.9 (80; 56 -> 68), H100 2712.2 against 2813.4 (36; 20 -> 36),
  // on 23040-256206 rows with K 1024-3072 (sets nine to thirty-one). At M = 1-2 the two were even (H200 3422.2 against
  // 3411.5, H100 1627.2 against 1625.0), so stream-K stays there. Where it lost: 37984 x 2048 and 36724 x 2560 on the
  // H200 (1.03-1.07x; their tiles fill 2.25 and 2.17 slots), 50257 x 1600 (H200, 1.01-1.02x) and 74235 x 1600 (H100, up
  // to 1.02x); no line separated them from the winners. K under 1024 was not measured here, so the rule starts at 1024.
  if (at_least_128_mib(p) && c.tile_m <= 16 && p.m >= 3 && tiles64 > slots && p.k >= 1024 &&
      p.k <= 3072) {
    if (note) *note = "one CTA per 64-row tile, not stream-K, at 128 MiB or more with K <= 3072 at M = 3-16 (session 48)";
    return cut.lead_split(false, true);
  }
  // 128 MiB or more with row tiles for nine tenths of the slots and no more: one CTA per 64-row tile, as below
  // 128 MiB (16384 x 4096, 256 tiles: stream-K 34.6-35.7 us at M <= 16 against 32.9-33.1 for one CTA per tile; set
  // eleven at e2c09d8, blind; 16384 x 6144: 50.8-51.2 against 48.9-49.5, set nine at 581d850). More tiles than slots
  // keep stream-K (except at K 1024-3072 from M = 3 since session 48, above): 17408 x 5120 (272 tiles) ran 45.3-46.4 us
  // with it against 52.7-54.1 in one CTA per tile (set nine).
  // No Kimi-K3 shape is in the band (lm_head 20480 x 7168 has 320 tiles).
  if (at_least_128_mib(p) && c.tile_m <= 16 && 10 * tiles64 >= 9 * int64_t{slots} &&
      tiles64 <= slots)
    return cut.lead_split(false, true);
  // 128 MiB or more where two parts per 64-row tile fill at least 95% of the slots and no more: the lead split on a
  // 5-stage ring. At M = 1 / 16 against stream-K (session 24, calls 2-3, the same calls): 8448 x 8192 (264 CTAs)
  // 33.50 / 34.26 us against 34.49 / 35.39, 8192 x 8192 (256) 32.52 / 33.37 against 34.42 / 35.22, 8192 x 11008 (256)
  // 43.05 / 43.60 against 44.93 / 45.42. With three or four parts it won at M = 1 only (5632 x 12288 33.49 against
  // 34.48, 4224 x 16384 33.98 against 34.57) and lost at 16 (35.76 against 35.52, 37.56 against 35.95); with fewer
  // CTAs it lost (7168 x 14336: 224 CTAs, 52.35 against 51.22).
  if (at_least_128_mib(p) && c.tile_m <= 16 && 2 * tiles64 <= slots &&
      20 * 2 * tiles64 >= 19 * int64_t{slots}) {
    cut.lead_split(false, true);
    c.stages = 5;
    return c;
  }
  // Session 46 (rule V): at the 64-token tile, 64-row tiles 1 to 6 per SM with K <= 5376 (rule O's misaligned K only up
  // to 1536, since session 51: below):
  // one CTA per tile over the whole K (two boxes per stage, a 3-stage ring) instead of stream-K, as rule G does for
  // clusters of two. x1 / stream-K at M = 48 / 64, us (y's rows misaligned, where the first cut is the pick): 10007 x
  // 1016 16.38 / 16.64 against 20.83 / 23.06 (heuristic-twentyfifth-5d2561e.json), 16388 x 5376 45.30 / 43.86 against
  // 52.82 / 52.19 (the same), 25933 x 1280 0.89-0.94x (twentysecond-d02342d), 32002 x 4096 0.92x (nineteenth-d6706fb),
  // 49155-50265 x 1024-2560 0.90-1.00x (sets eighteen to twenty-two), 22779-22790 x 1408 / 2560 0.92-1.00x, 12628 /
  // 12709 x 5120 0.94-1.05x, 10970 x 3136 0.95 / 1.03x. Outside, stream-K stays: K over 5376 (9995 x 12288 1.20-1.39x,
  // 19998 x 8192 1.02-1.04x, 15367 x 16384 1.00-1.02x), rule O's K (11003 x 3080, K % 64 = 8: 1.07-1.10x), past 6 per
  // SM (51865 x 1024 and up: 1.01-1.07x) and under 1 per SM (589 x 16120, 1002 x 16384: 1.76-2.03x, where rule I's
  // stream-K at one CTA per SM takes most; up to 132 tiles a cluster or rule G comes first). Session 46's blind set
  // twenty-seven on the H100 (after the rule) found V 1.00-1.16x stream-K on 19001 x 960 / 1024, 50687 x 1152 and 10001
  // x 5376 at M = 48-64, and the one-box 4-stage tile (tma_m64_r64_b1_s4_x1) 0.69-0.95x V's at K <= 2560 from 2 tiles
  // per SM (docs/tuning.md "Session 46"). Session 47: one box per stage on a 4-stage ring where the tiles outnumber the
  // two-per-SM slots with K <= 2560, a multiple of 64 (as rules S, W and K: three such CTAs fit an SM). H100, set
  // twenty-seven: 0.69-0.95x the two-box tile from 265 tiles (16901 x 1600, 19001 / 24001 x 960 / 1024, 25140 x 2560,
  // 50257 x 1024, 50687 x 1152), 1.10x at 264 (16895 x 1600), 1.05-1.38x above K = 2560 or at K % 64 != 0. Session 47,
  // the H100's blind set twenty-eight: 0.73-0.92x on 16897 x 832, 21749 / 23557 x 960 / 1024, 25140 x 2048 and 50257 x
  // 768 (265-786 tiles), but 1.09-1.10x on 25413 x 2560 (398 tiles) and 33337 x 1024 (521), whose last wave of three
  // CTAs per SM holds 2 and 125 of 396 (h100/heuristic-twentyeighth-6dcfcef.json): so only tiles that fit one such
  // wave, or fill the last one to nine tenths (786 and 792 tiles: 390 / 396 of 396). Past one wave it was measured at K
  // 768-1536 only (H100, set twenty-nine: 48701 x 1280 and 49155 x 1536, 761 and 769 tiles, 0.95-0.99x V's tile at M =
  // 48-64), so there K stops at 1536 (50257 x 2560, 786 tiles, keeps V's tile: unmeasured with one box).
  const int64_t wave3 = 3 * int64_t{sms}, last_wave = tiles64 % wave3;
  const bool full_waves3 =
      tiles64 <= wave3 || (p.k <= 1536 && (last_wave == 0 || 10 * last_wave >= 9 * wave3));
  if (c.tile_m == 64 && tiles64 > slots && full_waves3 && p.k <= 2560 && p.k % kStageK == 0) {
    c.cluster = 1, c.boxes = 1, c.stages = 4;
    if (note) *note = "one CTA per 64-row tile of one box per stage on a 4-stage ring at 64 tokens, where the tiles "
                      "outnumber the slots and fill waves of three per SM (session 47)";
    return c;
  }
  // Session 51: rule O's misaligned K too up to K = 1536 (12 stages of 128). x1 / stream-K at M = 48 / 64, us: 9431 x
  // 1032 15.85 / 17.16 against 19.59 / 23.08, 23551 x 1480 0.96-0.97x and, through the 128-row tiles below, 23555 x 1480
  // 40.84 / 40.64 against 46.26 / 51.75 (H100, set thirty-four, blind: h100/heuristic-thirtyfourth-fb21188.json); 10007 x
  // 1032 0.75-0.85x on both GPUs (h200/heuristic-twentyfifth-5d2561e.json, h100/heuristic-twentyfifth-cf3baed.json),
  // 14001 x 1032 0.68-0.72x on the H100 (h100/heuristic-twentyseventh-3cc07e6.json). Offline over every report: 12
  // points change timed both ways, all faster (H200 44.4 -> 36.0 us, H100 330.4 -> 275.1). Past 1536 stream-K stays
  // (11003 x 3080: x1 1.07-1.10x on the H200).
  const bool v_k = p.k <= 5376 && (!misaligned_k_rows(p) || p.k <= 1536);
  if (c.tile_m == 64 && tiles64 >= sms && tiles64 <= 6 * int64_t{sms} && v_k) {
    c.cluster = 1, c.boxes = 2, c.stages = 3;
    if (note) *note = "one CTA per 64-row tile, not stream-K, where the tiles give 1-6 per SM with K <= 5376 at 64 "
                      "tokens (session 46)";
    return misaligned_k_128_rows(p, slots, c, note);
  }
  c.boxes = 2;
  c.stages = c.tile_m == 64 ? 3 : 4;
  c.ctas_per_sm = 2;
  c.min_units = 1;
  return misaligned_k_128_rows(p, slots, c, note);
}

}  // namespace

Config first_cut_config(const Problem& p, int sms, int lead, std::string* note) {
  if (note) note->clear();
  Config c;
  c.family = Family::Tma;
  c.tile_m = p.m <= 8 ? 8 : p.m <= 16 ? 16 : p.m <= 32 ? 32 : 64;
  if (p.n < 1 || p.k < 1) {  // no row tile or no stage to split (forced_config("tma") takes any problem): one CTA a tile
    c.rows = 64, c.boxes = 2, c.stages = 4, c.cluster = 1;
    return c;
  }
  // The lead split where each 32-row tile gets 2 to 8 parts at two CTAs per SM (2112 x 7168 M = 1: 9.3 us, the
  // cluster split 10.3 and stream-K 10.1 in the same probe call; docs/kernels.md "Session 7"); not by default
  // (tma_family.h: it loses in the whole step).
  const Grid split = lead_split_grid_for(p.n, p.k, 32, 2, 2, lead < 0 ? 0 : lead, sms);
  if (lead >= 0 && c.tile_m <= 16 && split.k_stages >= 16 && split.parts >= 2 && split.parts <= 8 &&
      !at_least_128_mib(p)) {
    c.rows = 32, c.boxes = 2, c.stages = 7, c.ctas_per_sm = 2, c.lead = lead;
    return c;
  }
  c.rows = 64;
  Cut cut{p, sms, 2 * sms, lead, note, c};
  // Session 37 (rule K): 64-row tiles numbering 2.7 to 3 per SM (357-396 on H200; no cluster fits there), K from 1536
  // (1024 since session 46, below) to 10240 and a multiple of 64: one CTA per tile with one box per stage on a ring
  // that fits three per SM (4 stages until session 51, then the deepest: one_box_tiles), so the whole grid is resident
  // at once, instead of stream-K or 32-row tiles. On the recorded shapes of the band (one-box tile / pick, us ratio at M = 1-16;
  // the rule's own data, heuristic-*.json): 24000 x 3072 0.93-0.94, 24576 x 4096 0.94-0.95, 25088 x 5120 0.95-0.97,
  // 25256 x 5120 (395 tiles) 0.93-0.95, 25008 x 3072 0.91-0.98, 24576 x 1536 (32-row tiles picked) 0.92-0.95, 23040 x
  // 3072 0.94-1.01, 23701 x 8192 0.98-1.01, 25013 x 10240 0.98-1.02; 24576 x 6144 0.95-0.96 at M = 12-16 (at M = 1-8
  // the grid was not timed and cuBLASLt was 5-7% ahead of stream-K). Past 3 per SM the grid no longer fits at once and
  // the same config lost 15-22% (25501 x 8000, 399 tiles; 25600 x 5120, 400); below 2.7 it lost 0-7% (22528 x 8192 at
  // 2.67, 21888 x 4096 at 2.59). Not measured then: K outside 1536-10240 or not a multiple of 64, and the 32- and
  // 64-token tiles (rule H's band). Session 41 (rule Q): the 32-token tile too (y's rows not 16-byte aligned, where the
  // first cut is the pick there). One-box tiles / stream-K at M = 24 / 32, us: 22790 x 2560 (357 tiles) 29.69 / 30.18
  // against 33.06 / 33.63 (heuristic-twentythird-36a5aea.json, blind), 25247 x 2048 (395) 25.71 / 25.52 against 29.67 /
  // 30.25 (twentysecond-d02342d): 0.84-0.90x. Offline over every report: 10 points change, 6 timed both ways (those;
  // 25247 x 2048 is in two reports), all faster, 186.5 -> 162.3 us, within 5% 0 -> 6; 4 unmeasured (23701 x 8192 and
  // 25013 x 10240 at M = 24 / 32). Just below the line 22781 x 2560 (356 tiles, 2.697 per SM) ran the same 0.90x and
  // kept stream-K (rule W takes it since session 46); 24003 x 4040 (K % 64 = 8) ran it 1.05-1.12x and keeps it too. The
  // 64-token tile was not measured, nor 396 tiles at the 32-token tile (N = 25281-25344), which rule H below took
  // before and this rule takes now. Session 46: K from 1024 (it started at 1536, where its data started). Just past 2.7
  // per SM the 32-row lead split (M <= 16) and stream-K (M = 24-32) lost at every point on the two such shapes: 22789 x
  // 1408 (357 tiles) one-box tile 16.10-17.04 us against 17.61-19.03 at M = 1-16 and 17.36 / 17.58 against 21.78 /
  // 22.29 at M = 24 / 32 on the H200 (heuristic-twentyfifth-5d2561e.json, blind), 0.81-0.96x on the H100
  // (h100/heuristic-twentyfifth-cf3baed.json); 22787 x 1216 0.81-0.94x on the H100
  // (h100/heuristic-twentysixth-cb7656b.json, blind). Offline over every report 20 H200 and 20 H100 points change, all
  // faster, within 5% 0 -> 20 and 6 -> 20. K 1024-1535 nearer 3 per SM (24576 x 1024 / 1472) is unmeasured. Session 47:
  // K from 832, session 48 from 768 and then 704, session 49 from 640, session 51 from 576 (kOneBoxMinK).
  const int64_t tiles64 = (p.n + 63) / 64;
  if (c.tile_m <= 32 && p.k >= kOneBoxMinK && p.k <= 10240 && p.k % kStageK == 0 && 10 * tiles64 >= 27 * int64_t{sms} &&
      tiles64 <= 3 * int64_t{sms}) {
    if (note) *note = "one CTA per 64-row tile of one box per stage, all resident at three per SM, where those tiles "
                      "give 2.7-3 per SM (sessions 37, 41, 46-51)";
    return cut.one_box_tiles();
  }
  if (!at_least_128_mib(p)) {
    cut.c.boxes = c.tile_m == 64 ? 1 : 2;
    const Grid g = cluster_grid_for(p.n, p.k, cut.c.rows, cut.c.boxes, 1);
    // K <= 2048: at most 32 boxes of 64. K = 2048 counts since session 17: 13000 x 2048 (204 tiles of 64, no cluster
    // fits) ran stream-K 16.0-16.9 us at M <= 16 against 13.9-14.4 for one CTA per 64-row tile (set eleven at e2c09d8,
    // blind), 11111 x 2048 stream-K 14.1-14.9 against 12.1-12.7 in 32-row tiles (set ten at 2eaefeb, blind).
    const bool short_k = g.k_stages * cut.c.boxes <= 32;
    for (int x : {8, 4, 2}) {
      const int64_t ctas = static_cast<int64_t>(g.tiles) * x;
      // At M <= 16 each CTA of a cluster keeps at least 1.75 stages (1536 x 1536, 12 stages, M = 1: clusters of 8
      // 3.95 us, of 4 3.24; 1000 x 1024, 8 stages: 3.28 and 2.94; 1152 x 896, 7 stages: 4 CTAs still the best;
      // held-out set six at 516a0f1); the 32- and 64-token tiles keep the session-8 rule (one stage), unmeasured.
      const int min_stages_x4 = c.tile_m <= 16 ? 7 : 4;  // stages per CTA, times 4
      if (4 * g.k_stages < min_stages_x4 * x || ctas > cut.slots) continue;
      return clustered(cut, x, g, short_k);
    }
    Config short_cut;
    if (unclustered_short(cut, g, &short_cut)) return short_cut;
  }
  return unclustered(cut);
}

}  // namespace skinnygemm::tma
