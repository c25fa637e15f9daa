#!/usr/bin/env python3
"""Top-k first-call timing study (offline, no GPU): if the library timed the heuristic's pick plus k-1 alternatives
chosen by a fixed structural recipe relative to the pick at the first call of each new shape, how close to the best
measured would it land?

Data: docs/benchmarks/h200/heuristic-*.json through study.load() (read-only). Each point's candidates are the configs
within 2 name tokens of the pick (same family and token tile) plus cuBLASLt's answers (and, where the pick is not tma,
the tma family's first cut): "best" and "within 5%" are relative to that neighbourhood.

A move is a config recast relative to the pick (see movekey()): e.g. 'x:S+1 x/2' = same x-variant config with the next
listed stage count and half the cluster; 'LT:cublaslt_a1' = cuBLASLt's second heuristic answer; 'CUT:tma' = the tma
family's first cut where the pick is not tma. The recipe for a pick of class C (x, lead, sk, cublaslt, bulk, reg) is a
ranked list of moves learned by greedy set cover over training points of class C: each step adds the move that puts the
most still-uncovered training points within 5% of their best (the pick itself covers first; ties by total within-5%
count). Once no move adds coverage the rest follow by total within-5% count. At an evaluated point the recipe times the
pick and the first k-1 moves of its class that exist in the library (a config name seen anywhere in the reports; a
structural test that reads no timing) and name a config not already timed. A move whose config exists but was not measured at the point gives nothing: it
is not replaced by the next move (pessimistic); 'allmeas' is the fraction of points where every such config was
measured. Blind: train on sets before the evaluated one in study.ORDER; LOSO: train on every other set.
Usage: python3 topk.py             the study
       python3 topk.py lead:S+1    one move against the pick, wherever both were measured (a candidate rule's evidence)
       python3 topk.py --lists     the lists learned on every set, first 12 per kind (lab/tune_moves.cpp holds them)"""
import os, sys, re, math, statistics, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import study

STAGES = [3, 4, 5, 6, 7, 8, 12, 16, 24]   # include/skinnygemm/config.h kTmaStages
UNITS = [1, 2, 8]                           # kTmaMinUnits
KS = [1, 2, 3, 4, 6, 8, 12]
MAXMOVES = 60   # length of each learned list (the recipe takes its first k-1 usable moves)

def pclass(c):
    a = study.parse(c)
    if a: return a[0]
    return 'cublaslt' if c.startswith('cublaslt') else c.split('_')[0]

def sidx(s): return STAGES.index(s) if s in STAGES else None

def fmt_ratio(name, a, b):  # b relative to a
    return '%s*%g' % (name, b / a) if b > a else '%s/%g' % (name, a / b)

def tma_key(a, c):
    """Move from tma pick a to tma candidate c (both parsed tuples)."""
    parts = []
    if c[1] != a[1]: parts.append(fmt_ratio('r', a[1], c[1]))
    if c[2] != a[2]: parts.append(fmt_ratio('b', a[2], c[2]))
    if c[3] != a[3]:
        i, j = sidx(a[3]), sidx(c[3])
        parts.append('S%+d' % (j - i) if i is not None and j is not None else 's=%d' % c[3])
    if c[0] == a[0]:
        if c[0] == 'x' and c[4] != a[4]: parts.append(fmt_ratio('x', a[4], c[4]))
        if c[0] == 'lead':
            if c[4] != a[4]: parts.append('c%+d' % (c[4] - a[4]))
            if c[5] != a[5]: parts.append('d%+d' % (c[5] - a[5]))
        if c[0] == 'sk':
            if c[4] != a[4]: parts.append('c%+d' % (c[4] - a[4]))
            if c[5] != a[5]: parts.append('U%+d' % (UNITS.index(c[5]) - UNITS.index(a[5])))
        tgt = ''
    else:  # variant switch: the target's own parameters (c relative where both have one)
        if c[0] == 'x': tgt = '>x(x%d)' % c[4]
        else:
            cc = ('c%+d' % (c[4] - a[4])) if a[0] in ('lead', 'sk') else 'c%d' % c[4]
            tgt = '>%s(%s,%s%d)' % (c[0], cc, 'd' if c[0] == 'lead' else 'u', c[5])
    return a[0] + ':' + ' '.join(parts) + tgt

