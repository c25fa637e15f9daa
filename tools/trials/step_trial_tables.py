#!/usr/bin/env python3
"""Step trials (docs/kernels.md "Session 11"): copies of the shipped table that force configs on shapes at M = 1..8,
so that the whole step shows what they cost per launch against the first cut (a forced entry replaces the shipped
table's entry of its problem where there is one; TRIALS go to M = 16 where they say so). Usage: tools/trials/step_trial_tables.py OUTDIR;
then tools/trials/step_trials.sh runs the step once through each table. Only configs main builds (1 and 2 boxes
per stage, since session 25 4 and 8 on 16- and 32-row tiles at token tiles 8 and 16: N32, N16, N1, and since
session 38 16 on 16-row tiles: W2, W1); the session-11
trials of 4- and 8-box configs on other tiles (t1, t2, s1-s6, u1-u7) are not here."""
import copy, json, os, sys

M8 = range(1, 9)
# After the step's TMA timeline (session 12, the shipped table and the 16-row stream-K tma_m8_r16_b8_s4_c2_u1 forced
# on 6288 x 7168, branch static-reducer at 0139b4b): a kernel whose CTAs fill an SM (two of ~81 KB or more) keeps its
# successor's CTAs out until it ends, so the successor prefills nothing (7168 x 1536 after the 16-row stream-K: early
# window 21 -> 1 us, +5.6 us per launch). L*: every TMA shape the step launches more than once (all but f_b_proj
# 1536 x 128, too small to matter, and lm_head) with one config of at most one CTA per SM (<= 113 KB), so that the
# next kernel's CTAs always fit beside it.
STEP_SHAPES = [(6288, 7168), (7168, 3584), (3584, 7168), (1536, 7168), (896, 7168), (7168, 1536), (7168, 768),
               (2112, 7168), (2304, 1536), (8448, 7168), (7168, 4224)]
JOINT = {"L1": "tma_m8_r64_b2_s5_c1_d6", "L2": "tma_m8_r64_b2_s5_c1_u1", "L3": "tma_m8_r64_b2_s4_c1_d6",
         "L4": "tma_m8_r128_b1_s6_c1_d6"}
EXPLICIT = {name: [(nk, M8, c) for nk in STEP_SHAPES] for name, c in JOINT.items()}  # name: [((N, K), Ms, config)]
# P*: every L table lost (L1 +141 / +787 us at M = 1 / 8, docs/kernels.md "Session 12"), so only the predecessors that
# left their successor no room in the s0 timeline (224 CTAs, two per SM) get one CTA per SM: o_proj 7168 x 1536 before
# 896 x 7168 (0% of its CTAs beside), 3584 x 7168 (x4) before 7168 x 3584 (18%), 7168 x 3584 before 1536 x 7168 (12%).
P1 = [((7168, 1536), M8, "tma_m8_r64_b2_s5_c1_d6")]
P2 = [((7168, 3584), M8, "tma_m8_r64_b2_s5_c1_d6"), ((3584, 7168), M8, "tma_m8_r64_b2_s4_x2")]
EXPLICIT.update({"P1": P1, "P2": P2, "P12": P1 + P2})
# Session 13: the s0 timeline's lead splits end unevenly (6288 x 7168: part 0, six stages longer, exits 3.5 us after
# part 1; 7168 x 1536 2.7 us; medians of CTAs two to an SM). E0: equal parts (lead 0: the reducer gathers after its
# last stage); X2: equal parts reduced through distributed shared memory (a cluster of two per row tile, the
# clusters' parts end within 0.4 us).
LEAD_SPLIT_SHAPES = [(6288, 7168), (7168, 3584), (7168, 1536), (8448, 7168), (7168, 4224)]
EXPLICIT.update({"E0": [(nk, M8, "tma_m8_r64_b2_s4_c2_d0") for nk in LEAD_SPLIT_SHAPES],
                 "X2": [(nk, M8, "tma_m8_r64_b2_s4_x2") for nk in LEAD_SPLIT_SHAPES]})
