// The CPU backend: y = x·w^T with FP32 accumulation, and the two references the tests measure against.
//
// Summation order (what makes the result deterministic): every output element keeps 16 FP32 lane sums;
// lane l accumulates the products with k ≡ l (mod 16) in increasing k, and the lanes are then added in a
// fixed tree. That order depends only on k — not on the thread count, the row blocking (cpu_r*) or the
// vector width of the path this CPU takes (AVX-512, AVX2 or the 16-byte base path) — so every cpu_*
// config gives the same bits on every machine.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backends.h"
#include "runtime/half.h"
#include "runtime/memory.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cpu {

namespace {

constexpr int kLanes = 16;
// K elements of a weight chunk converted to float at a time: 8 rows x 512 x 4 B = 16 KB stays in L1.
constexpr int64_t kChunk = 512;
constexpr int kMaxRows = 8;
// Below this many multiply-adds a thread costs more to start than it saves.
constexpr int64_t kMacsPerThread = int64_t{1} << 19;

struct Work {
  const Problem* p;
  const uint16_t* w;
  uint16_t* y;
  const float* xf;  // x converted once: m rows of kpad floats, zero-padded past k
  int64_t kpad;     // k rounded up to kLanes
  int rows;         // weight rows per inner block (config.rows)
};

// Hardware vectors (GCC/Clang vector extensions). The 16 lanes of an accumulator are 16 / W vectors of
// W floats; lane-wise adds and multiplies are the same operations at every width, so the paths agree bit
// for bit. A width the target lacks is lowered through memory (slow), hence one instantiation per ISA.
typedef float V4 __attribute__((vector_size(16)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

// Accumulators (of 16 lanes) held in registers at once: 8 with AVX-512, 4 with AVX2, 2 with 16-byte vectors.
template <typename V>
constexpr int kBudget = static_cast<int>(sizeof(V) / sizeof(float)) / 2;

// For T tokens and R rows: acc[t][r][l] += sum_i x[t][i*16 + l] * w[r][i*16 + l] over len (a multiple of
// 16) elements. The w loads are shared by the T tokens and the x loads by the R rows.
template <typename V, int T, int R>
inline __attribute__((always_inline)) void dot_block(const float* x, int64_t ldx, const float* w, int64_t len,
                                                     float* acc, int64_t ld_acc) {
  constexpr int W = sizeof(V) / sizeof(float), P = kLanes / W;
  // The small loops must unroll completely, or the accumulators and w vectors go through the stack;
  // GCC's own heuristics stop short at some (T, R, P), hence the pragmas.
  V a[T][R][P];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) std::memcpy(a[t][r], acc + t * ld_acc + r * kLanes, sizeof a[t][r]);
  for (int64_t i = 0; i < len; i += kLanes) {
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
      V wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) std::memcpy(&wv[r], w + r * kChunk + i + q * W, sizeof(V));
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        V xv;
        std::memcpy(&xv, x + t * ldx + i + q * W, sizeof(V));
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) a[t][r][q] += xv * wv[r];
      }
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) std::memcpy(acc + t * ld_acc + r * kLanes, a[t][r], sizeof a[t][r]);
}

// R rows against every token, T tokens at a time so that T x R accumulators fill the register budget.
template <typename V, int R>
inline __attribute__((always_inline)) void dot_rows(const Work& wk, const float* w, int64_t k0, int64_t len,
                                                    int rows, float* acc) {
  constexpr int T = kBudget<V> / R;
  const int64_t m = wk.p->m, ld_acc = rows * kLanes;
  const float* x = wk.xf + k0;
  int64_t t = 0;
  for (; t + T <= m; t += T) dot_block<V, T, R>(x + t * wk.kpad, wk.kpad, w, len, acc + t * ld_acc, ld_acc);
  for (; t < m; ++t) dot_block<V, 1, R>(x + t * wk.kpad, wk.kpad, w, len, acc + t * ld_acc, ld_acc);
}

// `count` rows in register blocks of S rows, then S/2, ... for what is left (the N tail, or a config
// block larger than the register budget).
template <typename V, int S>
inline __attribute__((always_inline)) void dot_rows_upto(const Work& wk, const float* w, int64_t k0, int64_t len,
                                                         int rows, float* acc, int count) {
  int r = 0;
  for (; r + S <= count; r += S) dot_rows<V, S>(wk, w + r * kChunk, k0, len, rows, acc + r * kLanes);
  if constexpr (S > 1) dot_rows_upto<V, S / 2>(wk, w + r * kChunk, k0, len, rows, acc + r * kLanes, count - r);
}

