// cuBLASLt: the fallback for what the skinny kernels do not cover, and the baseline every benchmark row
// is measured against. One handle per device and one workspace per stream, created on first use (allowed
// inside a capture, but better made before one); per problem, the descriptors, the heuristic results per operand
// alignment and the algorithms named by identity (cuda::cublaslt_identity, runtime/backends.h) are cached.
#pragma once

#include <cuda_runtime.h>

#include "skinnygemm/problem.h"

namespace skinnygemm::cuda {

// algo = -1: cuBLASLt's default (its first heuristic answer); algo = i: its i-th answer; algo = kCublasltUnsplit: the
// answer of cublaslt_unsplit.h's rule; all among the algorithms that reduce split-K partials in FP32.
// algo = kCublasltTorch: the default answer with every reduction scheme allowed (what torch's F.linear gets:
// reduced-precision reductions are allowed there).
void cublaslt_gemm(const Problem& problem, const void* x, const void* w, void* y, int algo, cudaStream_t stream);
// How many heuristic algorithms cuBLASLt offers for the problem on these operands (at most kCublasltAlgos).
int cublaslt_algo_count(const Problem& problem, const void* x, const void* w, const void* y);

}  // namespace skinnygemm::cuda