# Session 25: the MLA qkv_a + g 3648 x 7168 (24 launches) on 32-row tiles of four boxes per stage (one 3D copy each):
# alone 13.11-13.18 us at M = 1 / 8 against the shipped clusters of four's 14.35-14.36 (call 2). N32: the 32-row lead
# split at M <= 8 (at 16 it ran 17.27); N16: one CTA per 16-row tile of eight boxes (13.40-13.76 at M = 1 / 8 on 4
# stages, 14.48 at 16 on 3 against 15.02).
EXPLICIT.update({"N32": [((3648, 7168), M8, "tma_m8_r32_b4_s5_c2_d6")],
                 "N16": [((3648, 7168), M8, "tma_m8_r16_b8_s4_x1"), ((3648, 7168), range(9, 17), "tma_m16_r16_b8_s3_x1")]})
# Both lost (call 4: N32 +205 / +209 us at M = 1 / 8, N16 +139 / +126 / +117 at M = 1 / 8 / 16): 228 CTAs of ~100 KB,
# two to an SM. N1: one CTA per 32-row tile (114 CTAs, one per SM, room beside each) at M <= 8.
EXPLICIT.update({"N1": [((3648, 7168), M8, "tma_m8_r32_b4_s5_x1")]})
# Session 38: the peer's decomposition on 16-box copies (32 KB of weights a copy, one CTA of 192 KB per SM at the
# 8-token tile, 144 KB at 16) alone: 2112 x 7168 8.70 / 8.57 / 9.54 us at M = 1 / 8 / 16 against the shipped clusters of
# eight's 9.40 / 9.48 / 10.02; 1536 x 7168 7.31 / 7.25 at M = 1 / 8 against 7.57 / 7.63 (it loses at 16). W2: the
# unfused step's qkv_a (24 launches); W1: 1536 x 7168 (g_proj and the shared experts' gate_up, 116 launches) at M <= 8.
EXPLICIT.update({"W2": [((2112, 7168), M8, "tma_m8_r16_b16_s4_x1"), ((2112, 7168), range(9, 17), "tma_m16_r16_b16_s3_x1")],
                 "W1": [((1536, 7168), M8, "tma_m8_r16_b16_s4_x1")]})