// One chunk [k0, k0+len) of `rows` weight rows starting at row0, for every token: convert the chunk to
// float (zero-padded to a multiple of 16) and add its products to acc[token][row][lane].
template <typename V>
inline __attribute__((always_inline)) void chunk_impl(const Work& wk, int64_t row0, int rows, int64_t k0,
                                                      int64_t len, float* acc) {
  alignas(64) float wbuf[kMaxRows * kChunk];
  const Problem& p = *wk.p;
  const int64_t len16 = (len + kLanes - 1) / kLanes * kLanes;
  for (int r = 0; r < rows; ++r) {
    const uint16_t* src = wk.w + (row0 + r) * p.w_stride() + k0;
    float* dst = wbuf + r * kChunk;
    // Two plain loops (not half_to_float) so that each one vectorizes without a per-element branch.
    if (p.dtype == DType::BF16) {
      for (int64_t i = 0; i < len; ++i) dst[i] = bf16_to_float(src[i]);
    } else {
      for (int64_t i = 0; i < len; ++i) dst[i] = fp16_to_float(src[i]);
    }
    for (int64_t i = len; i < len16; ++i) dst[i] = 0.0f;
  }
  dot_rows_upto<V, std::min(kBudget<V>, kMaxRows)>(wk, wbuf, k0, len16, rows, acc, rows);
}

using ChunkFn = void (*)(const Work&, int64_t, int, int64_t, int64_t, float*);

void chunk_base(const Work& wk, int64_t row0, int rows, int64_t k0, int64_t len, float* acc) {
  chunk_impl<V4>(wk, row0, rows, k0, len, acc);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SKINNYGEMM_X86_PATHS 1
// Neither target enables FMA. It would not change the bits anyway (a product of two bf16 or fp16 values
// has at most 22 significant bits, exact in FP32) except for products that under- or overflow FP32,
// and measured no faster here: the loop is bound by loads, not arithmetic.
__attribute__((target("avx2"))) void chunk_avx2(const Work& wk, int64_t row0, int rows, int64_t k0,
                                                int64_t len, float* acc) {
  chunk_impl<V8>(wk, row0, rows, k0, len, acc);
}
__attribute__((target("avx512f"))) void chunk_avx512(const Work& wk, int64_t row0, int rows, int64_t k0,
                                                     int64_t len, float* acc) {
  chunk_impl<V16>(wk, row0, rows, k0, len, acc);
}
#endif

// The widest path this CPU runs. SKINNYGEMM_CPU_ISA=avx512|avx2|base asks for a given one (the tests use
// it to check that every path gives the same bits); one the CPU lacks is an error, not a silent fallback.
ChunkFn pick_chunk() {
  const char* env = std::getenv("SKINNYGEMM_CPU_ISA");
  const std::string want = env ? env : "";
  SKINNYGEMM_CHECK(want.empty() || want == "avx512" || want == "avx2" || want == "base",
                   "SKINNYGEMM_CPU_ISA='" << want << "' is not one of avx512, avx2, base");
  if (want == "base") return chunk_base;
#ifdef SKINNYGEMM_X86_PATHS
  const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
  SKINNYGEMM_CHECK((want != "avx512" || avx512) && (want != "avx2" || avx2),
                   "SKINNYGEMM_CPU_ISA=" << want << " but this CPU does not support " << want);
  if (avx512 && want != "avx2") return chunk_avx512;
  if (avx2) return chunk_avx2;
#else
  SKINNYGEMM_CHECK(want.empty(), "SKINNYGEMM_CPU_ISA=" << want << " needs an x86-64 build");
#endif
  return chunk_base;
}

// Adds the 16 lanes in a fixed tree (8 + 8, 4 + 4, 2 + 2, 1 + 1).
float reduce_lanes(const float* lanes) {
  float s[kLanes];
  std::memcpy(s, lanes, sizeof s);
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int l = 0; l < width; ++l) s[l] += s[l + width];
  return s[0];
}

// Rows [begin, end) of the output, in blocks of wk.rows; acc is scratch of m * kMaxRows * kLanes floats.
void run_rows(const Work& wk, ChunkFn chunk, int64_t begin, int64_t end, float* acc) {
  const Problem& p = *wk.p;
  for (int64_t row0 = begin; row0 < end; row0 += wk.rows) {
    const int rows = static_cast<int>(std::min<int64_t>(wk.rows, end - row0));
    std::fill(acc, acc + p.m * rows * kLanes, 0.0f);
    for (int64_t k0 = 0; k0 < p.k; k0 += kChunk) chunk(wk, row0, rows, k0, std::min(kChunk, p.k - k0), acc);
    for (int64_t t = 0; t < p.m; ++t)
      for (int r = 0; r < rows; ++r)
        wk.y[t * p.y_stride() + row0 + r] = float_to_half(p.dtype, reduce_lanes(acc + (t * rows + r) * kLanes));
  }
}

void check_backend_problem(const Problem& p) {
  validate(p);
  SKINNYGEMM_CHECK(dtype_size(p.dtype) == sizeof(uint16_t),
                   "CPU backend handles 16-bit dtypes only, got " << dtype_name(p.dtype));
}

}  // namespace

