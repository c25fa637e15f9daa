#!/usr/bin/env python3
"""Session 42 (docs/tuning.md "Session 42"): would cublaslt_unsplit gain by also leaving cuBLASLt's first answer where its
tile holds fewer tokens than M (FRAC = 1) or than M / 2 (FRAC = 2), i.e. where it reads the weights more than once? Over
every recorded held-out point at M > 8 whose report timed cuBLASLt's answers with their identities: the shipped rule's
answer (src/backends/cuda/cublaslt_unsplit.h) against the extended one, points changed, faster / slower, µs summed and
within 5% of the point's best. Tiles' shapes from the toolkit's cublasLt.h. Run from the repo root:
    python3 tools/trials/unsplit_thin_tiles.py
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from heuristic_rescore import IDENTITY as IDENT, tile_shapes  # noqa: E402  the rescorer's reading of identities and tiles

tiles = tile_shapes("/usr/local/cuda/include/cublasLt.h")
def answers(row):
    by={c['config']:c for c in row.get('candidates',[])}
    out=[]
    i=0
    while f'cublaslt_a{i}' in by:
        c=by[f'cublaslt_a{i}']; m=IDENT.match(c.get('identity') or '')
        if not m: return None
        r,t=tiles.get(int(m[1]),(0,0)); out.append((int(m[2]),r,t,c['us'])); i+=1
    return out
def old(a,M):
    if a[0][0]==1: return 0
    for i,x in enumerate(a[1:],1):
        if x[0]==1 and x[1]>=48 and 2*x[2]>=M: return i
    return 0
def new(a,M,frac):
    bad0 = a[0][0]!=1 or a[0][2]*frac < M
    if not bad0: return 0
    for i,x in enumerate(a[1:],1):
        if x[0]==1 and x[1]>=48 and x[2]*frac>=M: return i
    return old(a,M)
for frac in (1,2):
  tot=[0,0]; n=0; chg=0; faster=0; slower=0; w5=[0,0]; worse=[]
  for f in sorted(glob.glob('docs/benchmarks/h200/heuristic-*.json')):
    try: d=json.load(open(f))
    except Exception: continue
    for r in d['rows']:
        if r.get('kind')!='heuristic' or r['m']<=8: continue
        a=answers(r)
        if not a or len(a)<2: continue
        i0=old(a,r['m']); i1=new(a,r['m'],frac)
        n+=1; t0=a[i0][3]; t1=a[i1][3]; tot[0]+=t0; tot[1]+=t1
        best=r['best_us']; w5[0]+=t0<=1.05*best; w5[1]+=t1<=1.05*best
        if i0!=i1:
            chg+=1; faster+=t1<t0; slower+=t1>t0
            if t1>1.02*t0: worse.append((f.split('/')[-1][10:22],r['n'],r['k'],r['m'],round(t0,2),round(t1,2)))
  print('frac',frac,'points',n,'changed',chg,'faster',faster,'slower',slower,'sum',round(tot[0],1),round(tot[1],1),'w5',w5,'worse>2%',len(worse)); print(worse[:15])