# Both lost (session 13: E0 +139 / +209 us at M = 1 / 8, X2 +175 / +214). The timeline says the launch ends with its
# most loaded SM, not its longest part: 6288 x 7168's 198 CTAs sat on 106 SMs (a launch's CTAs enter wherever its
# predecessor left room), two to an SM streamed 13% slower. The queue that followed (chunks of K taken from a counter,
# so that CTAs sharing an SM take fewer) lost too and lives on branch `queue` with its trials (docs/kernels.md
# "Session 13").
# The lead-split shapes of the fused step with the non-EP MoE front (6016 x 7168; the EP front's is 4480 x 7168).
LEAD_SPLIT_FUSED = [(6016, 7168)] + LEAD_SPLIT_SHAPES
TRIALS = {  # name: [((N, K), config at the 8-token tile)], highest M forced
    # Which neighbour's PDL edge the step leans on: in the step 6288 x 7168 follows shared.down (7168 x 768) and
    # precedes f_b_proj (1536 x 128), which reads its output. Each trial forces that neighbour to cuBLASLt (no PDL
    # edge on that side) with the first cut's pick on 6288 x 7168; against s0, what that edge is worth.
    "n1": ([((1536, 128), "cublaslt")], 8),
    "n2": ([((7168, 768), "cublaslt")], 8),
    # The first cut's 5-stage ring for one-part tiles (session 12) against the 4-stage ring it had (F4) and a ring
    # holding all six stages of 7168 x 768 (F6, 115 KB: not listed), M = 1..16.
    "F4": ([((7168, 768), "tma_m8_r64_b2_s4_c2_d6")], 16),
    "F6": ([((7168, 768), "tma_m8_r64_b2_s6_c2_d6")], 16),
    # Session 14: the lead of 3 stages instead of 6 on the fused step's lead-split shapes (6288 x 7168 and
    # 4480 x 7168 end 6-8.5 us after their first CTA, the lead part last), M = 1..16.
    "D3": ([((n, k), "tma_m8_r64_b2_s4_c2_d3") for n, k in LEAD_SPLIT_SHAPES + [(4480, 7168)]], 16),
    # The shared experts' gate_up 1536 x 7168 (92 launches) drains 1.7-2.2 us in its cluster of eight (the barrier
    # waits for the cluster's slowest CTA): the 64-row lead split instead (24 tiles in 11 parts of 4-5 stages, a
    # 5-stage ring, so every part but the lead is on chip before the wait).
    "G6": ([((1536, 7168), "tma_m8_r64_b2_s5_c2_d6")], 16),
    # Both lost (session 14: D3 +66 / +90 / +182 us at M = 1 / 8 / 16, G6 +186 / +590 / +931). The shared experts'
    # down 7168 x 768 (92 launches) streams 3.4 us after the wait for the 2 of its 6 stages past a 4-stage ring:
    # 32-row tiles (224 CTAs of 67 KiB) hold all six before the wait (S32; the 115 KB 6-stage ring of 64 rows, F6,
    # lost in session 12); o_proj 7168 x 1536 (93) likewise in 32-row tiles, 6 of its 12 stages in the ring (T32).
    "S32": ([((7168, 768), "tma_m8_r32_b2_s6_c2_d6")], 16),
    "T32": ([((7168, 1536), "tma_m8_r32_b2_s6_c2_d6")], 16),
    # Both lost (session 14: S32 +209 / +168 / +363 us at M = 1 / 8 / 16, T32 +289 / +255 / +476). The lead of 9
    # stages (D9; D3 lost), and 128-row tiles on the lead-split shapes (R128): alone, 4480 x 7168 takes 0.7 us more
    # at M = 8 than at M = 1 and 1.5 more again at M = 16, while its weights stay the same and the x its 70 row tiles
    # read from the L2 grows with M (1, 8.0, 16.1 MB per launch); 128-row tiles read x half as often.
    # Both lost too (D9 +153 / +161 / +15, R128 +406 / +2007 / +3235).
    "D9": ([((n, k), "tma_m8_r64_b2_s4_c2_d9") for n, k in LEAD_SPLIT_SHAPES + [(4480, 7168)]], 16),
    "R128": ([((n, k), "tma_m8_r128_b1_s4_c2_d6") for n, k in LEAD_SPLIT_SHAPES + [(4480, 7168)]], 16),
    # Session 15: the shared experts' down 7168 x 768 (92 launches, 11 MB) spans 5.5-6.2 us in the step against the
    # chain floor's 3.26 at that size: one CTA per 64-row tile streams 6 stages, 2 past its 4-stage ring, after the
    # wait. Two CTAs per tile, 3 stages each, all in the ring before the wait: a cluster of two reduced through
    # distributed shared memory (V2) or the lead split with lead 0 (V0, the part's partials handed to part 0).
    # Both lost (session 15, skinny_fused at M = 1 / 8 / 16: V2 +121 / +196 / +242 us, V0 +104 / +127 / +117; V2 with
    # the clusters' push reduction +87 / +172 / +171 against the push baseline).
    "V2": ([((7168, 768), "tma_m8_r64_b2_s4_x2")], 16),
    "V0": ([((7168, 768), "tma_m8_r64_b2_s4_c2_d0")], 16),
    # Session 16: q_b_proj 2304 x 1536 (24 launches, no table entry at M <= 16) on the ring of 4 stages it had before
    # the cluster-ring rule of held-out set nine gave it 3 (144 CTAs of 3 stages): what that rule does to the step.
    "B4": ([((2304, 1536), "tma_m8_r64_b2_s4_x4")], 16),
    # Session 17: the lead split's ring of 5 stages instead of 4 (99 KB instead of 81 per CTA at the 8-token tile, 112
# instead of 91 at 16; still two per SM). Alone
    # it won on held-out shapes of the same grid (6400 x 4096: 13.6-14.6 us against 14.8-15.5 at M <= 16, set eleven;
    # 4608 x 3072, 7777 x 2048, 5120 x 3456 by 6-14%, set ten); in the step only 7168 x 768's one-part tiles were
    # tried with it (F4 above: the 5-stage ring lost 0.2-0.6 us per launch). S5: every lead-split shape of the fused
    # step but 7168 x 768; S5L: only the large ones (6288 x 7168, 4480 x 7168, 7168 x 3584).
    "S5": ([((n, k), "tma_m8_r64_b2_s5_c2_d6") for n, k in LEAD_SPLIT_SHAPES + [(4480, 7168)]], 16),
    "S5L": ([((n, k), "tma_m8_r64_b2_s5_c2_d6") for n, k in [(6288, 7168), (4480, 7168), (7168, 3584)]], 16),
    # Session 18 (branch r48-lead-split, its W64 and W6): 48-row tiles on 6288 and 6016 x 7168 (262 and 252 CTAs of
    # 264 slots, against 198 and 188 in 64-row tiles) lost the non-EP step by 350 / 340 / 322 / 333 / 346 us at M = 1 /
    # 2 / 4 / 8 / 16 against the 64-row picks main keeps (W64), by 362-388 with a 6-stage ring (W6). Not on main.
    # Session 19: the staged epilogue is the lead split's (its others' sums area); f_b_proj 1536 x 128 (69 launches, one
    # stage per 64-row tile) runs stream-K over 24 CTAs with per-element stores, and its drain grows 0.53 -> 1.09 us from
    # M = 1 to 16 (call 2's timeline). FB: the lead split on it, the same 24 CTAs (one part per tile), staged at M >= 2.
    # FB won at M = 16 (-44 us, call 3) and the first cut takes it there since 1fbcc06: at M = 9-16 it is now s0 (a record).
    "FB": ([((1536, 128), "tma_m8_r64_b2_s4_c2_d6")], 16),
    # Session 20: if the reducer's gather started later (lab knobs of calls 1-3, since removed: SKINNYGEMM_TMA_GATHER_LAG,
    # _POLL_STAGGER_NS, _POLL_AHEAD), the lead the other parts need before it might be shorter. D4 / D5: the fused
    # step's lead-split picks (the 5-stage ring, 4 stages on o_proj 7168 x 1536) with a lead of 4 / 5. Beside each of
    # the three knobs they were within +-15 us of the lead of 6 at M = 1-16 (docs/kernels.md "Session 20"); every knob
    # lost, so they did not run with the shipped gather.
    "D4": ([((n, k), "tma_m8_r64_b2_s%d_c2_d4" % (4 if k == 1536 else 5)) for n, k in LEAD_SPLIT_FUSED], 16),
    "D5": ([((n, k), "tma_m8_r64_b2_s%d_c2_d5" % (4 if k == 1536 else 5)) for n, k in LEAD_SPLIT_FUSED], 16),
    # Session 21: clusters miss the prefill window (the push's clusters of two: 55% of 6016 x 7168's CTAs entered after
    # the dependency). The fused step's MLA qkv_a + g 3648 x 7168 (24 launches) runs in clusters of four (228 CTAs),
    # 43-62% of them late in every timeline of sessions 20-21. A5 / A4: the 64-row lead split instead (57 tiles in 4
    # parts of 18 and 12-13 stages, 228 CTAs, no cluster) on a 5- / 4-stage ring, M = 1..16.
    "A5": ([((3648, 7168), "tma_m8_r64_b2_s5_c2_d6")], 16),
    "A4": ([((3648, 7168), "tma_m8_r64_b2_s4_c2_d6")], 16),
    # Both lost (session 21, call 6, two rounds each): A5 +33 to +72 us, A4 +26 to +62 at M = 1-16.
    # C3 / C5: the same clusters of four on a 3- / 5-stage ring. first_cut_config gives 3 stages where the grid leaves
    # fewer than 1/8 of the slots (231 of 264); 228 CTAs just miss it. 3 stages (63 KB) fit three CTAs per SM, so a
    # cluster finds its four slots sooner beside the predecessor's tail.
    "C3": ([((3648, 7168), "tma_m8_r64_b2_s3_x4")], 16),
    "C5": ([((3648, 7168), "tma_m8_r64_b2_s5_x4")], 16),
    # C3 lost (session 21, call 7, two rounds): +48 to +69 us at M = 1-16; C5 within +0 to +12 (noise). 4 stages stay.
    # Session 24: stream-K with the polled owner gather (no released counter at a tile end) ran 6288 x 7168 alone in
    # ~22 us against the lead split's 24.9 (tools/probes/tma_family.cu: 24.31 whole with the counter, 22.03 without any
    # split reduction). K2: stream-K over two CTAs per SM on the fused step's two largest lead-split shapes, M = 1..16.
    "K2": ([((n, k), "tma_m8_r64_b2_s4_c2_u1") for n, k in [(6288, 7168), (6016, 7168)]], 16),
    # Session 26: the step with no split reduction at all (timing graphs only, SKINNYGEMM_STEP_ABLATE) ran 176 / 257 / 421
    # us faster at M = 1 / 8 / 16. W5: no split on the three largest lead-split shapes: one CTA per 64-row tile over
    # the whole K (the lead split at one CTA per SM: 99 / 94 / 112 CTAs, room beside each), on a 5-stage ring.
    "W5": ([((n, k), "tma_m8_r64_b2_s5_c1_d6") for n, k in [(6288, 7168), (6016, 7168), (7168, 3584)]], 16),
}
# W5 / W6 lost (+737 / +274 us at M = 1, +608 at 16). The reductions' ablation split by decomposition: the lead
# splits' -148 / -208 / -379 us at M = 1 / 8 / 16, the clusters' -35 / -42 / -26, stream-K's none. R32: no split with
# the same CTAs: 32-row tiles of four boxes over the whole K on the lead-split shapes with more 32-row tiles than SMs
# (6288, 6016 x 7168: 197 / 188 CTAs, as many as today's two parts of 64 rows; 7168 x 3584 / 1536: 224), 5 stages at
# M <= 8 (110 KB), 4 at 9-16 (108 KB). D8 / D10: the fused step's lead splits with a longer lead.
R32_SHAPES = [(6288, 7168), (6016, 7168), (7168, 3584), (7168, 1536)]
EXPLICIT.update({"R32": [(nk, M8, "tma_m8_r32_b4_s5_c2_d6") for nk in R32_SHAPES] +
                        [(nk, range(9, 17), "tma_m16_r32_b4_s4_c2_d6") for nk in R32_SHAPES]})