void gemm(const Problem& p, const void* x, const void* w, void* y, const Config& config) {
  SKINNYGEMM_CHECK(config.family == Family::Cpu,
                   "CPU backend got config '" << config.name() << "' of family " << family_name(config.family)
                                              << "; expected a cpu_r<rows> config");
  SKINNYGEMM_CHECK(std::find(std::begin(kCpuRows), std::end(kCpuRows), config.rows) != std::end(kCpuRows) &&
                       config.rows <= kMaxRows,
                   "config '" << config.name() << "': rows=" << config.rows
                              << " is not a listed CPU block (kCpuRows: 1, 2, 4, 8)");
  check_backend_problem(p);
  if (p.empty()) return;
  auto* yh = static_cast<uint16_t*>(y);
  if (p.k == 0) {  // no products: every output is +0 (x and w are not read and may be null)
    for (int64_t t = 0; t < p.m; ++t) std::fill(yh + t * p.y_stride(), yh + t * p.y_stride() + p.n, uint16_t{0});
    return;
  }
  const ChunkFn chunk = pick_chunk();

  // x is small (m x k) and read once per row block, so convert it to float once rather than per block.
  const int64_t kpad = (p.k + kLanes - 1) / kLanes * kLanes;
  // Read once: hardware_concurrency() parses a /sys file on every call (tens of microseconds).
  static const int64_t hw = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t blocks = (p.n + config.rows - 1) / config.rows;
  // In double: M*N*K of a valid problem can exceed int64 (each operand fits, their product need not).
  const auto macs_threads = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) /
                            static_cast<double>(kMacsPerThread);
  const int64_t threads = std::clamp<int64_t>(static_cast<int64_t>(std::min(macs_threads, 1e6)), 1,
                                              std::min(hw, blocks));
  const int64_t acc_floats = mul_bytes(p.m, kMaxRows * kLanes);
  // Scratch (x as float, one accumulator block per thread) checked against the host first: a huge M fails
  // with the numbers instead of std::bad_alloc.
  check_host_memory(add_bytes(mul_bytes(mul_bytes(p.m, kpad), 4), mul_bytes(mul_bytes(threads, acc_floats), 4)),
                    "the CPU backend's scratch for " + p.str());
  std::vector<float> xf(static_cast<size_t>(p.m * kpad), 0.0f);
  const auto* xh = static_cast<const uint16_t*>(x);
  for (int64_t t = 0; t < p.m; ++t)
    for (int64_t i = 0; i < p.k; ++i) xf[t * kpad + i] = half_to_float(p.dtype, xh[t * p.x_stride() + i]);

  const Work wk{&p, static_cast<const uint16_t*>(w), yh, xf.data(), kpad, config.rows};
  // Scratch for every thread is allocated here, so the workers themselves cannot throw.
  std::vector<float> acc(static_cast<size_t>(threads * acc_floats));

  // Thread i owns a contiguous range of whole row blocks; each output is computed by exactly one thread.
  auto range = [&](int64_t i, int64_t* begin, int64_t* end) {
    *begin = std::min(p.n, blocks * i / threads * config.rows);
    *end = std::min(p.n, blocks * (i + 1) / threads * config.rows);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  int64_t spawned = 0;
  try {
    for (int64_t i = 1; i < threads; ++i) {
      int64_t b, e;
      range(i, &b, &e);
      float* scratch = acc.data() + i * acc_floats;
      pool.emplace_back([&wk, chunk, b, e, scratch] { run_rows(wk, chunk, b, e, scratch); });
      ++spawned;
    }
  } catch (...) {
    // Could not start a thread: finish its share (and the rest) on this one below.
  }
  for (int64_t i = spawned + 1; i < threads; ++i) {
    int64_t b, e;
    range(i, &b, &e);
    run_rows(wk, chunk, b, e, acc.data());
  }
  int64_t b0, e0;
  range(0, &b0, &e0);
  run_rows(wk, chunk, b0, e0, acc.data());
  for (std::thread& t : pool) t.join();
}

void reference_f64(const Problem& p, const void* x, const void* w, double* out) {
  check_backend_problem(p);
  const auto* xh = static_cast<const uint16_t*>(x);
  const auto* wh = static_cast<const uint16_t*>(w);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < p.k; ++k)
        s += static_cast<double>(half_to_float(p.dtype, xh[i * p.x_stride() + k])) *
             static_cast<double>(half_to_float(p.dtype, wh[j * p.w_stride() + k]));
      out[i * p.n + j] = s;
    }
}

void reference_naive(const Problem& p, const void* x, const void* w, void* y) {
  check_backend_problem(p);
  const auto* xh = static_cast<const uint16_t*>(x);
  const auto* wh = static_cast<const uint16_t*>(w);
  auto* yh = static_cast<uint16_t*>(y);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < p.k; ++k)
        s += half_to_float(p.dtype, xh[i * p.x_stride() + k]) * half_to_float(p.dtype, wh[j * p.w_stride() + k]);
      yh[i * p.y_stride() + j] = float_to_half(p.dtype, s);
    }
}

}  // namespace skinnygemm::cpu