def tok_key(pick, c):  # bulk / reg within their own family: token-wise differences
    ta, tc = pick.split('_'), c.split('_')
    if len(ta) != len(tc) or ta[:2] != tc[:2]: return None
    parts = []
    for x, y in zip(ta[2:], tc[2:]):
        if x == y: continue
        mx, my = re.match(r'([a-z]+)(\d+)$', x), re.match(r'([a-z]+)(\d+)$', y)
        if mx and my and mx.group(1) == my.group(1): parts.append(fmt_ratio(mx.group(1), int(mx.group(2)), int(my.group(2))))
        else: parts.append('%s>%s' % (x, y))
    return ta[0] + ':' + ' '.join(parts)

def movekey(c, pick):
    if c == pick: return 'SAME'
    if c.startswith('cublaslt'): return 'LT:' + c
    a, b = study.parse(pick), study.parse(c)
    if a and b: return tma_key(a, b)
    if b: return 'CUT:tma'          # a tma config where the pick is not tma: the family's first cut
    if a: return 'CUT:' + c.split('_')[0]
    k = tok_key(pick, c)
    return k if k else 'CUT:' + c.split('_')[0]

def scale(v, p):  # 'r*2' / 'r/2' applied to v
    f = float(p[2:])
    return round(v * f) if p[1] == '*' else round(v / f)

def apply_move(key, pick, cands):
    """Config the move names for this pick: a name, None (does not apply), or for CUT moves the measured config."""
    if key == 'SAME': return pick
    if key.startswith('LT:'): return key[3:]
    if key.startswith('CUT:'):
        fam = key[4:]
        if pclass(pick) == fam or (fam == 'tma' and study.parse(pick)): return None
        hits = [c for c in cands if (study.parse(c) if fam == 'tma' else c.startswith(fam + '_'))]
        return hits[0] if len(hits) == 1 else None   # the first cut is known only through its measurement
    cls, body = key.split(':', 1)
    a = study.parse(pick)
    if a:
        if cls != a[0]: return None
        body, _, tgt = body.partition('>')
        r, b, s = a[1], a[2], a[3]
        var = list(a[4:])
        for p in body.split():
            if p[0] == 'r': r = scale(r, p)
            elif p[0] == 'b': b = scale(b, p)
            elif p[0] == 'S':
                i = sidx(s)
                if i is None or not 0 <= i + int(p[1:]) < len(STAGES): return None
                s = STAGES[i + int(p[1:])]
            elif p.startswith('s='): s = int(p[2:])
            elif p[0] == 'x': var[0] = scale(var[0], p)
            elif p[0] == 'c': var[0] += int(p[1:])
            elif p[0] == 'd': var[1] += int(p[1:])
            elif p[0] == 'U':
                i = UNITS.index(var[1]) + int(p[1:])
                if not 0 <= i < len(UNITS): return None
                var[1] = UNITS[i]
        head = pick.split('_')[0] + '_' + pick.split('_')[1] + '_r%d_b%d_s%d_' % (r, b, s)
        if tgt:
            m = re.match(r'(x|lead|sk)\((?:x(\d+)|(c[+-]\d+|c\d+),([du])(\d+))\)$', tgt)
            if m.group(1) == 'x': return head + 'x' + m.group(2)
            cc = m.group(3)
            cv = var[0] + int(cc[1:]) if cc[1] in '+-' else int(cc[1:])
            return head + 'c%d_%s%s' % (cv, m.group(4), m.group(5))
        if a[0] == 'x': return head + 'x%d' % var[0]
        return head + 'c%d_%s%d' % (var[0], 'd' if a[0] == 'lead' else 'u', var[1])
    ta = pick.split('_')
    if cls != ta[0]: return None
    out = list(ta)
    for p in body.split():
        if '>' in p:
            x, y = p.split('>')
            if x not in out[2:]: return None
            out[out.index(x, 2)] = y
            continue
        m = re.match(r'([a-z]+)([*/])(\d+(?:\.\d+)?)$', p)
        for i in range(2, len(out)):
            mt = re.match(r'([a-z]+)(\d+)$', out[i])
            if mt and mt.group(1) == m.group(1):
                v = int(mt.group(2)) * float(m.group(3)) if m.group(2) == '*' else int(mt.group(2)) / float(m.group(3))
                if v != int(v): return None
                out[i] = m.group(1) + str(int(v)); break
        else: return None
    return '_'.join(out)

