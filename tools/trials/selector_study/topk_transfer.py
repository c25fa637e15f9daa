#!/usr/bin/env python3
"""Do topk.py's move lists carry over to another GPU? (offline, no GPU, read-only on data)

topk.py learns, per pick class, a ranked list of moves relative to the heuristic's pick (greedy set cover over training
points, within 5% of the best measured) and scores "time the pick and the first k-1 moves, keep the fastest". Here the
lists are learned on every H200 set (study.load(): docs/benchmarks/h200/heuristic-*.json, sets of study.ORDER) and
evaluated on every H100 heuristic report under docs/benchmarks/h100 (any JSON whose rows are kind == 'heuristic' with
candidates: the blind held-out sets twenty-four and twenty-five, and session 42's call-3 verification points of rules R
and S, kept as a set of their own, 'verify'). Points are built as study.load() builds them, one per (set, N, K, M), the
bigger file first. 'known' (the config names the library has) is the union of both GPUs' candidate names.

Reference: the same evaluation with lists learned on the H100 reports themselves, leaving the evaluated set out.
Variants: H200 lists learned without the H200 set of the same name (set twenty-four's shapes were measured on both
GPUs), and lists learned on H200 + the other H100 sets.
Usage: python3 topk_transfer.py
       python3 topk_transfer.py --score REPORT.json...   the lists learned on every H200 set (what `tune --moves` ships)
                                                         scored on new reports: a blind judge of the quick tune"""
import os, sys, json, glob, collections
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import study, topk

H100 = os.path.join(os.path.dirname(study.D), 'h100')
HELDOUT_ORDER = study.ORDER + ['twentyfifth']

def setname(f):
    b = os.path.basename(f)[:-5]
    if b.startswith('heuristic-'): return b[len('heuristic-'):].split('-')[0]
    if 'verify' in b: return 'verify'       # session42/call3-verify-r / -s: rules R's and S's untimed points
    return os.path.relpath(f, H100)[:-5]

def load_dir(d, paths=None):
    """study.load()'s points from every heuristic report under d (recursive), or from paths, set = setname(file)."""
    files = []
    for f in paths or glob.glob(os.path.join(d, '**', '*.json'), recursive=True):
        try: rows = json.load(open(f)).get('rows') or []
        except (ValueError, AttributeError): continue
        if any(r.get('kind') == 'heuristic' and r.get('candidates') for r in rows): files.append((f, rows))
    files.sort(key=lambda x: (-os.path.getsize(x[0]), x[0]))   # bigger part first
    pts, src = {}, collections.defaultdict(list)
    for f, rows in files:
        name = setname(f)
        src[name].append(os.path.relpath(f, d))
        study.add_points(pts, name, rows)
    return list(pts.values()), dict(src)

def evaluate(test, orders, known):
    """-> {k: [(p, timed)]}"""
    out = {k: [(p, topk.recipe(p, orders, known, k, True)) for p in test] for k in topk.KS}
    out['all'] = [(p, list(p['cands'])) for p in test]
    return out

HDR = '%-4s %6s %6s %6s %7s %4s %7s %11s' % ('k', 'w5', 'w10', 'med', 'worst', 'lt', 'allmeas', 'cfg/meas')
LINE = '%-4s %5.1f%% %5.1f%% %5.2f%% %6.1f%% %4d %6.1f%% %5.2f/%5.2f'

def table(title, res, sets):
    print('\n== %s ==' % title)
    print(HDR)
    for k in topk.KS + ['all']:
        r = topk.score([x for s in sets for x in res[s][k]])
        print(LINE % (k, 100 * r['w5'], 100 * r['w10'], 100 * r['med'], 100 * r['worst'], r['lt'], 100 * r['allm'],
                      r['nd'], r['nm']))

def perset(title, res, sets, pools):
    print('\n== %s: w5 (lt) per set, k = %s, all ==' % (title, ', '.join(map(str, topk.KS))))
    print('%-13s %4s ' % ('set', 'pts') + ' '.join('%12s' % ('k=%s' % k) for k in topk.KS + ['all']))
    for label, ss in [(s, [s]) for s in sets] + pools:
        cells = []
        for k in topk.KS + ['all']:
            r = topk.score([x for s in ss for x in res[s][k]])
            cells.append('%5.1f%% (%3d)' % (100 * r['w5'], r['lt']))
        print('%-13s %4d ' % (label, sum(len(res[s][1]) for s in ss)) + ' '.join('%12s' % c for c in cells))

