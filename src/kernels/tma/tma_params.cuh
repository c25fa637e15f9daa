// The TMA family's kernel arguments (TmaParams, filled by tma_launch.cu), the lab's timeline stamp and the output
// stores, shared by the main kernel (tma_gemm.cuh) and the row stream (row_stream.cuh), which needs nothing else of it.
// Moved out of tma_gemm.cuh in session 43: both dtypes' cubins are byte-identical before and after (nvcc 13.0, sm_90a).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/common/output_segments.cuh"
#include "kernels/tma/ptx.cuh"
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::tma {

struct TmaParams {
  void* y;
  int m, n, k;
  long long ldy;
  int k_stages;       // ceil(K / (64 x boxes))
  int tiles;          // ceil(N / rows)
  long long units;    // tiles * k_stages
  int stages;         // ring slots
  int cluster;        // 1: stream-K over all CTAs (or whole tiles, or lead split); > 1: split-K by a cluster
  int parts;          // lead split: CTAs per row tile; 0: not this mode
  int lead_stages;    // lead split: the stages of part 0 (the others share the rest equally)
  int handoff;        // lead split: 0 = partials then a released counter; 1 = partials polled for a sentinel
  int box3d;          // 1: both maps are 3D views [K / 64][rows][64], a copy per stage; 0: 2D, a copy per box
  int y_rows16;       // 1: y's rows (or every output segment's) start 16-byte aligned: the staged epilogue's y stores
                      // are 16-byte stores; 0: they would fall back to one store per element after the staging
  float* lead_partials;  // handoff 1: [tile (parts - 1) + part - 1][token][row], every word the sentinel between launches
  float* partials;    // [ctas][2][rows * tile_m]: a CTA's first and last row tile when it has only part of them
  unsigned* counters; // [tiles]: CTAs done with their part of the tile; reset to 0 by the reducing CTA
  cuda::OutputSegments seg;  // fused projections: the segments' destinations (count 0: all rows to y)
  // The lab's timeline (tma::set_trace; null: off): per CTA kTraceWords words {entry, after griddepcontrol.wait,
  // exit, SM id, first stage landed, last stage multiplied, the other parts' sums gathered (lead-split reducers of
  // token tiles <= 16; 0 elsewhere)} in %globaltimer nanoseconds, so that a whole step shows
  // when each launch's CTAs start and end next to its neighbours (docs/kernels.md "Session 11": configs that win alone
  // lose 6.6-11.5 us per launch there) and where a CTA's time after the wait goes ("Session 13").
  unsigned long long* trace;
  // The lab's ablation (tma::set_ablate, `SKINNYGEMM_STEP_ABLATE` of the step's timing graphs; 0 in the library; wrong
  // results): bit 0 = no x copies at all; no split reduction (every part stores y; of a cluster only rank 0): bit 1 on
  // lead splits, bit 2 on clusters, bit 3 on stream-K. What each costs the whole step (docs/kernels.md "Session 26").
  // Bit 4 (value 16): w read as if packed tile-contiguous (each stage's rows x kBoxes x 64 K one run of 16 KB in unit order, one 2D
  // copy of a [N K / 64][64] view; the launcher builds that map): what the row-strided copy costs against the chain
  // floor's contiguous copies (docs/kernels.md "Session 30"). Bit 5 (value 32; the launcher's only, correct results): the
  // weight maps promote L2 fills to 256 bytes as before session 31 (tma_launch.cu).
  // (No MMAs as a runtime branch around them made ptxas serialize the wgmma of every instance: not built.)
  int ablate;
};

// The lab's timeline (TmaParams::trace): word w of this CTA's kTraceWords, now. p.trace is read at each use, so that no
// pointer stays live across the main loop with the trace off (one kept from the kernel's entry to its exits cost
// 4-6 registers in the 32-token instances and spilled the 128-row ones, ptxas -v).
__device__ __forceinline__ void trace_now(const TmaParams& p, int w) {
  if (p.trace) p.trace[static_cast<long long>(kTraceWords) * blockIdx.x + w] = global_ns();
}

template <typename T>
__device__ __forceinline__ void store_output(const TmaParams& p, int token, int row, float v) {
  cuda::store_output<T>(p.y, p.ldy, p.seg, token, row, v);
}

// Four consecutive rows of one token from float4 group gi of a [token][kRows] partial tile starting at row0.
template <typename T, int kRows>
__device__ __forceinline__ void store_group(const TmaParams& p, int row0, int gi, float4 v) {
  const int token = gi / (kRows / 4), row = row0 + (gi % (kRows / 4)) * 4;
  const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (row + i < p.n) store_output<T>(p, token, row + i, e[i]);
}

}  // namespace skinnygemm::tma
