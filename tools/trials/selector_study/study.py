#!/usr/bin/env python3
"""Selector study: can a kNN selector over structural features beat the rule tree on blind held-out sets?
Reads docs/benchmarks/h200/heuristic-*.json (read-only). Pure Python. Usage: python3 study.py [-v]"""
import json, glob, re, math, os, sys, statistics, collections
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'docs', 'benchmarks', 'h200')
SMS = 132
ORDER = ['third','fourth','sixth','seventh','eighth','ninth','tenth','eleventh','twelfth','thirteenth','fourteenth',
         'fifteenth','sixteenth','seventeenth','eighteenth','nineteenth','twentieth','twentyfirst','twentysecond',
         'twentythird','twentyfourth']

def add_points(pts, name, rows):
    """A report's heuristic rows with candidates as points of set `name` into pts, keyed (set, N, K, M); a key already
    there (from a bigger part of the same set) is kept."""
    for r in rows:
        if r.get('kind') != 'heuristic' or not r.get('candidates'): continue
        key = (name, r['n'], r['k'], r['m'])
        if key in pts: continue
        c = {}
        for x in r['candidates']:
            if x.get('us') and x['us'] > 0: c[x['config']] = min(x['us'], c.get(x['config'], 1e9))
        if r['config'] not in c: c[r['config']] = r['us']
        pts[key] = dict(set=name, n=r['n'], k=r['k'], m=r['m'], pick=r['config'], cands=c, best=min(c.values()),
                        lt=min(r['cublaslt_us'], r.get('cublaslt_torch_us') or 1e9))

def load():
    pts = {}
    files = sorted(glob.glob(D + '/heuristic-*.json'), key=lambda f: -os.path.getsize(f))  # bigger part first
    for f in files:
        name = os.path.basename(f)[len('heuristic-'):-5].split('-')[0]
        if name in ORDER: add_points(pts, name, json.load(open(f))['rows'])
    return list(pts.values())

def feats(p):
    n, k, m = p['n'], p['k'], p['m']
    tiles = math.ceil(n / 64)
    return [math.log2(tiles / SMS),              # 64-row tiles per SM
            math.log2(k / 64),                   # K stages (64 wide)
            math.log2(m),                        # tokens
            1.0 if k % 64 == 0 else 0.0,         # K % 64
            1.0 if n % 8 == 0 else 0.0,          # y rows 16-byte aligned (cuBLASLt vs family)
            math.log2(n * k * 2 / SMS / 1024)]   # weight KiB per SM
W = [1.0, 1.0, 1.5, 3.0, 3.0, 0.0]               # feature weights (binary ones ~ must-match)

def dist(a, b, w=W):
    return math.sqrt(sum(wi * (x - y) ** 2 for wi, x, y in zip(w, a, b)))

RX = re.compile(r'tma_m(\d+)_r(\d+)_b(\d+)_s(\d+)_(?:x(\d+)|c(\d+)_d(\d+)|c(\d+)_u(\d+))$')
def parse(c):
    m = RX.match(c)
    if not m: return None
    t, r, b, s, x, cd, d, cu, u = m.groups()
    if x: return ('x', int(r), int(b), int(s), int(x))
    if cd: return ('lead', int(r), int(b), int(s), int(cd), int(d))
    return ('sk', int(r), int(b), int(s), int(cu), int(u))

def absname(c):  # config without its token tile (the tile follows from M)
    return re.sub(r'^(tma|bulk|reg)_m\d+_', r'\1_', c)

def rel(c, pick):  # (b): candidate relative to the rule pick
    if c == pick: return 'SAME'
    a, b = parse(c), parse(pick)
    if a is None or b is None or a[0] != b[0]:
        return 'ABS:' + absname(c) + ('|from_lt' if pick.startswith('cublaslt') else '')
    parts = [a[0]]
    names = ['r', 'b', 's', 'p', 'q']
    for i in range(1, len(a)):
        if a[i] != b[i]: parts.append('%s%+d' % (names[i - 1], a[i] - b[i]) if names[i-1] in 'sq' else '%s*%g' % (names[i - 1], a[i] / b[i]))
    return ' '.join(parts)

def lg(x): return math.log(x)

def prep(q):
    q['kA'] = {absname(c): (lg(us / q['best']), lg(us / q['cands'][q['pick']])) for c, us in q['cands'].items()}
    q['kB'] = {rel(c, q['pick']): (lg(us / q['best']), lg(us / q['cands'][q['pick']])) for c, us in q['cands'].items()}