def main():
    h200 = study.load()
    h100, src = load_dir(H100)
    k200, k100 = topk.prepare(h200), topk.prepare(h100)
    known = k200 | k100
    sets = sorted({p['set'] for p in h100}, key=lambda s: (HELDOUT_ORDER.index(s) if s in HELDOUT_ORDER else 99, s))
    held = [s for s in sets if s in HELDOUT_ORDER]
    test = {s: [p for p in h100 if p['set'] == s] for s in sets}
    s200 = sorted({p['set'] for p in h200}, key=study.ORDER.index)
    print('H200 training: %d points, %d sets (%s..%s); H100: %d points, %s'
          % (len(h200), len(s200), s200[0], s200[-1], len(h100),
             '; '.join('%s %d (%s)' % (s, len(test[s]), ', '.join(sorted(src[s]))) for s in sets)))
    print('config names: H200 %d, H100 %d, union %d, H100-only %d; H100 pick classes: %s'
          % (len(k200), len(k100), len(known), len(k100 - k200),
             ', '.join('%s %d' % kv for kv in collections.Counter(p['cls'] for p in h100).most_common())))
    print('w5/w10 = within 5/10% of best measured; med/worst = loss vs best; lt = points >3% slower than min(cuBLASLt, '
          'cuBLASLt torch); allmeas = every config the recipe names was measured; cfg/meas = distinct configs timed '
          '(pick included) / of them measured')

    # 1-2: lists learned on all H200 sets, evaluated on each H100 set
    o200 = topk.learn(h200, True, topk.rank_greedy)
    xfer = {s: evaluate(test[s], o200, known) for s in sets}
    pools = [('HELDOUT', held), ('ALL', sets)] if len(held) != len(sets) else [('ALL', sets)]
    table('TRANSFER: lists learned on all H200 sets, evaluated on every H100 point (%d)' % len(h100), xfer, sets)
    if len(held) != len(sets):
        table('TRANSFER, held-out sets only (%s, %d points)' % ('+'.join(held), sum(len(test[s]) for s in held)),
              xfer, held)
    perset('TRANSFER', xfer, sets, pools)

    # 3: reference, lists learned on the other H100 sets
    variants = [('H200 all -> H100 (main)', xfer)]
    if len(sets) >= 2:
        loso = {s: evaluate(test[s], topk.learn([p for p in h100 if p['set'] != s], True, topk.rank_greedy), known)
                for s in sets}
        table('REFERENCE: lists learned on the other H100 sets (leave the evaluated set out), all H100 points', loso, sets)
        if len(held) != len(sets): table('REFERENCE, held-out sets only', loso, held)
        perset('REFERENCE (H100 leave-one-set-out)', loso, sets, pools)
        variants.append(('H100 leave-set-out (reference)', loso))
        variants.append(('H200 all + other H100 sets -> H100', {s: evaluate(test[s], topk.learn(
            h200 + [p for p in h100 if p['set'] != s], True, topk.rank_greedy), known) for s in sets}))
    variants.append(('H200 minus same-named set -> H100', {s: evaluate(test[s], topk.learn(
        [p for p in h200 if p['set'] != s], True, topk.rank_greedy), known) for s in sets}))
    variants.append(('pick + no moves on H100 (k=1 for all)', {s: evaluate(test[s], {}, known) for s in sets}))
    for label, ss in pools:
        print('\n== variants, pooled over %s (%d points): w5 / lt / allmeas ==' % (label, sum(len(test[s]) for s in ss)))
        print('%-40s ' % 'lists' + ' '.join('%17s' % ('k=%d' % k) for k in topk.KS[1:]))
        for name, res in variants:
            cells = []
            for k in topk.KS[1:]:
                r = topk.score([x for s in ss for x in res[s][k]])
                cells.append('%5.1f%% %3d %5.1f%%' % (100 * r['w5'], r['lt'], 100 * r['allm']))
            print('%-40s ' % name + ' '.join('%17s' % c for c in cells))

    # the lists themselves: first 7 moves per class, H200 (all) against H100 (all sets)
    o100 = topk.learn(h100, True, topk.rank_greedy)
    cnt = collections.Counter(p['cls'] for p in h100)
    print('\n== first 7 moves per class: H200 (all sets) | H100 (all sets); * = in the other GPU\'s first 7 ==')
    for cls, _ in cnt.most_common():
        a, b = o200.get(cls, [])[:7], o100.get(cls, [])[:7]
        print('%s (H100 points %d, H200 points %d): shared in first 7: %d'
              % (cls, cnt[cls], sum(p['cls'] == cls for p in h200), len(set(a) & set(b))))
        for i in range(max(len(a), len(b))):
            x = (a[i] + ('*' if a[i] in b else '')) if i < len(a) else ''
            y = (b[i] + ('*' if b[i] in a else '')) if i < len(b) else ''
            print('  %d %-34s | %s' % (i + 1, x, y))

def score_reports(paths):
    """The shipped lists (every H200 set) on other reports, one table per set name."""
    h200 = study.load()
    test, _ = load_dir(os.path.dirname(os.path.abspath(paths[0])), paths)
    known = topk.prepare(h200) | topk.prepare(test)
    overlap = sorted({p['set'] for p in test} & {p['set'] for p in h200})
    if overlap: print('note: the training sets include %s: not blind there' % ', '.join(overlap))
    orders = topk.learn(h200, True, topk.rank_greedy)
    for s in sorted({p['set'] for p in test}):
        pts = [p for p in test if p['set'] == s]
        table('lists of every H200 set on %s (%d points, %s)' % (s, len(pts), ', '.join(paths)),
              {s: evaluate(pts, orders, known)}, [s])

if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == '--score': score_reports(sys.argv[2:])
    else: main()
