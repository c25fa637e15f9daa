// Issue 4's held-out evaluation: models/heldout.json (other models' shapes, never Kimi-K3's, never in a
// shipped table), the tuner's heuristic report (rows of kind "heuristic" and the summary), and --no-store.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/device_presets.h"
#include "lab/models.h"
#include "skinnygemm/skinnygemm.h"
#include "lab/tuner.h"

namespace skinnygemm {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Shape = std::pair<int64_t, int64_t>;

std::set<Shape> kimi_shapes() {
  std::set<Shape> out;
  for (int tp : models::model_info("kimi_k3").tps)
    for (const models::Projection& p : models::model_projections("kimi_k3", tp, true)) out.insert({p.n, p.k});
  return out;
}

TEST(Heldout, AtLeast24ShapesNoneOfThemKimiK3) {
  EXPECT_EQ(models::model_info("heldout").tps, std::vector<int>{1});
  const std::vector<models::Projection> shapes = models::parse_shapes("model:heldout:tp1");  // deduplicated
  EXPECT_GE(shapes.size(), 24u);
  const std::set<Shape> kimi = kimi_shapes();
  ASSERT_GT(kimi.size(), 20u);  // the comparison below means something only against the real file
  for (const models::Projection& p : shapes) {
    EXPECT_FALSE(p.name.empty());
    EXPECT_EQ(p.k % 8, 0) << p.name << " " << p.shape();  // 16-byte aligned rows: every kernel family applies
    EXPECT_EQ(kimi.count({p.n, p.k}), 0u) << p.name << " " << p.shape() << " is a Kimi-K3 shape";
  }
}

// Every held-out set, in the order they were written: a set is judged new against all the sets before it, and no
// shipped table may hold a shape of any of them.
constexpr const char* kHeldoutSets[] = {"model:heldout:tp1",        "model:heldout_blind:tp1", "model:heldout_third:tp1",
                                        "model:heldout_fourth:tp1", "model:heldout_fifth:tp1", "model:heldout_sixth:tp1",
                                        "model:heldout_seventh:tp1", "model:heldout_eighth:tp1",
                                        "model:heldout_ninth:tp1", "model:heldout_tenth:tp1",
                                        "model:heldout_eleventh:tp1", "model:heldout_twelfth:tp1",
                                        "model:heldout_thirteenth:tp1", "model:heldout_fourteenth:tp1",
                                        "model:heldout_fifteenth:tp1", "model:heldout_sixteenth:tp1",
                                        "model:heldout_seventeenth:tp1", "model:heldout_eighteenth:tp1",
                                        "model:heldout_nineteenth:tp1", "model:heldout_twentieth:tp1",
                                        "model:heldout_twentyfirst:tp1", "model:heldout_twentysecond:tp1",
                                        "model:heldout_twentythird:tp1", "model:heldout_twentyfourth:tp1",
                                        "model:heldout_twentyfifth:tp1", "model:heldout_twentysixth:tp1",
                                        "model:heldout_twentyseventh:tp1", "model:heldout_twentyeighth:tp1",
                                        "model:heldout_twentyninth:tp1", "model:heldout_thirtieth:tp1",
                                        "model:heldout_thirtyfirst:tp1", "model:heldout_thirtysecond:tp1",
                                        "model:heldout_thirtythird:tp1", "model:heldout_thirtyfourth:tp1",
                                        "model:heldout_thirtyfifth:tp1"};

// A later held-out set: at least 24 shapes, K a multiple of 8, none of them Kimi-K3's or in an earlier set.
void expect_new_heldout_set(const std::string& set) {
  std::set<Shape> earlier;
  bool listed = false;
  for (const char* e : kHeldoutSets) {
    if (set == e) {
      listed = true;
      break;
    }
    for (const models::Projection& p : models::parse_shapes(e)) earlier.insert({p.n, p.k});
  }
  ASSERT_TRUE(listed) << set << " is not in kHeldoutSets";
  const std::vector<models::Projection> shapes = models::parse_shapes(set);
  EXPECT_GE(shapes.size(), 24u) << set;
  const std::set<Shape> kimi = kimi_shapes();
  for (const models::Projection& p : shapes) {
    EXPECT_EQ(p.k % 8, 0) << p.name << " " << p.shape();
    EXPECT_EQ(kimi.count({p.n, p.k}), 0u) << p.name << " " << p.shape() << " is a Kimi-K3 shape";
    EXPECT_EQ(earlier.count({p.n, p.k}), 0u) << p.name << " " << p.shape() << " is in an earlier held-out set";
  }
}

// The second, blind set (models/heldout_blind.json): written before any measurement on it, disjoint from the
// first set (which the session-3 heuristic's rules were chosen after), from Kimi-K3 and from the tables.
TEST(Heldout, BlindSetIsNewAtLeast24ShapesNoneKimiNoneOfTheFirstSet) {
  expect_new_heldout_set("model:heldout_blind:tp1");
}

// The third set (models/heldout_third.json): written in session 4, after the second set had been measured and
// before any measurement on it; disjoint from both earlier sets and Kimi-K3.
TEST(Heldout, ThirdSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_third:tp1");
}

// The fourth set (models/heldout_fourth.json): written in session 4 after the third had been measured in part,
// before any measurement on it; for judging the next change of the heuristic.
TEST(Heldout, FourthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_fourth:tp1");
}

// The fifth set (models/heldout_fifth.json): written in session 5 after the fourth had been measured with the
// session-5 heuristic, before any measurement on it; for judging the next change of the heuristic.
TEST(Heldout, FifthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_fifth:tp1");
}

// The sixth set (models/heldout_sixth.json): written in session 9 (2026-12-01) for issue 18, before any
// measurement on it; never to be tuned or stored in a table.
TEST(Heldout, SixthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_sixth:tp1");
}

// The seventh set (models/heldout_seventh.json): written in session 10 (2026-12-01) for issue 18, after the sixth
// had been measured and the rules changed on it, before any measurement on it; never to be tuned or stored in a table.
TEST(Heldout, SeventhSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_seventh:tp1");
}

// The eighth set (models/heldout_eighth.json): written in session 13 (2026-12-02) for issue 18, after the seventh had
// been measured at 306 of its 348 points, before any measurement on it; never to be tuned or stored in a table.
TEST(Heldout, EighthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_eighth:tp1");
}

// The ninth set (models/heldout_ninth.json): written in session 15 (2026-12-02) for issue 18, after the eighth had been
// measured at 222 of its 348 points (85265f9) and the one-tile rule, before any measurement on it; never to be tuned or
// stored in a table.
TEST(Heldout, NinthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_ninth:tp1");
}

// The tenth set (models/heldout_tenth.json): written in session 16 (2026-12-02) for issue 18, after the ninth's first
// run (348 points at 581d850) and the three rules drawn from it, before any measurement on it; never to be tuned or
// stored in a table.
TEST(Heldout, TenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_tenth:tp1");
}

// The eleventh set (models/heldout_eleventh.json): written in session 16 (2026-12-02) for issue 18, after the tenth's
// first run (348 points at 2eaefeb) and the rules drawn from sets nine and ten, before any measurement on it; never to
// be tuned or stored in a table.
TEST(Heldout, EleventhSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_eleventh:tp1");
}

// Set twelve (session 17): written before its first run at c942f9d (docs/tuning.md "Session 17"); rule 9 came from it.
TEST(Heldout, TwelfthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twelfth:tp1");
}

// Set thirteen (session 17): written after rules 6-9 and the 5-stage ring, never run: the next blind judgment of them.
TEST(Heldout, ThirteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirteenth:tp1");
}

// Set fourteen (session 27): written after set thirteen's blind run and the first-cut changes of sessions 19 and 24,
// never run: the next blind judgment of the rules.
TEST(Heldout, FourteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_fourteenth:tp1");
}

// Set fifteen (session 28): written after set fourteen's blind run, never run: the next blind judgment of the rules.
TEST(Heldout, FifteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_fifteenth:tp1");
}

// Set sixteen (session 30): written after set fifteen's blind run, never run: the next blind judgment of the rules
// and of session 29's hypothesis (K >= 8192 and over 2.3 waves of 64-row tiles: cuBLASLt at M <= 16), with shapes on
// both sides of its lines.
TEST(Heldout, SixteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_sixteenth:tp1");
}

// Set seventeen (session 31): written after the TMA family's weight maps lost their L2 promotion (3f845d8), before any
// run (its first, blind and cut short: session 31, call 7): the next blind judgment of the heuristic and of session 30's hypothesis (stream-K on 128-row tiles at M <= 5 at least
// as fast as on 64-row tiles from 1.76 waves of 64-row tiles), with shapes on both sides of that line and well over it.
TEST(Heldout, SeventeenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_seventeenth:tp1");
}

// Set eighteen (session 32): written after set seventeen's finished run and the rule of 6491d4d (the TMA family up to
// M = 64 where y's rows are not 16-byte aligned), before any run: the next blind judgment of the heuristic and of that
// rule's hypothesis (cuBLASLt several times slower than the weight stream at M = 17-64 wherever N % 8 != 0), with 13
// shapes of N % 8 != 0 (five odd N, eight even N not a multiple of 8) and 16 controls with N % 8 == 0.
TEST(Heldout, EighteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_eighteenth:tp1");
}

// Set nineteen (session 33), written blind after set eighteen's run: 22 real decode projections of models no earlier set
// used (6 of them vocabularies with N % 8 != 0) and 6 synthetic odd.* shapes, K 1024-16384, four K not multiples of 64.
TEST(Heldout, NineteenthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_nineteenth:tp1");
}

// Set twenty (session 33), written blind after set nineteen's run by a helper that read no measurement: 22 real decode
// projections of models and sizes no earlier set used (3 of them with N % 8 != 0) and 6 synthetic odd.* shapes (2 with
// N % 8 != 0), K 1024-16384, six K not multiples of 64.
TEST(Heldout, TwentiethSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentieth:tp1");
}

// Set twenty-one (session 34), written blind by a helper that read no measurement and no heuristic code: 22 real decode
// projections no earlier set used (3 of them with N % 8 != 0: vocabularies 50257, 49155 and Code Llama 13B's 32016 / 4),
// four of them routed experts, and 6 synthetic odd.* shapes (2 with N % 8 != 0), K 1024-16120, six K not multiples of 64.
TEST(Heldout, TwentyFirstSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyfirst:tp1");
}

// Set twenty-two (session 35), written blind after rules E-I and the two ring sizes (a809324), by a helper that read no
// measurement: 29 shapes on both sides of each session-35 rule's edge (E, F, G, H, I, the 3-stage ring at 7/8 of the SMs,
// the lead split's 5-stage ring for halves and thirds) and of session 34's A, C and D; 16 real decode projections, 13
// synthetic odd.* sizes, 15 with N % 8 != 0 (where G, H and I can show above 16 tokens).
TEST(Heldout, TwentySecondSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentysecond:tp1");
}

// Set twenty-three (session 40), written blind at 621fd44 by a helper that read no measurement: 30 shapes, 17 real decode
// projections no earlier set used (lm_heads of Llama-3.2-3B, Llama-3.1-405B TP16, Falcon-7B, SeamlessM4T, GPT-J, OPT,
// Pythia, Qwen2.5-14B; downs of ChatGLM3, Hunyuan-Large, Orion-14B) and 13 synthetic odd.* sizes in pairs across the
// edges of rules K, E, I / A, G, D, J and C / F; 14 with N % 8 != 0, 12 with K % 64 != 0.
TEST(Heldout, TwentyThirdSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentythird:tp1");
}

// Set twenty-four (session 41), written blind at 085d066 by a helper that read no measurement: 32 shapes, 16 real decode
// projections no earlier set used (qkv, o_proj, gate_up, down and lm_heads of Gemma-2-27B, gpt-oss-120b, Nemotron-4-340B,
// Llama-2-13B, Gemma-7B, GLM-4-9B, Code Llama 34B, Command R+, MiniCPM4-8B, Qwen3-30B-A3B, Llama-4-Scout at TP 1-16; MoE
// experts of Llama-4-Scout, gpt-oss-120b and Phi-3.5-MoE; MiniCPM3-4B's MLA a-projection) and 16 synthetic odd.* sizes in
// eight pairs across the edges of rules M, L, H / 4, B, the structural pick's quarter of the SMs and 1 MiB, the largest
// cluster's fit and the lead split's 5-stage ring; 14 with N % 8 != 0, 16 with K % 64 != 0.
TEST(Heldout, TwentyFourthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyfourth:tp1");
}

// Set twenty-five (session 42), written blind at 8aba384 by a helper that read no measurement: 32 shapes, 16 real decode
// projections no earlier set used (lm_heads of Llama-3.1-8B TP4, Llama-3.1-70B TP16, Qwen3-8B TP8, Mistral-7B TP4 and
// Gemma-3-27B TP16; gate_up, down and qkv of Qwen2.5-32B, Qwen2.5-72B, Qwen3-32B, Gemma-3-12B / 27B, Mistral-Large-2,
// Command A and DeepSeek-V2-Lite at TP 1-16, one of them a routed expert) and 16 synthetic odd.* sizes in eight pairs across
// the edges of rules R, S (2.7 tiles per SM, K 1152 and 2560), N, O, P / G and K / Q; 13 with N % 8 != 0, 4 with K % 64 != 0.
TEST(Heldout, TwentyFifthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyfifth:tp1");
}

// Set twenty-six (session 45), written blind at 2331e83 by a helper that read no measurement: 32 shapes, 16 real
// decode projections no earlier set used (lm_heads of MiniCPM3-4B TP4, gpt-oss-20b TP8, ERNIE-4.5-300B TP8, OPT-13B
// TP16 and ERNIE-4.5-0.3B TP2; qkv, o_proj, gate_up, down and routed experts of gpt-oss-20b, ERNIE-4.5-21B / 300B,
// Hunyuan-Large, GLM-4.5-Air, DeepSeek-LLM-67B, Phi-4 and Falcon3-10B at TP 1-16) and 16 synthetic odd.* sizes in
// eight pairs across the edges of rules S (K 1024 / 1088, 2.7 tiles per SM at K 1216), T / C, R (by stages), L, the
// two 128 MiB bands and A; 16 with N % 8 != 0, 9 with K % 64 != 0.
TEST(Heldout, TwentySixthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentysixth:tp1");
}

// Set twenty-seven (after session 46's rules U, V and W), written blind at d11eb0f by a helper that read no
// measurement: 32 shapes, 16 real decode projections no earlier set used (lm_heads of GPT-2 medium, Mamba-2.8B TP2,
// Gemma-3-12B TP16, Qwen3-30B-A3B TP8, OLMo-2-1B TP4 and Gemma-2-27B TP16; qkv, o_proj, gate_up, down and routed
// experts of Gemma-2-27B, GLM-4.5, Granite-3 8B, gpt-oss-120b / 20b, Qwen1.5-MoE-A2.7B, Llama-2-70B, Orion-14B and
// Falcon3-3B at TP 1-16) and 16 synthetic odd.* sizes in eight pairs across the edges of rules U (half the SMs; one box
// per stage past slots - SMs / 4), V (6 tiles per SM, K 5376, rule O's K), S / W (2 tiles per SM, K 1024) and K / Q (K
// 1024); 15 with N % 8 != 0, 7 with K % 64 != 0.
TEST(Heldout, TwentySeventhSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyseventh:tp1");
}

// Set twenty-eight (after set twenty-seven, beside the branch next-rules), written blind at 195b8d2 by a helper that
// read no measurement: 32 shapes, 16 real decode projections no earlier set used (lm_heads of GPT-2, Whisper-small,
// XGLM-564M TP4, Mamba-1.4B TP2, Marian opus-mt-en-de, Phi-3-mini TP16 and MiniMax-Text-01 TP16; qkv, gate_up, down and
// routed experts of Falcon-40B, Qwen2.5-7B, Mistral-NeMo-12B, Gemma-2-2B, DeepSeek-MoE-16B, OLMoE-1B-7B,
// Qwen3-235B-A22B and Arctic at TP 1-16) and 16 synthetic odd.* sizes in eight pairs across the edges of next-rules'
// rule U (12 stages per CTA, at 160 and 56 CTAs) and one-box 64-token tile (more tiles than slots, K 2560, K % 64),
// rules S / W and K / Q (K 1024) and V (6 tiles per SM); 18 with N % 8 != 0, 5 with K % 64 != 0.
TEST(Heldout, TwentyEighthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyeighth:tp1");
}

// Set twenty-nine (after session 47's rules), written blind at f20641e by a helper that read no measurement: 32
// shapes, 16 real decode projections no earlier set used (lm_heads of Granite-3.0-3B-A800M, Whisper-base, Qwen3-0.6B
// TP8, InternLM2.5-7B TP4 and Nemotron-4-15B TP16; qkv, gate_up, down and routed experts of Qwen3-0.6B, Aya-Expanse-8B,
// Qwen2.5-0.5B / 1.5B, DeepSeek-Coder-33B, Yi-1.5-9B, Granite-3.0-3B-A800M and DBRX at TP 1-16) and 16 synthetic odd.*
// sizes in eight pairs across the edges of session 47's rule U (66 CTAs, 12 stages per CTA, each with the other line
// failing), one-box 64-token tile (396 tiles a wave, the last wave's nine tenths) and kOneBoxMinK (K 896 / 960 in rules
// S's and K's bands), rule D (11 stages per tile) and rule C / F / T (10 stages per CTA); 14 with N % 8 != 0, 4 with
// K % 64 != 0.
TEST(Heldout, TwentyNinthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_twentyninth:tp1");
}

// Set thirty (after session 47's kOneBoxMinK = 832 and long_fours' 4-stage ring), written blind at 7b79a48 by a helper
// that read no measurement: 32 shapes, 16 real decode projections no earlier set used (lm_heads of Qwen2.5-1.5B TP2,
// SmolLM2-135M, Pythia-1.4B TP2, OPT-125m TP2, InternLM2-1.8B TP4, Qwen3-Coder-480B-A35B TP8 and MiniCPM-2B; qkv, down,
// kv_b_proj and routed experts of MiniCPM-2B, StarCoder2-3B, Qwen2.5-1.5B, DeepSeek-V3, Qwen3-235B-A22B and
// Qwen3-Coder-480B-A35B at TP 1-8) and 16 synthetic odd.* sizes in eight pairs across the edges of kOneBoxMinK (K 768 /
// 832 in rules S's and K's bands), long_fours (248 / 252 CTAs in fours; 9 / 10 stages per CTA), the one-box 64-token
// tile's nine tenths at the third wave, rule U's top (224 / 232 CTAs in eights), rule M's K = 4096 and rules J / N's
// 1.4 CTAs per SM; 15 with N % 8 != 0, 8 with K % 64 != 0.
TEST(Heldout, ThirtiethSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtieth:tp1");
}

// Set thirty-one (after session 47's rule U at most 8 stages per CTA and 3 row tiles below the CTA line, and the
// one-box 64-token tile's K <= 1536 past one wave), written blind at 8c42be7 by a helper that read no measurement: 32
// shapes, 16 real decode projections no earlier set used (lm_heads of Cerebras-GPT-590M / 256M / 13B, Whisper-tiny,
// Gemma-2-2B TP4 and Qwen2.5-14B TP2; qkv, gate_up, down and routers of Llama-3.2-1B, Gemma-2-2B, Phi-3-mini,
// Mistral-NeMo-12B, Qwen3-1.7B and Snowflake Arctic; routed experts of ERNIE-4.5-300B-A47B, ERNIE-4.5-21B-A3B,
// Qwen3-Coder-480B-A35B and Granite-3.0-3B-A800M at TP 1-16) and 16 synthetic odd.* sizes in eight pairs across the
// edges of rule U's 8-stage line (8 / 9 stages per CTA, twice) and 3-tile floor (2 / 3 row tiles), the one-box 64-token
// tile's K 1536 (790 and 1160 tiles), rules S / W / one-box K 2560, rule V's K 5376 and rule O's K 1024; 10 with
// N % 8 != 0, 6 with K % 64 != 0.
TEST(Heldout, ThirtyFirstSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtyfirst:tp1");
}

// Set thirty-two (after session 48's rules: 128-row one-box tiles at 85% of their waves, the one-box 5-stage ring at
// K <= 768, kOneBoxMinK = 768, idle_half, one CTA per tile at 32 tokens and at 128 MiB+ with K <= 3072, long_fours from 9
// stages, rule M's room_for_fours), written blind at 3f3448b by a helper that read no measurement: 32 shapes, 16 real
// decode projections no earlier set used (lm_heads of BART-base, CodeT5-base, OPT-350m, BLOOM-560m TP4, Gemma-3-1B TP4
// and GPT-NeoX-20B TP8; qkv, o_proj, gate_up, down and routers of GPT-NeoX-20B, BLOOM-3b, Ministral-8B, Qwen1.5-0.5B and
// MiniMax-Text-01; routed experts of MiniMax-Text-01, Qwen2-57B-A14B, DeepSeek-V2 and Phi-3.5-MoE at TP 1-16) and 16
// synthetic odd.* sizes in eight pairs across the edges of the 128-row tiles' 85% (224 / 225 tiles of 128), the
// 5-stage ring's K 768 (768 / 832), kOneBoxMinK in rule K's band (704 / 768), idle_half (132 / 133 tiles of 32), the
// 32-token rule's 1.75 per SM (230 / 231 tiles), 128 MiB at K = 3072, long_fours' 9 stages (8 / 9 per CTA) and
// room_for_fours (16 / 17 stages); 18 with N % 8 != 0, 4 with K % 64 != 0.
TEST(Heldout, ThirtySecondSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtysecond:tp1");
}

// Set thirty-three (the rules at ed4449f: kOneBoxMinK = 704, the one-box 5-stage ring from 5 tiles per SM, idle_half from
// K = 512, the 32-token one CTA per tile up to K = 1600), written blind at ed4449f by a helper that read no measurement:
// 32 shapes, 16 real decode projections no earlier set used (lm_heads of OPT-66B TP16, Galactica-30B TP8, Galactica-6.7B
// TP4, BLOOM-1b7 TP8, Gemma-2-9B TP16 and Phi-3-medium TP8; qkv, o_proj, gate_up, down and routers of Qwen2.5-7B, OPT-66B,
// Yi-34B, MPT-30B and gpt-oss-120b; routed experts of DBRX, Snowflake Arctic and gpt-oss-120b at TP 4-16) and 16
// synthetic odd.* sizes in eight pairs across the edges of the one-box 5-stage ring's 5 tiles per SM (659 / 660 tiles),
// kOneBoxMinK in rule S's band (K 640 / 704), the 32-token one CTA per tile's K 1600 (1600 / 1664), rule V's 6 tiles per
// SM at K 1600 (792 / 793 tiles), rule E's 2.6 CTAs per SM (343 / 344 tiles of 32), rules D / M's 231 CTAs (228 / 232 in
// fours), rule L's K 1536 (1472 / 1536) and rule B's K 1024 (1016 / 1032); 15 with N % 8 != 0, 4 with K % 64 != 0.
TEST(Heldout, ThirtyThirdSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtythird:tp1");
}

// Set thirty-four (the rules at 1282d73: session 49's rules X, Y and Z, the K <= 1024 partial-box lead split,
// kOneBoxMinK = 640, rule 6's K line at 1664), written blind at 1282d73 by a helper that read no measurement: 32
// shapes, 16 real decode projections no earlier set used (lm_heads of OPT-30B TP8, OPT-1.3B TP16, ChatGLM-6B TP8 /
// TP16, XGLM-1.7B / 7.5B TP8, EXAONE-3.5-2.4B TP4 and SmolLM2-1.7B TP2; fc1, down, gate_up, qkv and routers of OPT-30B,
// Qwen1.5-72B, EXAONE-3.5-2.4B, Gemma-3-4B, StarCoder and Hunyuan-A13B; a routed expert of Qwen3-Next-80B-A3B at TP
// 1-16) and 16 synthetic odd.* sizes in eight pairs across the edges of rule X's 18 tiles (18 / 19 tiles in eights) and
// 10 boxes per CTA (K 5120 / 5184), rule Y's 0.7 of the slots (184 / 185 tiles of 128), rule Z's ring (4 / 5 stages per
// CTA), the partial-box lead split's K 1024 (1016 / 1032), kOneBoxMinK in rule S's band (K 576 / 640), rule 6's K 1664
// (1664 / 1728) and idle_half's K 512 (448 / 512); 18 with N % 8 != 0, 4 with K % 64 != 0.
TEST(Heldout, ThirtyFourthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtyfourth:tp1");
}

// Set thirty-five (session 51, written blind at fb21188 by a helper that read no measurement): 32 shapes, 16 real
// decode projections no earlier set used (Qwen2.5, Gemma-3, MiniCPM, DeepSeek-V2's q_a, Phi-3.5-MoE, GLM-4-32B,
// Qwen2-57B-A14B's expert, Command-R, Code Llama, Llama-3.1-405B, Qwen3-14B, DeepSeek-Coder-33B, Falcon-40B, ERNIE-4.5's
// router) and 16 synthetic odd.* sizes drawn at random (random.Random(35): N 48-40000, K 256-16384 in steps of 8), not
// placed on any rule's edge; 14 with N % 8 != 0, 16 with K % 64 != 0.
TEST(Heldout, ThirtyFifthSetIsNewAtLeast24ShapesNoneKimiNoneOfTheEarlierSets) {
  expect_new_heldout_set("model:heldout_thirtyfifth:tp1");
}

// Issue 4: held-out shapes are never tuned into a shipped table (the heuristic would be judged on tuned points); a
// heuristic marker is a tuned point too.
TEST(Heldout, NoShippedTableHasAHeldoutShape) {
  std::set<Shape> heldout;
  for (const char* set : kHeldoutSets)
    for (const models::Projection& p : models::parse_shapes(set)) heldout.insert({p.n, p.k});
  for (const auto& file : fs::directory_iterator(fs::path(SKINNYGEMM_SOURCE_DIR) / "tables")) {
    if (file.path().extension() != ".json") continue;
    for (const auto& [key, entry] : Table::load(file.path().string()).entries)
      EXPECT_EQ(heldout.count({key.n, key.k}), 0u) << file.path() << " has held-out " << key.n << "x" << key.k;
  }
}

tune::BenchRow fake_row(const Problem& p, const std::string& config, double us) {
  tune::BenchRow r;
  r.problem = p, r.config = config, r.us = us, r.checked = true;
  return r;
}

// The CPU heuristic's pick for p, so that the tests can leave it out of the candidates or break it.
std::string cpu_pick(const Problem& p) {
  Choice c;
  EXPECT_TRUE(heuristic_choice(p, cpu_device_info(), 16, &c));
  return c.config.name();
}

TEST(HeuristicPick, MeasuredEvenWhenTheCandidatesLeaveItOut) {
  const Problem p{1, 104, 512, DType::BF16};
  const std::string pick = cpu_pick(p);
  const std::string other = pick == "cpu_r8" ? "cpu_r1" : "cpu_r8";
  std::vector<std::string> measured;
  tune::TuneOptions o;
  o.backend = Backend::Cpu, o.candidates = other;
  o.measure = [&](const Problem& q, const tune::BenchOptions& bo) {
    measured.push_back(bo.config);
    return fake_row(q, bo.config, bo.config == pick ? 2.0 : 3.0);
  };
  const tune::TuneResult r = tune::tune_problem(p, o);
  EXPECT_EQ(measured, (std::vector<std::string>{other, pick}));
  EXPECT_TRUE(r.heuristic.extra);
  EXPECT_TRUE(r.heuristic.error.empty()) << r.heuristic.error;
  EXPECT_EQ(r.heuristic.row.source, "heuristic");
  // Outside the glob, but faster: the entry (session 41: an entry slower than the heuristic's pick is a loss).
  EXPECT_EQ(r.entry.config.name(), pick);
  const json j = json::parse(tune::heuristic_report_json(tune::BenchMeta{}, {r}));
  EXPECT_EQ(j["rows"][0]["best_config"], pick);  // the fastest measured row, the extra one included
  EXPECT_EQ(j["rows"][0]["loss"], 0.0);
  // Every measured candidate with its time, so that another pick can be scored offline, the extra pick last (a
  // kernel pick is one of the rows since session 41); no identity on the CPU.
  const json& candidates = j["rows"][0]["candidates"];
  ASSERT_EQ(candidates.size(), r.rows.size());
  EXPECT_EQ(candidates[0]["config"], other);
  EXPECT_EQ(candidates[0]["us"], 3.0);
  EXPECT_FALSE(candidates[0].contains("identity"));
  EXPECT_EQ(candidates[1]["config"], pick);
  EXPECT_EQ(candidates[1]["us"], 2.0);
  EXPECT_EQ(candidates[1]["extra"], true);
  EXPECT_TRUE(r.identities.empty());

  // Its check fails: no time, no loss; the report says so rather than dropping the point.
  o.candidates = "";
  o.measure = [&](const Problem& q, const tune::BenchOptions& bo) {
    SKINNYGEMM_CHECK(bo.config != pick, "wrong output");
    return fake_row(q, bo.config, 1.0);
  };
  const tune::TuneResult bad = tune::tune_problem(p, o);
  EXPECT_FALSE(bad.heuristic.extra);  // it was a candidate: not measured twice
  EXPECT_NE(bad.heuristic.error.find("wrong output"), std::string::npos) << bad.heuristic.error;
  const json k = json::parse(tune::heuristic_report_json(tune::BenchMeta{}, {bad}));
  EXPECT_TRUE(k["rows"][0]["heuristic_us"].is_null());
  EXPECT_TRUE(k["rows"][0]["loss"].is_null());
  EXPECT_EQ(k["summary"]["heuristic_failed"], 1);
  EXPECT_EQ(k["summary"]["points"], 0);
}

// GPU rows name cuBLASLt's algorithms by identity in the report (built by hand: no GPU here): on the row they belong
// to, with the error where one could not be named.
TEST(HeuristicReport, CandidatesCarryCublasltIdentitiesOnTheirOwnRows) {
  tune::TuneResult r;
  r.problem = Problem{4, 1000, 2048, DType::BF16};
  r.rows = {fake_row(r.problem, "tma_m8_r64_b2_s4_x8", 8.0), fake_row(r.problem, "cublaslt", 10.0),
            fake_row(r.problem, "cublaslt_a1", 9.0), fake_row(r.problem, "cublaslt_a2", 9.5)};
  r.identities = {{}, {"cublaslt_id66_t27_s35_k1_r0_w0_o0_c4_i0", ""}, {"cublaslt_id66_t13_s35_k4_r2_w0_o0_c4_i0", ""},
                  {"", "cublaslt_a2: cuBLASLt offers only 2 algorithms"}};
  r.heuristic.choice.config = Config::parse("tma_m8_r64_b2_s4_x8");
  r.heuristic.row = r.rows[0];
  const json c = json::parse(tune::heuristic_report_json(tune::BenchMeta{}, {r}))["rows"][0]["candidates"];
  ASSERT_EQ(c.size(), 4u);
  EXPECT_FALSE(c[0].contains("identity"));
  EXPECT_EQ(c[1]["identity"], "cublaslt_id66_t27_s35_k1_r0_w0_o0_c4_i0");
  EXPECT_EQ(c[2]["config"], "cublaslt_a1");
  EXPECT_EQ(c[2]["identity"], "cublaslt_id66_t13_s35_k4_r2_w0_o0_c4_i0");
  EXPECT_FALSE(c[3].contains("identity"));
  EXPECT_EQ(c[3]["identity_error"], "cublaslt_a2: cuBLASLt offers only 2 algorithms");
}

TEST(HeuristicSummary, LossesAndTheCublasltCount) {
  // GPU-like points built by hand (no GPU here): the count compares with cuBLASLt's default, not its best.
  auto point = [](int64_t m, const std::string& pick, double pick_us) {
    tune::TuneResult r;
    r.problem = Problem{m, 1000, 2048, DType::BF16};
    r.rows = {fake_row(r.problem, "bulk_m8_w1x8_u4_sk2", 8.0), fake_row(r.problem, "cublaslt", 10.0),
              fake_row(r.problem, "cublaslt_a1", 9.0)};
    r.rows[0].name = "odd.n1000_k2048";
    r.heuristic.choice.config = Config::parse(pick);
    r.heuristic.row = fake_row(r.problem, pick, pick_us);
    return r;
  };
  const std::vector<tune::TuneResult> results = {point(1, "bulk_m8_w1x8_u4_sk2", 8.0), point(2, "cublaslt", 10.0),
                                                 point(4, "cublaslt_a1", 9.0)};
  tune::HeuristicSummary s = tune::summarize_heuristic(results);
  EXPECT_EQ(s.points, 3u);
  EXPECT_DOUBLE_EQ(s.median_loss, 9.0 / 8 - 1);
  EXPECT_DOUBLE_EQ(s.worst_loss, 10.0 / 8 - 1);
  EXPECT_EQ(s.worst_point, "odd.n1000_k2048 1000x2048 m=2");
  EXPECT_EQ(s.cublaslt_points, 3u);
  EXPECT_EQ(s.slower_than_cublaslt, 0u);  // picking cuBLASLt's default is never slower than itself
  s = tune::summarize_heuristic({point(8, "bulk_m8_w1x8_u4_sk2", 10.5), point(16, "cublaslt", 10.0)});
  EXPECT_EQ(s.slower_than_cublaslt, 1u);
  EXPECT_DOUBLE_EQ(s.median_loss, (10.5 / 8 - 1 + 10.0 / 8 - 1) / 2);  // even count: the middle two
}

TEST(HeuristicSummary, OverThreePercentAgainstTheFasterOfCublasltAndTorch) {
  auto point = [](int64_t m, double pick_us, double torch_us) {
    tune::TuneResult r;
    r.problem = Problem{m, 1000, 2048, DType::BF16};
    r.rows = {fake_row(r.problem, "cublaslt", 10.0)};
    r.heuristic.choice.config = Config::parse("tma_m8_r64_b2_s4_x8");
    r.heuristic.row = fake_row(r.problem, "tma_m8_r64_b2_s4_x8", pick_us);
    r.heuristic.row.cublaslt_torch_us = torch_us;  // 0: torch's configuration was not timed
    return r;
  };
  // 10.25 vs the default's 10.0: 2.5%, within; 10.25 vs torch's 9.9: 3.5%, over; 10.4 without torch: 4%, over.
  const tune::HeuristicSummary s = tune::summarize_heuristic({point(1, 10.25, 0), point(2, 10.25, 9.9),
                                                              point(4, 10.4, 0), point(8, 9.0, 9.5)});
  EXPECT_EQ(s.over_faster_cublaslt, 2u);
  EXPECT_DOUBLE_EQ(s.worst_vs_faster_cublaslt, 10.4 / 10.0);
  EXPECT_EQ(s.worst_vs_faster_cublaslt_point, "1000x2048 m=4");
  const json j = json::parse(tune::heuristic_report_json(tune::BenchMeta{}, {point(2, 10.25, 9.9)}));
  EXPECT_EQ(j["summary"]["over_faster_cublaslt_3pct"], 1);
  EXPECT_EQ(j["rows"][0]["cublaslt_torch_us"], 9.9);
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class HeldoutCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("heldout");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the CLI with the data dir in dir_, where a default table would go, so that one written shows up.
  std::string run(const std::string& args, int* status) {
    return test::run_command("SKINNYGEMM_DATA_DIR='" + dir_.string() + "' '" + SKINNYGEMM_CLI_PATH + "' " + args,
                             status);
  }
  fs::path dir_;
};

TEST_F(HeldoutCli, HeuristicReportRowsAreConsistentAndNoTableIsWritten) {
  const fs::path report = dir_ / "heuristic.json", rows = dir_ / "rows.json";
  int status = -1;
  const std::string out = run("tune --backend cpu --shapes 104x512,1000x64 --m 1,3 --samples 1 --replays 1 --no-store "
                              "--heuristic-report '" + report.string() + "' --json '" + rows.string() + "'", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("measured 4, failed 0 of 4 points"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ / "tables")) << out;  // --no-store: not even the default folder

  // Every measured row per point, from --json: best_config must be one of them and best_us their minimum.
  std::map<std::string, std::map<std::string, double>> measured;  // "n k m" -> config -> us
  auto point = [](const json& r) { return r["n"].dump() + " " + r["k"].dump() + " " + r["m"].dump(); };
  const json all = json::parse(read_all(rows));
  EXPECT_TRUE(all["table"].is_null());
  for (const json& r : all["rows"]) {
    EXPECT_FALSE(r["stored"].get<bool>());
    measured[point(r)][r["config"]] = r["us"];
  }
  const json j = json::parse(read_all(report));
  ASSERT_EQ(j["rows"].size(), 4u);
  double worst = -1;
  for (const json& r : j["rows"]) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["kind"], "heuristic");
    EXPECT_EQ(r["config"], r["heuristic_config"]);
    EXPECT_EQ(r["us"], r["heuristic_us"]);
    const double h = r["heuristic_us"], best = r["best_us"], loss = r["loss"];
    EXPECT_GT(best, 0);
    EXPECT_LE(best, h);
    EXPECT_GE(loss, 0);
    EXPECT_NEAR(loss, h / best - 1, 1e-3 * (1 + h / best));  // the JSON times are rounded to 1 ns
    const auto& at = measured[point(r)];
    ASSERT_EQ(at.size(), std::size(kCpuRows));
    ASSERT_EQ(at.count(r["best_config"]), 1u);
    EXPECT_EQ(at.at(r["best_config"]), best);
    for (const auto& [config, us] : at) EXPECT_GE(us, best) << config;
    worst = std::max(worst, loss);
  }
  EXPECT_EQ(j["summary"]["points"], 4);
  EXPECT_EQ(j["summary"]["worst_loss"], worst);
  EXPECT_LE(j["summary"]["median_loss"].get<double>(), worst);
  EXPECT_EQ(j["summary"]["slower_than_cublaslt"], 0);
  EXPECT_EQ(j["summary"]["cublaslt_points"], 0);  // the CPU has no cuBLASLt to compare with
  EXPECT_FALSE(fs::exists(report.string() + ".tmp"));
}