NB = {}  # id(point) -> sorted [(d, q)] over all points within RMAX (filtered per fold)
RMAX, NMAX = 3.0, 1500
def precompute(pts, w=None):
    w = w or W
    NB.clear()
    for p in pts:
        ds = sorted(((dist(p['f'], q['f'], w), i) for i, q in enumerate(pts) if q is not p and q['set'] != p['set']))
        NB[id(p)] = [(d, pts[i]) for d, i in ds[:NMAX] if d <= RMAX]

def neighbours(p, train_sets, K, radius, field, wanted, col):
    b = {w: [] for w in wanted}
    for d, q in NB[id(p)]:
        if d > radius: break
        if q['set'] not in train_sets: continue
        for key, v in q[field].items():
            if key in b and len(b[key]) < K: b[key].append(v[col])
    return b

PEN = 0.08  # prior log-slowdown for candidates with too few neighbours
P = dict(K=7, radius=0.75)
def sel_a(p, train):
    keys = {c: absname(c) for c in p['cands']}
    b = neighbours(p, train, P['K'], P['radius'], 'kA', set(keys.values()), 0)
    best, bc = 1e9, p['pick']
    for c in p['cands']:
        nb = b[keys[c]]
        pred = statistics.mean(nb) if len(nb) >= 2 else PEN
        if pred < best - 1e-12 or (abs(pred - best) < 1e-12 and c == p['pick']): best, bc = pred, c
    return bc

def sel_b(p, train, need=3):
    keys = {c: rel(c, p['pick']) for c in p['cands'] if c != p['pick']}
    b = neighbours(p, train, P['K'], P['radius'], 'kB', set(keys.values()), 1)
    best, bc = 0.0, p['pick']
    for c, key in keys.items():
        nb = b[key]
        if len(nb) < need: continue
        pred = statistics.mean(nb)
        if pred < best: best, bc = pred, c
    return bc

def sel_c(p, train, need=4, frac=0.8):
    keys = {c: rel(c, p['pick']) for c in p['cands'] if c != p['pick']}
    b = neighbours(p, train, P['K'], P['radius'], 'kB', set(keys.values()), 1)
    best, bc = lg(0.95), p['pick']
    for c, key in keys.items():
        nb = b[key]
        if len(nb) < need: continue
        wins = sum(1 for v in nb if v < lg(0.95))
        med = statistics.median(nb)
        if wins >= frac * len(nb) and med < best: best, bc = med, c
    return bc

def summarize(pts, picks):
    loss = [p['cands'][c] / p['best'] - 1 for p, c in zip(pts, picks)]
    lt = sum(1 for p, c in zip(pts, picks) if p['cands'][c] > 1.03 * p['lt'])
    return dict(n=len(pts), w5=sum(l <= 0.05 for l in loss) / len(pts), med=statistics.median(loss), worst=max(loss), lt=lt,
                tot=sum(p['cands'][c] for p, c in zip(pts, picks)))

def main():
    pts = load()
    for p in pts: p['f'] = feats(p)
    sets = [s for s in ORDER if any(p['set'] == s for p in pts)]
    for p in pts: prep(p)
    precompute(pts)
    methods = {'rule': None, 'a_knn_abs': sel_a, 'b_knn_rel': sel_b, 'c_rule+override': sel_c}
    res = {mode: {m: {} for m in methods} for mode in ('loso', 'before')}
    allp = {mode: {m: ([], []) for m in methods} for mode in res}
    for mode in res:
        for i, s in enumerate(sets):
            test = [p for p in pts if p['set'] == s]
            train = set(sets) - {s} if mode == 'loso' else set(sets[:i])
            for m, fn in methods.items():
                picks = [p['pick'] for p in test] if fn is None else [fn(p, train) for p in test]
                res[mode][m][s] = summarize(test, picks)
                allp[mode][m][0].extend(test); allp[mode][m][1].extend(picks)
    for mode in res:
        print('\n== %s ==  (w5 = frac within 5%% of best measured; lt = points >3%% slower than min cuBLASLt)' % mode)
        print('%-13s %4s ' % ('set', 'pts') + ' '.join('%-27s' % m for m in methods))
        for s in sets + ['ALL']:
            row = []
            for m in methods:
                r = res[mode][m][s] if s != 'ALL' else summarize(*allp[mode][m])
                row.append('%5.1f%% %5.2f%% %5.1f%% %3d  ' % (100 * r['w5'], 100 * r['med'], 100 * r['worst'], r['lt']))
            n = res[mode]['rule'][s]['n'] if s != 'ALL' else len(allp[mode]['rule'][0])
            print('%-13s %4d ' % (s, n) + ' '.join('%-27s' % x for x in row))
    # oracle within candidates: how many rule misses have the best among the candidate set
    print('\npoints:', len(pts), 'sets:', len(sets))

if __name__ == '__main__':
    main()