# ---------------------------------------------------------------------------------------------------------------
def prepare(pts):
    known = set()
    for p in pts: known.update(p['cands'])
    bad = 0
    for p in pts:
        p['cls'] = pclass(p['pick'])
        p['keys'] = {}
        for c, us in p['cands'].items():
            k = movekey(c, p['pick'])
            if apply_move(k, p['pick'], p['cands']) != c: bad += 1
            p['keys'][k] = min(us, p['keys'].get(k, 1e18))
        p['w5keys'] = {k for k, us in p['keys'].items() if us <= 1.05 * p['best']}
        p['pickok'] = p['cands'][p['pick']] <= 1.05 * p['best']
    assert bad == 0, '%d candidates do not round-trip through their move' % bad
    return known

def rank_greedy(train):
    """Greedy set cover over training points (within 5% of best), then by total within-5% count."""
    tot = collections.Counter(k for p in train for k in p['w5keys'] if k != 'SAME')
    unc = [p for p in train if not p['pickok']]
    order = []
    while len(order) < MAXMOVES:
        gain = collections.Counter(k for p in unc for k in p['w5keys'] if k != 'SAME' and k not in order)
        if not gain: break
        k = max(gain, key=lambda k: (gain[k], tot[k], k))
        order.append(k)
        unc = [p for p in unc if k not in p['w5keys']]
    for k in sorted(tot, key=lambda k: (-tot[k], k)):
        if len(order) >= MAXMOVES: break
        if k not in order: order.append(k)
    return order

def rank_freq(train):
    """Rate at which the move is within 5% among training points where it was measured (>= 10 such points)."""
    meas = collections.Counter(k for p in train for k in p['keys'] if k != 'SAME')
    w = collections.Counter(k for p in train for k in p['w5keys'] if k != 'SAME')
    ks = [k for k in meas if meas[k] >= 10]
    return sorted(ks, key=lambda k: (-w[k] / meas[k], -meas[k], k))[:MAXMOVES]

def learn(train, percls, ranker):
    if not percls: return {'*': ranker(train)}
    by = collections.defaultdict(list)
    for p in train: by[p['cls']].append(p)
    return {c: ranker(v) for c, v in by.items()}

def recipe(p, orders, known, k, skip):
    """Configs timed: the pick, then the first k-1 moves of the class's list (skip: moves whose config the library
    does not have, or that name a config already timed, are passed over, a structural test that reads no timing;
    otherwise they use up their slot)."""
    order = orders.get(p['cls'], orders.get('*', []))
    timed, used = [p['pick']], 0
    for key in order:
        if used >= k - 1: break
        c = apply_move(key, p['pick'], p['cands'])
        ok = c is not None and (c in known or key.startswith('CUT:'))
        if skip and (not ok or c in timed): continue
        used += 1
        if ok and c not in timed: timed.append(c)
    return timed

def score(rows):
    """rows: (point, list of configs timed). The choice is the fastest measured one."""
    loss, lt, allm, nd, nm, cost, rcost = [], 0, 0, [], [], [], []
    for p, timed in rows:
        meas = [c for c in timed if c in p['cands']]
        us = min(p['cands'][c] for c in meas)
        loss.append(us / p['best'] - 1)
        lt += us > 1.03 * p['lt']
        allm += len(meas) == len(timed)
        nd.append(len(timed)); nm.append(len(meas))
        cost.append(sum(p['cands'][c] for c in meas)); rcost.append(cost[-1] / p['cands'][p['pick']])
    n = len(rows)
    return dict(n=n, w5=sum(l <= 0.05 for l in loss) / n, w10=sum(l <= 0.10 for l in loss) / n,
                med=statistics.median(loss), worst=max(loss), lt=lt, allm=allm / n, nd=sum(nd) / n, nm=sum(nm) / n,
                cost=statistics.median(cost), rcost=statistics.median(rcost))

