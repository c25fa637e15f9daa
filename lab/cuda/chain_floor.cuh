// The dependent-chain floor of the benchmarks (bench_common.cu, chain_floor_us): a chain of kernels that each
// stream their bytes through a shared-memory ring and must read a word the previous kernel wrote before they
// may fold them. One producer warp requests every slot of the ring (cp.async.bulk, an mbarrier per slot)
// before griddepcontrol.wait; seven consumer warps wait, read the word, fold the slots and free them. What a
// dependent GEMM of the same bytes can reach in a decode step (docs/kernels.md, "Session 6").
// Rings of `streamed` mode (session 31) split the slots evenly over the CTAs (the TMA family's stream-K ranges) and
// their consumers free each slot once it has landed and x has arrived, without folding it: they measure the stream and
// the handoff, not the consumption of the bytes (a GEMM's tensor cores read every slot too; that cost is not in this
// floor). Below 52 MB the folding rings were slower than the family's own ring alone (tools/probes/ring_ladder.cu,
// 2112 x 7168: folding 7.76 us, the ladder's unfolded even split 7.05, the family's ring alone 6.85; the ladder's
// unfolded rungs and the first streamed rings, 9e13e42's, did not wait for x before freeing a slot). The footprint is
// padded so that no third CTA fits beside two (a third let the next launch's CTAs share SMs unevenly: 7168 x 14336 60.1
// against 46.0 us, session 31).
#pragma once

#include <cstdint>

namespace skinnygemm::cuda {

constexpr int kChainConsumerWarps = 7;  // with one producer warp, 256 threads (the reference probe's CTA)
constexpr int kChainThreads = 32 * (kChainConsumerWarps + 1);
constexpr int kChainMaxSlots = 32;
constexpr int kChainMaxCtas = 4096;  // the words each launch reads and writes, one per CTA

__device__ __forceinline__ uint32_t chain_smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void __launch_bounds__(kChainThreads) chain_floor_kernel(const char* w, long long bytes, int slots_n,
                                                                    int slot_bytes, const uint32_t* word_in,
                                                                    uint32_t* word_out, int streamed) {
  extern __shared__ __align__(128) char chain_shared[];
  uint64_t* full = reinterpret_cast<uint64_t*>(chain_shared);
  uint64_t* empty = full + kChainMaxSlots;
  char* slots = chain_shared + 1024;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  long long c0, c1;
  if (streamed) {  // whole slots, g units / CTAs each (the last slot of the bytes may be short)
    const long long units = (bytes + slot_bytes - 1) / slot_bytes;
    c0 = min(bytes, blockIdx.x * units / gridDim.x * slot_bytes);
    c1 = min(bytes, (blockIdx.x + 1) * units / gridDim.x * slot_bytes);
  } else {
    const long long per = (bytes / gridDim.x + slot_bytes - 1) / slot_bytes * slot_bytes;
    c0 = min(bytes, per * blockIdx.x), c1 = min(bytes, c0 + per);
  }
  const int chunks = static_cast<int>((c1 - c0 + slot_bytes - 1) / slot_bytes);
  if (threadIdx.x == 0) {
    for (int i = 0; i < slots_n; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(chain_smem(full + i)) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(chain_smem(empty + i)), "r"(kChainConsumerWarps) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  auto wait = [](uint64_t* bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred done;\nwait_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra wait_%=;\n}\n" ::"r"(
            chain_smem(bar)),
        "r"(parity)
        : "memory");
  };
  if (warp == kChainConsumerWarps) {
    if (lane == 0)
      for (int j = 0; j < chunks; ++j) {
        const int s = j % slots_n;
        if (j == slots_n) asm volatile("griddepcontrol.wait;" ::: "memory");  // every slot is in flight by now
        if (j >= slots_n) wait(empty + s, ((j / slots_n) + 1) & 1);
        const unsigned nb = static_cast<unsigned>(min(static_cast<long long>(slot_bytes), c1 - c0 - static_cast<long long>(j) * slot_bytes));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(chain_smem(full + s)), "r"(nb) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         chain_smem(slots + static_cast<long long>(s) * slot_bytes)),
                     "l"(w + c0 + static_cast<long long>(j) * slot_bytes), "r"(nb), "r"(chain_smem(full + s))
                     : "memory");
      }
    return;
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const uint32_t x = word_in[blockIdx.x];
  // Streamed rings free no slot before x has arrived, as a GEMM multiplies no slot before its x: the slots' barrier
  // address carries x & 0 (streamed - 1 is 0 there, unknown to the compiler), so every arrive waits for the load.
  const uint32_t x_zero = streamed ? x & static_cast<uint32_t>(streamed - 1) : 0u;
  uint32_t acc = 0;
  for (int j = 0; j < chunks; ++j) {
    const int s = j % slots_n;
    wait(full + s, (j / slots_n) & 1);
    const int nb = static_cast<int>(min(static_cast<long long>(slot_bytes), c1 - c0 - static_cast<long long>(j) * slot_bytes));
    for (int i = threadIdx.x * 16; !streamed && i < nb; i += kChainConsumerWarps * 32 * 16) {
      const uint4 v = *reinterpret_cast<const uint4*>(slots + static_cast<long long>(s) * slot_bytes + i);
      acc ^= (v.x + x) ^ v.y ^ v.z ^ v.w;
    }
    __syncwarp();
    if (lane == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(chain_smem(empty + s) + x_zero) : "memory");
  }
  acc = __reduce_xor_sync(0xffffffffu, acc) ^ (streamed ? x : 0u);
  if (lane == 0) atomicXor(word_out + blockIdx.x, acc + 1);
}

}  // namespace skinnygemm::cuda