TRIALS.update({"D%d" % d: ([((n, k), "tma_m8_r64_b2_s%d_c2_d%d" % (4 if k == 1536 else 5, d)) for n, k in LEAD_SPLIT_FUSED], 16)
               for d in (8, 10)})
# W6: the same on a 6-stage ring at M <= 8 (118 KB; at the 16-token tile 6 stages take 132 KB, so 5 there).
EXPLICIT.update({"W6": [((n, k), M8, "tma_m8_r64_b2_s6_c1_d6") for n, k in [(6288, 7168), (6016, 7168), (7168, 3584)]] +
                       [((n, k), range(9, 17), "tma_m16_r64_b2_s5_c1_d6") for n, k in [(6288, 7168), (6016, 7168), (7168, 3584)]]})

# Session 30: with x, the split reductions and the row-strided copy ablated (SKINNYGEMM_STEP_ABLATE=31) the fused step
# still ran 103 / 300 us longer at M = 8 / 16 than at M = 1 (docs/step.md "Session 30"). What grows with M there? K16:
# at M = 8, every TMA shape of the fused step on its M = 8 pick at the 16-token tile (the same rows, boxes, ring, grid
# and split: the token tile alone changes); C8: at M = 16, the M = 8 picks at the 16-token tile (the table's other
# M = 16 configs out). The picks are selection's at be9b60c (docs/benchmarks/h200/kernels.json; 6016 x 7168 from
# session 30's call 1).
PICKS_M8 = {(3648, 7168): "tma_m8_r64_b2_s4_x4", (2304, 1536): "tma_m8_r64_b2_s3_x4", (7168, 1536): "tma_m8_r64_b2_s4_c2_d6",
            (6288, 7168): "tma_m8_r64_b2_s5_c2_d6", (1536, 128): "tma_m8_r64_b2_s4_c2_u1",
            (6016, 7168): "tma_m8_r64_b2_s5_c2_d6", (7168, 3584): "tma_m8_r64_b2_s5_c2_d6",
            (7168, 768): "tma_m8_r64_b2_s5_c2_d6", (8448, 7168): "tma_m8_r64_b2_s5_c2_d6",
            (7168, 4224): "tma_m8_r64_b2_s5_c2_d6", (20480, 7168): "tma_m8_r64_b2_s4_c2_u1"}
