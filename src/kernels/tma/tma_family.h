// The TMA family on the host: which problems it takes, its first-cut config, its launch (tma_launch.cu).
// Host-only declarations (the CPU build includes this header; only tma_launch.cu needs CUDA).
#pragma once

#include <string>
#include <vector>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "kernels/tma/tma_shape.h"
#include "skinnygemm/problem.h"

namespace skinnygemm::tma {

// Shape checks of a tma config (the caller checked device, build and the 16-byte alignment the copy engine
// needs for pointers and row strides): M within the token tile, K a positive multiple of 8, the ring within the
// device's shared memory, coordinates within the copy engine's 32-bit range, 4 or 8 boxes per stage only on 16- and
// 32-row tiles at token tiles 8 and 16 (the instances built).
bool fits(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not);

// A structural first cut (not tuned per shape), chosen on the probe's sweeps (tools/probes/tma_family.cu,
// docs/kernels.md "Session 6" and "Session 7") and the whole step (docs/step.md "Session 8"): the smallest token
// tile holding M, then
// - with lead >= 0 (the step's probe knob SKINNYGEMM_STEP_TMA_LEAD), at M <= 16 under 128 MiB of weights with K of
//   16 or more 128-wide stages, the lead split of 32-row tiles (7 stages) when that gives every tile 2 to 8 parts:
//   alone 0.3-0.6 us faster per call on 2112, 1536 and 3648 x 7168 at M = 1-8, but the whole step with it was 6.6%
//   slower (8204 vs 7658 us at M = 1, leads 0, 3 and 9 alike; step-lead*-38281141.json);
// - at M <= 16 where 64-row tiles number 2.7 to 3 per SM and K is 576-10240 (a multiple of 64), one CTA per tile of
//   one box per stage on the deepest ring that keeps three per SM (7 stages at the 8-token tile, 6 at 16, 5 at 32;
//   4 until session 51), the whole grid resident (rule K, session 37: 23040-25256 rows), and the same at 2 to 2.7 per
//   SM where K is 576-2560 (rule S, sessions 42, 45-51; rule K from K = 1024 in 46, 832 in 47, 704 in 48, 640 in 49,
//   576 in 51);
// - otherwise 64-row tiles and, under 128 MiB of weights, split-K by the largest cluster (8, 4, 2) whose clusters
//   all fit at two CTAs per SM (two 64-wide K boxes per stage, one for the 64-token tile; 4 stages, 3 when the grid
//   leaves the next kernel little room or, at M <= 16, some SMs hold two CTAs of at most 4 stages each; where clusters
//   of four leave the next kernel little room with 10 or more stages per CTA, at token tiles up to 32, clusters of two
//   on a 4-stage ring instead: session 33, 4002 x 8192 and eight shapes of earlier sets; at M <= 4 the 64-row lead
//   split on a 4-stage ring there: session 34, 4002 x 5120 and 4096 x 10240; clusters of half the size on a 4-stage
//   ring at M <= 16 where the CTAs have at most 2 stages each and more than 1.25 per SM, session 16 (clusters of
//   eight with at most 3, rule J, session 37: 1920 x 2560, 1514 and 2048 x 3072), or are fours
//   that fill the slots with at most 2.75 stages each, session 34: 3840 x 1280, 4096 x 1376 / 1408). Where that
//   cluster is four 64-row CTAs per tile and gives more CTAs than SMs but at most 1.5 x as many, each with 5 or more
//   stages, at M <= 16: the 64-row lead split at M <= 2 and, with 7 or more stages, 32-row tiles at M >= 3 instead,
//   in clusters of four, or of two where four would put more than 2.75 CTAs on an SM (held-out shapes, sessions 12
//   and 16: first_cut.cpp). At the 64-token tile a cluster of CTAs with more than 192 KiB each on fewer CTAs than SMs
//   becomes stream-K at one CTA per SM (session 35; two per SM before) where that gives each row tile at most 32 CTAs
//   (below 64 tokens the cluster of 8 stays there since session 33: 1002 x 16384, set eighteen; at M <= 2 stream-K at
//   one CTA per SM instead from 15 row tiles, sessions 34-35: 1002 / 1024 x 16384 and 1000 x 15000).
//   Where only a cluster of two fits, at M <= 16, the 64-row lead split with a lead of 6 stages (or the lead asked
//   for) instead: judged in the whole step (step --search-table at 717be70), it was faster than the cluster of two
//   on every such shape the step launches more than once, at M = 1, 4 and 16 (per launch 0.2-0.9, 0.1-1.3 and
//   0.2-2.4 us: 7168 x 768, 7168 x 1536, 7168 x 3584, 6288 x 7168); its ring holds 5 stages where every part has 8
//   or more (in step trials 52-116 us faster at M = 1 / 8 / 16 on the three large shapes, session 17) and, since
//   session 35, where halves leave the other part 4 or more and thirds 6 or more, and since session 46 any halves on
//   at most slots - SMs / 4 CTAs; 4 otherwise. Where K has fewer stages than the lead plus one (7168 x 768: 6 stages)
//   every tile is one part, i.e. one CTA per 64-row tile; in 32-row tiles on an 8-stage ring instead where those
//   number at most the SMs with K >= 512 (session 48: 4096 x 688 / 768, where 64-row tiles leave half the SMs idle).
//   Where no cluster fits, at M <= 16: one CTA per row tile where that fills nine tenths of the slots or K is at most
//   3072 (session 17), in 32-row tiles where K is at most 3072 unless the 64-row ones fill three quarters of the
//   slots and no more (session 16) or give 1.5 x the slots or more (session 33: 32768 x 1024 and six shapes more;
//   since session 48 128-row tiles of one box per stage there where those fill their waves of two per SM to 85% or
//   more with K <= 2048, and otherwise one box per stage on a 5-stage ring where K is 512-768 with 5 or more tiles per
//   SM; at M <= 2 stream-K there unless the 128-row tiles fill their waves with K over 768);
// - at 128 MiB or more and M <= 16, one CTA per 64-row tile where the tiles fill nine tenths of the slots and no more
//   (session 17), and from M = 3 where they outnumber the slots with K 1024-3072 (session 48);
// - at the 32-token tile, one CTA per 64-row tile for 1-2 tiles per SM where K is 704-1664 or the tiles give 1.75 per
//   SM or more with K <= 5376 (sessions 48-49);
// - at the 64-token tile where K is not a multiple of 64 and 128-row tiles give 0.7x the slots or more, those tiles
//   of one box per stage on a 3-stage ring in the grid chosen (rule Y, session 49); where no cluster fits at M = 2-16
//   with K <= 1024 not a multiple of 64, the 64-row lead split on a 5-stage ring instead of 32-row tiles (session 49); clusters of four that fill the slots keep the 4-stage ring from 9 stages of
//   128 per CTA on at most slots - SMs / 8 CTAs (sessions 47-48), and there keep the cluster at 32-64 tokens;
// - otherwise stream-K over two CTAs per SM.
// Session 35 (rules E-I, fitted offline to the recorded held-out sets; docs/tuning.md "Session 35"): one CTA per 32-row
// tile where those give 2.6-3 CTAs per SM and K > 3072 (E); 32-row tiles with an 8-stage ring at M = 5-16 where rule 2
// halves filled fours (F; in clusters of two until session 42, the lead split of lead 9 since: rule T); one CTA per
// 64-row tile at 32-64 tokens where the tiles fill nine tenths of the SMs (G), and at the 32-token tile on 1.5x the
// slots or more (H); stream-K at one CTA per SM at the 64-token tile in rule 1's band (I), and rule A there only from
// 15 row tiles; a 3-stage ring at the 8-token tile for clusters of 7/8 of the SMs or more with <= 4 stages each; the
// lead split's 5-stage ring also for halves of 4+ and thirds of 6+ stages. Session 39 (rule M): one CTA per 64-row tile
// at 32-64 tokens also where clusters of two or four fill the two-per-SM slots with K <= 4096. With note, the rules of
// session 33 on name themselves there (one line; empty where none fired), for the structural pick's reason.
// Session 46 (rules V and W, fitted to the recorded sets, judged on the H100's set twenty-six): one CTA per 64-row tile
// at the 64-token tile for 1-6 tiles per SM with K <= 5376, and rule S's one-box tiles at the 32-token tile (K from
// 1024), both instead of stream-K.
Config first_cut_config(const Problem& p, int sms, int lead = -1, std::string* note = nullptr);

// The grid a config launches on p with sms SMs: clusters (x1: one CTA per row tile over the whole K), the lead split or
// stream-K. One function for the launcher, supports() and the heuristic's reasons, so that they agree.
Grid launch_grid(const Config& c, const Problem& p, int sms);

// The heuristic's pick of the family (issue 18): the first cut at M <= 16 on sm_90, with a reason naming the grid it
// gives (row tiles, the split, CTAs against two-per-SM slots, weight bytes per CTA). False where that grid has fewer
// CTAs than a quarter of the SMs and 1 MiB or more of weights, or less but more K stages per CTA than its ring holds
// (narrow rows; one-tile shapes such as 1 x 8192 and 24 x 16384: tma_family.cpp; above 16 tokens, two or more row
// tiles of at most 256 KiB per CTA keep the pick: rule R, session 42; at 9-16 tokens clusters of eight on 3 or more
// tiles whose shares fit the ring keep it over 1 MiB: rule Z, session 49), and at M > 16 where y's rows are
// 16-byte aligned: there the 32- and 64-token tiles lose to cuBLASLt alone on every Kimi-K3 TP8 shape but two (M = 32,
// best of ~205 configs each: 2112 x 7168 12.88 vs 12.53 us, 7168 x 1536 9.22 vs 8.06; 3648 x 7168 17.25 vs 18.48;
// tune at 9d9b7ef) and in the whole step (0.86 and 0.65 of cuBLASLt at M = 32 and 64, docs/step.md), so the scored
// heuristic decides, except at 17-32 tokens where the first cut is a cluster of eight (two boxes per stage) on half the
// SMs or more (rule U, session 46: 0.71-0.99x the scored pick on six of seven such held-out shapes; since session 48
// also of at most 9 stages per CTA on 2 or more tiles), and at 33-48 tokens where it is a cluster of eight on 2-18
// tiles with 4-10 boxes of 64 per CTA (rule X, session 49), and at 17-64 tokens where it is a cluster of eight on one
// row tile of 32 rows or more with 8-18 boxes of 64 per CTA (session 51; also past the narrow grids' line).
// Where y's rows are not 16-byte aligned (N % 8 != 0 in BF16/FP16, packed) the first cut is the pick up to M = 64:
// cuBLASLt (the library's
// configuration, its best listed algorithm and torch's alike) ran 1.8-4.9x slower than the first cut on all 15 odd-N
// shapes of held-out sets sixteen and seventeen at M = 17-64 (19401 x 8192 at M = 24: 80.2 us against 345.2, 5.3x the
// stream-read time; 5003 x 1024: 6.56 against 16.69; session 32, call 3, docs/tuning.md "Session 32"), while the scored
// heuristic picked cuBLASLt at every one of those points. The pick is cuBLASLt's default instead of the first cut
// (session 34, rule B) where K % 64 != 0 (each 64-wide box copied alone, x's rows not 128-byte aligned) on 16-byte
// aligned y rows and the first cut has no cluster: at M >= 9, and from M = 2 where more 64-row tiles than SMs leave no
// cluster (12000 x 2056, 40000 x 1096: tma_family.cpp).
bool structural_pick(const Problem& p, const DeviceInfo& dev, Config* pick, std::string* reason);

}  // namespace skinnygemm::tma