def run(pts, sets, known, mode, percls=True, ranker=rank_greedy, skip=True):
    """-> {k: {set: [(p, timed)]}}, {set: orders}"""
    out = {k: collections.defaultdict(list) for k in KS + ['all']}
    learned = {}
    for i, s in enumerate(sets):
        train_sets = set(sets[:i]) if mode == 'blind' else set(sets) - {s}
        if not train_sets: continue
        train = [p for p in pts if p['set'] in train_sets]
        orders = learn(train, percls, ranker)
        learned[s] = orders
        for p in pts:
            if p['set'] != s: continue
            for k in KS: out[k][s].append((p, recipe(p, orders, known, k, skip)))
            out['all'][s].append((p, list(p['cands'])))
    return out, learned

def pooled(res, k, sets):
    return score([r for s in sets for r in res[k][s]])

def main():
    pts = study.load()
    sets = [s for s in study.ORDER if any(p['set'] == s for p in pts)]
    known = prepare(pts)
    blind, learned = run(pts, sets, known, 'blind')
    evals = [s for s in sets if s in learned]
    last = evals[-8:]
    print('points %d, sets %d (%s..%s); blind = trained on earlier sets, evaluated %s..%s (%d points); '
          'recipe = per pick class, greedy set cover, moves absent from the library skipped'
          % (len(pts), len(sets), sets[0], sets[-1], evals[0], evals[-1], sum(len(blind[1][s]) for s in evals)))
    print('w5/w10 = within 5/10% of best measured; med/worst = loss vs best; lt = points >3% slower than min(cuBLASLt, '
          'cuBLASLt torch); allmeas = every config the recipe names was measured; cfg = distinct configs the recipe '
          'times (pick included) / of them measured; cost = median per point of the measured timed configs\' us '
          '(sum, and over the pick\'s us)')
    hdr = '%-4s %6s %6s %6s %7s %4s %7s %11s %8s %6s'
    print('\n== BLIND pooled, %s..%s ==' % (evals[0], evals[-1]))
    print(hdr % ('k', 'w5', 'w10', 'med', 'worst', 'lt', 'allmeas', 'cfg/meas', 'cost_us', 'xpick'))
    line = '%-4s %5.1f%% %5.1f%% %5.2f%% %6.1f%% %4d %6.1f%% %5.2f/%5.2f %8.1f %6.2f'
    for k in KS + ['all']:
        r = pooled(blind, k, evals)
        print(line % (k, 100 * r['w5'], 100 * r['w10'], 100 * r['med'], 100 * r['worst'], r['lt'], 100 * r['allm'],
                      r['nd'], r['nm'], r['cost'], r['rcost']))
    print('\n== BLIND per set: w5 (lt) for k = %s, all ==' % ', '.join(map(str, KS)))
    print('%-13s %4s ' % ('set', 'pts') + ' '.join('%12s' % ('k=%s' % k) for k in KS + ['all']))
    for s in last + ['LAST8', 'ALLBLIND']:
        cells = []
        for k in KS + ['all']:
            r = score(blind[k][s]) if s in blind[k] else pooled(blind, k, last if s == 'LAST8' else evals)
            cells.append('%5.1f%% (%3d)' % (100 * r['w5'], r['lt']))
        n = len(blind[1][s]) if s in blind[1] else sum(len(blind[1][x]) for x in (last if s == 'LAST8' else evals))
        print('%-13s %4d ' % (s, n) + ' '.join('%12s' % c for c in cells))
    # variants, pooled over the same evaluated sets (w5 / lt / allmeas for each k)
    print('\n== variants, pooled over %s..%s: w5 / lt / allmeas ==' % (evals[0], evals[-1]))
    print('%-40s ' % 'variant' + ' '.join('%18s' % ('k=%d' % k) for k in KS[1:]))
    variants = [('blind, per class, greedy (main)', blind),
                ('blind, per class, greedy, no skip', run(pts, sets, known, 'blind', skip=False)[0]),
                ('blind, one list for all, greedy', run(pts, sets, known, 'blind', percls=False)[0]),
                ('blind, per class, within-5% rate', run(pts, sets, known, 'blind', ranker=rank_freq)[0]),
                ('LOSO, per class, greedy', run(pts, sets, known, 'loso')[0])]
    for name, res in variants:
        cells = []
        for k in KS[1:]:
            r = pooled(res, k, evals)
            cells.append('%5.1f%% %3d %5.1f%%' % (100 * r['w5'], r['lt'], 100 * r['allm']))
        print('%-40s ' % name + ' '.join('%18s' % c for c in cells))
    loso = variants[-1][1]
    print('\n== LOSO pooled over all %d sets ==' % len(sets))
    print(hdr % ('k', 'w5', 'w10', 'med', 'worst', 'lt', 'allmeas', 'cfg/meas', 'cost_us', 'xpick'))
    for k in KS + ['all']:
        r = pooled(loso, k, sets)
        print(line % (k, 100 * r['w5'], 100 * r['w10'], 100 * r['med'], 100 * r['worst'], r['lt'], 100 * r['allm'],
                      r['nd'], r['nm'], r['cost'], r['rcost']))
    # timing-noise proxy: cublaslt (the default) and cublaslt_a0 (its first answer) run the same algorithm as a rule
    d = sorted(abs(p['cands']['cublaslt'] / p['cands']['cublaslt_a0'] - 1) for p in pts
               if 'cublaslt' in p['cands'] and 'cublaslt_a0' in p['cands'])
    print('\nnoise proxy, |cublaslt / cublaslt_a0 - 1| over %d points: median %.2f%%, p90 %.2f%%, p99 %.2f%%'
          % (len(d), 100 * d[len(d) // 2], 100 * d[int(len(d) * 0.9)], 100 * d[int(len(d) * 0.99)]))
    # the learned order used on the last set, per class, with how often each move was measured and within 5% there
    s = evals[-1]
    train = [p for p in pts if p['set'] in set(sets[:sets.index(s)])]
    print('\n== learned order used on %s (trained on %s..%s): move  [train points of class where measured, '
          'within 5%%, newly covered by greedy] ==' % (s, sets[0], sets[sets.index(s) - 1]))
    cnt = collections.Counter(p['cls'] for p in train)
    for cls, order in sorted(learned[s].items(), key=lambda x: -cnt[x[0]]):
        tr = [p for p in train if p['cls'] == cls]
        unc = [p for p in tr if not p['pickok']]
        print('%s (%d train points, pick within 5%% at %d):' % (cls, len(tr), len(tr) - len(unc)))
        for i, key in enumerate(order[:10]):
            m = sum(key in p['keys'] for p in tr); w = sum(key in p['w5keys'] for p in tr)
            g = sum(key in p['w5keys'] for p in unc); unc = [p for p in unc if key not in p['w5keys']]
            print('  %2d %-30s [%4d %4d %4d]' % (i + 1, key, m, w, g))

def one_move(key):
    """The move's config against the pick at every point of the move's class where both were measured."""
    for small in (True, False):
        r = []
        for p in study.load():
            if pclass(p['pick']) != key.split(':')[0] or (p['m'] <= 16) != small: continue
            c = apply_move(key, p['pick'], p['cands'])
            if c and c != p['pick'] and c in p['cands']: r.append(p['cands'][c] / p['cands'][p['pick']])
        if r:
            print('%s at M %s 16: %d points, median %.3f of the pick, faster by > 1%% at %d, slower by > 1%% at %d'
                  % (key, '<=' if small else '>', len(r), statistics.median(r), sum(x < 0.99 for x in r),
                     sum(x > 1.01 for x in r)))

def print_lists():
    pts = study.load()
    prepare(pts)
    for cls, order in sorted(learn(pts, True, rank_greedy).items()):
        if cls != 'reg':  # the register family was retired in 0.2.0
            print(cls, [k if k.startswith(('LT:', 'CUT:')) else k.split(':', 1)[1] for k in order[:12]])

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--lists': print_lists()
    elif len(sys.argv) > 1: one_move(sys.argv[1])
    else: main()
