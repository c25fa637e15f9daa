#!/usr/bin/env python3
"""Session 11's step trials (docs/kernels.md "Session 11"): copies of the shipped table that force one TMA config on
one shape at M = 1..8 (s*: 1..16, the 16-token tile's name at 9..16), so that the whole step shows what that config
costs per launch against the first cut. Usage: tools/trials/step_trial_tables.py OUTDIR; then
tools/trials/step_trials.sh runs the step once through each table."""
import copy, json, os, sys

M8, M16 = range(1, 9), range(9, 17)
# t1: the sweep's best (sweep-17dc0d8.json) where it beat the bench's pick at 1946714 by 3% (M = 1 alone, 8 for
# 2..8, 16 for 9..16); t2: one rule, 16-row stream-K over two CTAs per SM on every shape from 24 MB but the clusters.
T1 = [((2112, 7168), M8, "tma_m8_r16_b8_s4_c2_u1"), ((2112, 7168), M16, "tma_m16_r16_b4_s6_c2_u1"),
      ((4480, 7168), M8, "tma_m8_r16_b8_s4_c2_u1"), ((4480, 7168), M16, "tma_m16_r32_b4_s4_c1_u1"),
      ((6288, 7168), [1], "tma_m8_r16_b4_s8_c2_u1"), ((6288, 7168), range(2, 9), "tma_m8_r16_b8_s4_c2_u1"),
      ((6288, 7168), M16, "tma_m16_r16_b8_s3_c2_u1"), ((7168, 3584), range(2, 9), "tma_m8_r16_b8_s4_c2_u1"),
      ((20480, 7168), [1], "tma_m8_r32_b4_s4_c1_u1")]
T2 = [(nk, ms, c) for nk in [(6288, 7168), (4480, 7168), (6016, 7168), (6144, 7168), (7168, 3584), (8448, 7168),
                             (7168, 14336), (20480, 7168), (7168, 4224)]
      for ms, c in [(M8, "tma_m8_r16_b8_s4_c2_u1"), (M16, "tma_m16_r16_b4_s6_c2_u1")]]
# Session 12, after the step's TMA timeline (trace-s0/u6 at 0139b4b): a kernel whose CTAs fill an SM (two of ~81 KB or
# more) keeps its successor's CTAs out until it ends, so the successor prefills nothing (7168 x 1536 after the 16-row
# stream-K: early window 21 -> 1 us, +5.6 us per launch). L*: every TMA shape the step launches more than once (all
# but f_b_proj 1536 x 128, too small to matter, and lm_head) with one config of at most one CTA per SM (<= 113 KB),
# so that the next kernel's CTAs always fit beside it.
STEP_SHAPES = [(6288, 7168), (7168, 3584), (3584, 7168), (1536, 7168), (896, 7168), (7168, 1536), (7168, 768),
               (2112, 7168), (2304, 1536), (8448, 7168), (7168, 4224)]
JOINT = {"L1": "tma_m8_r64_b2_s5_c1_d6", "L2": "tma_m8_r64_b2_s5_c1_u1", "L3": "tma_m8_r64_b2_s4_c1_d6",
         "L4": "tma_m8_r128_b1_s6_c1_d6"}
EXPLICIT = {"t1": T1, "t2": T2}  # name: [((N, K), Ms, config)]
EXPLICIT.update({name: [(nk, M8, c) for nk in STEP_SHAPES] for name, c in JOINT.items()})
# P*: the joint tables all lost (L1 +141 / +790 us at M = 1 / 8, L3 +340 / +930); only the predecessors that left
# their successor no room in the s0 timeline (224 CTAs, two per SM) get one CTA per SM: o_proj 7168 x 1536 before
# 896 x 7168 (0% of its CTAs beside), 3584 x 7168 (x4) before 7168 x 3584 (18%), 7168 x 3584 before 1536 x 7168 (12%).
P1 = [((7168, 1536), M8, "tma_m8_r64_b2_s5_c1_d6")]
P2 = [((7168, 3584), M8, "tma_m8_r64_b2_s5_c1_d6"), ((3584, 7168), M8, "tma_m8_r64_b2_s4_x2")]
EXPLICIT.update({"P1": P1, "P2": P2, "P12": P1 + P2})
TRIALS = {  # name: [((N, K), config at the 8-token tile)], highest M forced
    "s1": ([((6288, 7168), "tma_m8_r16_b8_s4_c2_u1")], 16),
    "s2": ([((6288, 7168), "tma_m8_r32_b4_s4_c1_u1")], 16),
    "s3": ([((2112, 7168), "tma_m8_r16_b8_s4_c2_u1")], 16),
    "s4": ([((6288, 7168), "tma_m8_r64_b2_s4_c2_u1")], 16),
    "s5": ([((7168, 3584), "tma_m8_r16_b8_s4_c2_u1")], 16),
    "s6": ([((6288, 7168), "tma_m8_r32_b4_s4_c2_u1")], 16),
    "u1": ([((6288, 7168), "tma_m8_r16_b8_s3_c2_u1")], 8),
    "u2": ([((6288, 7168), "tma_m8_r16_b4_s6_c2_u1")], 8),
    "u4": ([((2112, 7168), "tma_m8_r16_b8_s3_c2_u1")], 8),
    "u5": ([((7168, 3584), "tma_m8_r16_b8_s3_c2_u1")], 8),
    "u6": ([((6288, 7168), "tma_m8_r16_b8_s4_c2_u1")], 8),
    "u7": ([((6288, 7168), "tma_m8_r64_b2_s4_c2_u1")], 8),
    # Which neighbour pays (after session 11; not yet run): in the step 6288 x 7168 follows shared.down (7168 x 768)
    # and precedes f_b_proj (1536 x 128), which reads its output. Each pair forces that neighbour to cuBLASLt (no
    # PDL edge on that side), without (nX_base) and with (nX) the 16-row stream-K on 6288 x 7168.
    "n1_base": ([((1536, 128), "cublaslt")], 8),
    "n1": ([((1536, 128), "cublaslt"), ((6288, 7168), "tma_m8_r16_b8_s4_c2_u1")], 8),
    "n2_base": ([((7168, 768), "cublaslt")], 8),
    "n2": ([((7168, 768), "cublaslt"), ((6288, 7168), "tma_m8_r16_b8_s4_c2_u1")], 8),
}

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
    for name, items in EXPLICIT.items():
        t = copy.deepcopy(base)
        for (n, k), ms, c in items:
            for m in ms:
                t["entries"].append({"dtype": "bf16", "n": n, "k": k, "m": m, "config": c, "us": 1.0, "cublaslt_us": 1.0})
        save(out, name, t)

def save(out, name, table):
    os.makedirs(os.path.join(out, name, "tables"), exist_ok=True)
    json.dump(table, open(os.path.join(out, name, "tables", "nvidia-h200.json"), "w"))

main()