namespace skinnygemm {
struct OutputSegment;
}

namespace skinnygemm::tma {

// CUDA builds only (tma_launch.cu): whether every dtype's instance of c is built, and the launch (PDL, the
// stream-K grid, tensor maps of x and w, the split reduction's workspace of the stream). With segments
// (1..4), output rows go to each segment's destination instead of y.
bool is_built(const Config& c);
void launch(const Problem& p, const Config& c, const void* x, const void* w, void* y, void* stream,
            const OutputSegment* segments = nullptr, int count = 0);
// The lab's host-time row (`skinnygemm overhead --backend cuda`): the tensor-map encodes launch() makes for c on p,
// without a launch, for the main kernel's decompositions (not the row stream's: an Error); whether they are the 3D
// views (one copy per stage).
bool encode_launch_maps(const Problem& p, const Config& c, const void* x, const void* w);
// How many CTAs of c's kernel (BF16, its launch's dynamic shared memory) one SM of the current device holds at once
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor): the GPU's check of the structural pick's three-per-SM arithmetic
// (first_cut.cpp, one_box_tiles). Main-kernel configs only.
int resident_ctas_per_sm(const Config& c);

// The lab's timeline of TMA launches (lab/cuda/step.cu, `step --trace-tma`): while a sink is set, every launch
// (captured into a graph, or run) gets the next kTraceWords x CTAs words of it, where each of its CTAs writes
// {entry, after griddepcontrol.wait, exit, SM, first stage landed, last stage multiplied, the other parts' sums
// gathered (lead-split reducers of token tiles <= 16; 0 elsewhere)} (%globaltimer ns), and is listed; the graph's
// replays rewrite the same words.
// One sink per process, for launches on the device that owns its words (the lab traces one GPU); launches from
// several threads are listed in the order they took their words; one that would pass the sink's end fails with
// the sizes. With no sink set a launch pays one atomic load.
struct TraceLaunch {
  Problem problem;
  std::string config;
  long long offset = 0;  // first word of its CTAs in the sink
  int ctas = 0;
};
void set_trace(unsigned long long* device_words, long long capacity_words);  // null: off
std::vector<TraceLaunch> take_trace();  // the launches since set_trace, in launch order; resets the list
// The lab's ablation, timing only (lab/cuda/step.cu, lab/cuda/measure.cu): launches made while set carry
// TmaParams::ablate's bits (bits 1-16: wrong results; 32: the old L2 promotion, correct); 0, the library's value,
// restores them.
void set_ablate(int bits);
// set_ablate(bits) for a scope (0: nothing set), restored to 0 at its end, also when a launch in it throws.
struct AblateScope {
  explicit AblateScope(int bits) {
    if (bits) set_ablate(bits);
  }
  ~AblateScope() { set_ablate(0); }
  AblateScope(const AblateScope&) = delete;
  AblateScope& operator=(const AblateScope&) = delete;
};

}  // namespace skinnygemm::tma