TEST_F(HeldoutCli, NoStoreNeitherReadsNorWritesTheTableFile) {
  // A table of another device: a storing run refuses it before measuring; --no-store does not even read it.
  const std::string path = (dir_ / "t.json").string();
  Table foreign;
  foreign.meta = Table::meta_for(tune::device_preset("h200"));
  foreign.save_merge(path);
  const std::string before = read_all(path);
  tune::TuneOptions o;
  o.backend = Backend::Cpu, o.samples = 1, o.replays = 1, o.store = false;
  const auto shapes = models::parse_shapes("104x512");
  tune::TuneSummary s = tune::tune_into_table(shapes, {1, 2, 2}, DType::BF16, o, path);
  EXPECT_EQ(s.tuned, 2u);  // the repeated M is still measured once
  EXPECT_TRUE(s.table_path.empty());
  EXPECT_EQ(read_all(path), before);
  o.store = true;
  EXPECT_THROW(tune::tune_into_table(shapes, {1}, DType::BF16, o, path), Error);

  const std::string missing = (dir_ / "never.json").string();
  o.store = false;
  tune::tune_into_table(shapes, {1}, DType::BF16, o, missing);
  EXPECT_FALSE(fs::exists(missing));

  int status = -1;  // a table given with --no-store would never be written: refused rather than ignored
  const std::string out =
      run("tune --backend cpu --shapes 104x512 --m 1 --no-store --table '" + missing + "'", &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("--no-store"), std::string::npos) << out;
}

}  // namespace
}  // namespace skinnygemm
