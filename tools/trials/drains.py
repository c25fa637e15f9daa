#!/usr/bin/env python3
"""Per shape and config of a `step --trace-tma` timeline, each case (M) a column, medians over the shape's launches, in
us from the launch's dependency (the earliest CTA's return from griddepcontrol.wait): its span (to the next launch's
dependency), its CTAs' first stage landed, median and last multiply, median and last exit, and the median drain (a
CTA's exit minus its last multiply). Then the lead split's parts apart: the reducer's (part 0) and the others' last
multiply and drain, how long before the reducer's last multiply its tile's other parts had exited, and, where the
timeline has `gathered_us`, when the reducer's gather was done after its last multiply. Session 19 (docs/kernels.md):
what grows from M = 1 to 16 is the drain.

    tools/trials/drains.py trace.json[.gz]"""
import gzip
import json
import re
import statistics as st
import sys
from collections import defaultdict
d=json.load((gzip.open if sys.argv[1].endswith('.gz') else open)(sys.argv[1]))
def med(x): return st.median(x) if x else float('nan')
res={}
for c in d['cases']:
    L=c['launches']
    deps=[min(l['waited_us']) for l in L]
    agg=defaultdict(lambda: defaultdict(list))
    for i,l in enumerate(L[:-1]):
        key="%dx%d %s"%(l['n'],l['k'],re.sub(r'tma_m\d+_','',l['config']))
        dep=deps[i]; span=deps[i+1]-dep
        n=l['ctas']
        a=agg[key]
        a['span'].append(span)
        a['entry_before_dep'].append(sum(1 for e in l['entry_us'] if e<dep)/n)
        a['first_after_dep'].append(med([f-dep for f in l['first_stage_us']]))
        a['mult_last'].append(max(l['multiplied_us'])-dep)
        a['mult_med'].append(med(l['multiplied_us'])-dep)
        a['exit_med'].append(med(l['exit_us'])-dep)
        a['exit_last'].append(max(l['exit_us'])-dep)
        a['drain_med'].append(med([x-mm for x,mm in zip(l['exit_us'],l['multiplied_us'])]))
        a['next_dep_after_lastexit'].append(deps[i+1]-max(l['exit_us']))
    res[c['m']]=agg
ms=sorted(res)
keys=sorted(res[ms[0]], key=lambda k:-sum(res[ms[0]][k]['span']))
fields=['span','first_after_dep','mult_med','mult_last','exit_med','exit_last','drain_med','next_dep_after_lastexit','entry_before_dep']
for k in keys:
    print(k, "launches", len(res[ms[0]][k]['span']))
    for f in fields:
        print("   %-24s"%f + "  ".join("M%d %7.2f"%(m, med(res[m][k][f]) if k in res[m] else float('nan')) for m in ms))

# The lead split's parts apart: part 0 (the reducer) and the others, per M: last multiply, drain, and how long before the
# reducer's last multiply its tile's other parts had exited (negative: after).
print("lead split by part (medians, us from the dependency)")
for c in d['cases']:
    L = c['launches']
    deps = [min(l['waited_us']) for l in L]
    agg = defaultdict(lambda: defaultdict(list))
    for i, l in enumerate(L[:-1]):
        if '_d' not in l['config']:
            continue
        rows = int(re.search(r'_r(\d+)_', l['config']).group(1))
        P = l['ctas'] // ((l['n'] + rows - 1) // rows)
        a = agg["%dx%d P%d" % (l['n'], l['k'], P)]
        for g in range(l['ctas']):
            tag = 'reducer' if g % P == 0 else 'other'
            a[tag + '_mult'].append(l['multiplied_us'][g] - deps[i])
            a[tag + '_drain'].append(l['exit_us'][g] - l['multiplied_us'][g])
            if g % P == 0 and P > 1 and l.get('gathered_us') and l['gathered_us'][g] >= 0:
                a['gathered_after_mult'].append(l['gathered_us'][g] - l['multiplied_us'][g])  # word 6 (session 19)
            if g % P == 0 and P > 1:
                a['others_done_before'].append(l['multiplied_us'][g] - max(l['exit_us'][g + j] for j in range(1, P)))
    for k, a in agg.items():
        print("  M%-3d %-16s " % (c['m'], k) + " ".join("%s %.2f" % (f, med(v)) for f, v in sorted(a.items())))
