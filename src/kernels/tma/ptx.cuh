// The TMA family's device-side building blocks (tma_gemm.cuh's kernel and the probes built on it): copies of tensor
// map boxes, L2 policies, the counters and polled words of the split reductions, cluster stores and barriers, PDL, the
// ldmatrix / mma.sync fragments, the copy engine's swizzle and stream-K's unit ranges. One inline PTX instruction or a
// few each.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/common/mbarrier.cuh"
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::tma {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
using cuda::bulk_copy;  // kernels/common/mbarrier.cuh
using cuda::mbar_arrive;
using cuda::mbar_expect_tx;
using cuda::mbar_init;
using cuda::mbar_wait;
using cuda::mbar_wait_cluster;
using cuda::shared_addr;

// One 2D tile of a tensor map into shared memory; completes on bar with the box's bytes (zeros past the edges).
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          shared_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(shared_addr(bar))
      : "memory");
}
// One 3D box of a [K / 64][rows][64] view (tma_launch.cu's box3d maps): the stage's kBoxes 64-wide K boxes of every
// row in one copy, laid out in shared memory as kBoxes consecutive [rows][64] boxes, as kBoxes 2D copies lay them.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int row, int box) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          shared_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(row), "r"(box), "r"(shared_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_3d_hint(void* dst, const CUtensorMap* map, uint64_t* bar, int row, int box,
                                                 uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, "
      "%4}], [%5], %6;" ::"r"(shared_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(row), "r"(box), "r"(shared_addr(bar)), "l"(policy)
      : "memory");
}
// The same with an L2 cache policy (createpolicy) for the lines it reads.
__device__ __forceinline__ void tma_load_hint(void* dst, const CUtensorMap* map, uint64_t* bar, int inner, int outer,
                                              uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], "
      "[%4], %5;" ::"r"(shared_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(shared_addr(bar)), "l"(policy)
      : "memory");
}
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ void arrive_release(unsigned* counter) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* counter) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
  return v;
}
// The lead split's polled handoff: a word no arithmetic produces (GPUs return the canonical NaN 0x7fffffff).
constexpr unsigned kSentinel = 0xffffffffu;
__device__ __forceinline__ float4 sentinel4() {
  const float s = __uint_as_float(kSentinel);
  return make_float4(s, s, s, s);
}
__device__ __forceinline__ bool is_sentinel(float4 v) {
  return __float_as_uint(v.x) == kSentinel || __float_as_uint(v.y) == kSentinel || __float_as_uint(v.z) == kSentinel ||
         __float_as_uint(v.w) == kSentinel;
}
__device__ __forceinline__ float not_sentinel(float v) {
  return __float_as_uint(v) == kSentinel ? __uint_as_float(0x7fffffffu) : v;
}
__device__ __forceinline__ void st_relaxed(float* p, float v) {
  asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_v4(float4* p, float4 v) {
  asm volatile("st.relaxed.gpu.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
__device__ __forceinline__ float4 ld_relaxed_v4(const float4* p) {
  float4 v;
  asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned arrive_acq_rel(unsigned* counter) {
  unsigned old;
  asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}
// A cluster barrier whose arrival and wait are far apart (every thread of every CTA of the cluster arrives once).
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
// A 4-byte store into the shared memory of CTA `rank` of the cluster (at the offset of local_addr in our own) that
// completes 4 bytes of the transaction count of that CTA's mbarrier at the offset of local_bar: the receiver learns
// that its data are in from its own barrier, with no fence or cluster barrier on the sender's side.
// The address in the shared memory of CTA `rank` of the cluster at the offset of local_addr in our own.
__device__ __forceinline__ uint32_t cluster_peer_addr(uint32_t local_addr, int rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local_addr), "r"(rank));
  return remote;
}
__device__ __forceinline__ void st_async_cluster(uint32_t local_addr, uint32_t local_bar, int rank, float v) {
  const uint32_t remote = cluster_peer_addr(local_addr, rank), remote_bar = cluster_peer_addr(local_bar, rank);
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
               "r"(__float_as_uint(v)), "r"(remote_bar)
               : "memory");
}
// The same for 16 bytes (four consecutive words), completing 16 bytes of the transaction count.
__device__ __forceinline__ void st_async_cluster_v4(uint32_t local_addr, uint32_t local_bar, int rank,
                                                    const float (&v)[4]) {
  const uint32_t remote = cluster_peer_addr(local_addr, rank), remote_bar = cluster_peer_addr(local_bar, rank);
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(remote),
               "r"(__float_as_uint(v[0])), "r"(__float_as_uint(v[1])), "r"(__float_as_uint(v[2])),
               "r"(__float_as_uint(v[3])), "r"(remote_bar)
               : "memory");
}
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(32 * kConsumerWarps) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
}

template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float4 not_sentinel4(float4 v) {
  return make_float4(not_sentinel(v.x), not_sentinel(v.y), not_sentinel(v.z), not_sentinel(v.w));
}

// 128-byte swizzle of the copy engine: the 16-byte chunk c of a 128-byte row r sits at chunk c ^ (r % 8)
// (the slots are 1024-byte aligned, so the pattern starts at every slot).
__device__ __forceinline__ uint32_t swizzled(uint32_t base, int row, int chunk) {
  return base + row * 128 + ((chunk ^ (row & 7)) << 4);
}

// The CTA whose range of units holds unit u (ranges: [g * units / ctas, (g + 1) * units / ctas)).
__device__ __forceinline__ int owner_cta(long long u, long long units, int ctas) {
  return static_cast<int>(((u + 1) * ctas - 1) / units);
}
__device__ __forceinline__ long long first_unit(int g, long long units, int ctas) { return g * units / ctas; }

}  // namespace skinnygemm::tma