EXPLICIT.update({"K16": [(nk, [8], c.replace("_m8_", "_m16_")) for nk, c in PICKS_M8.items()],
                 "C8": [(nk, [16], c.replace("_m8_", "_m16_")) for nk, c in PICKS_M8.items()]})


# Session 39: trials written by another script (tools/trials/row_stream_table.py), a JSON file named by EXTRA_TRIALS:
# {name: [[n, k, [m, ...], config], ...]}.
if os.environ.get("EXTRA_TRIALS"):
    for name, items in json.load(open(os.environ["EXTRA_TRIALS"])).items():
        EXPLICIT[name] = [((n, k), ms, c) for n, k, ms, c in items]
# Session 40: trials whose table holds only their own entries (the heuristic decides everywhere else, as on a GPU with no
# shipped table), named by BARE_TRIALS in the same format; an empty list is the heuristic alone.
BARE = {}
if os.environ.get("BARE_TRIALS"):
    for name, items in json.load(open(os.environ["BARE_TRIALS"])).items():
        BARE[name] = [((n, k), ms, c) for n, k, ms, c in items]


def main():
    out = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    base = json.load(open(os.path.join(root, "tables", "nvidia-h200.json")))
    for name, (items, top) in TRIALS.items():
        t = copy.deepcopy(base)
        for (n, k), config in items:
            for m in range(1, top + 1):
                c = config.replace("_m8_", "_m16_") if m > 8 else config
                t["entries"].append({"dtype": "bf16", "n": n, "k": k, "m": m, "config": c, "us": 1.0, "cublaslt_us": 1.0})
        save(out, name, t)
    for trials, keep_shipped in ((EXPLICIT, True), (BARE, False)):
        for name, items in trials.items():
            t = copy.deepcopy(base)
            if not keep_shipped:
                t["entries"] = []
            for (n, k), ms, c in items:
                for m in ms:
                    t["entries"].append({"dtype": "bf16", "n": n, "k": k, "m": m, "config": c, "us": 1.0,
                                         "cublaslt_us": 1.0})
            save(out, name, t)

def save(out, name, table):
    # A forced entry replaces the shipped one of its problem (the table refuses duplicates); the last forced one wins.
    kept = {}
    for e in table["entries"]:
        kept[(e["dtype"], e["n"], e["k"], e["m"])] = e
    table["entries"] = sorted(kept.values(), key=lambda e: (e["dtype"], e["n"], e["k"], e["m"]))
    os.makedirs(os.path.join(out, name, "tables"), exist_ok=True)
    json.dump(table, open(os.path.join(out, name, "tables", "nvidia-h200.json"), "w"))

main()
