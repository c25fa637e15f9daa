#!/usr/bin/env python3
"""Session 42 (docs/tuning.md "Session 42"): variants of study.py's kNN selectors. `python3 exp.py grid`: k, radius,
switch threshold, voting fraction and scope, leave-one-set-out and earlier-sets-only; `python3 exp.py ablate`: each
feature dropped in turn. Run from this folder (it imports study.py)."""
import study, statistics, sys, math
from study import *
pts = load()
for p in pts: p['f'] = feats(p); prep(p)
sets = [s for s in ORDER if any(p['set'] == s for p in pts)]
def sel_g(p, tr, K=7, radius=1.5, need=3, gain=0.0, frac=0.0, agg='mean', scope='all'):
    keys = {c: rel(c, p['pick']) for c in p['cands'] if c != p['pick']}
    if scope == 'tma': keys = {c: k for c, k in keys.items() if not c.startswith('cublaslt')}
    if scope == 'nolt2lt': keys = {c: k for c, k in keys.items() if not (c.startswith('cublaslt') and p['pick'].startswith('cublaslt'))}
    b = neighbours(p, tr, K, radius, 'kB', set(keys.values()), 1)
    best, bc = math.log(1 - gain), p['pick']
    for c, key in keys.items():
        nb = b[key]
        if len(nb) < need: continue
        if frac and sum(1 for v in nb if v < math.log(1 - max(gain, 0.0001))) < frac * len(nb): continue
        pred = statistics.mean(nb) if agg == 'mean' else statistics.median(nb) if agg == 'med' else max(nb)
        if pred < best: best, bc = pred, c
    return bc
def run(fn, label):
    out = []
    for mode in ('loso', 'before'):
        T, P = [], []
        for i, s in enumerate(sets):
            test = [p for p in pts if p['set'] == s]
            tr = set(sets) - {s} if mode == 'loso' else set(sets[:i])
            T += test; P += [fn(p, tr) for p in test]
        r = summarize(T, P); out.append('%5.1f%% med %5.2f%% worst %6.1f%% lt %3d' % (100*r['w5'], 100*r['med'], 100*r['worst'], r['lt']))
    print('%-45s LOSO %s | BEFORE %s' % (label, out[0], out[1]), flush=True)
what = sys.argv[1] if len(sys.argv) > 1 else 'grid'
if what == 'grid':
    precompute(pts)
    run(lambda p, tr: p['pick'], 'rule')
    for K in (3, 7, 15):
        for radius in (0.75, 1.5, 3.0):
            run(lambda p, tr: sel_g(p, tr, K=K, radius=radius), 'b K=%d r=%.2f' % (K, radius))
    for gain in (0.02, 0.05):
        for frac in (0, 0.6, 0.8):
            for agg in ('mean', 'max'):
                run(lambda p, tr: sel_g(p, tr, gain=gain, frac=frac, agg=agg), 'b gain=%.2f frac=%.1f agg=%s' % (gain, frac, agg))
    for scope in ('tma', 'nolt2lt'):
        for gain in (0.0, 0.03):
            run(lambda p, tr: sel_g(p, tr, gain=gain, scope=scope), 'b scope=%s gain=%.2f' % (scope, gain))
elif what == 'ablate':
    names = ['tiles/SM', 'log K', 'log M', 'K%64', 'N%8', 'KiB/SM']
    for i in range(-1, 6):
        w = list(W)
        if i >= 0: w[i] = 0.0 if W[i] else 1.0
        precompute(pts, w)
        run(lambda p, tr: sel_g(p, tr), 'b w=%s (%s %s)' % (w, 'toggle' if i >= 0 else 'base', names[i] if i >= 0 else ''))
