// The state of a FusedProjection, shared by its construction (projection.cpp) and its runs
// (projection_run.cpp). Layout: segment i owns merged rows [offset[i], offset[i] + n_i) and its padding up
// to offset[i + 1]; the scratch output (when the destinations are not already adjacent) is max_m x total_n
// with the same columns.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/projection_backend.h"
#include "skinnygemm/projection.h"

namespace skinnygemm {

namespace projection_detail {
// A row-major block of memory in bytes (cols and ld in bytes).
struct Block {
  intptr_t base;
  int64_t rows, cols, ld;
};
Block block(const void* p, int64_t rows, int64_t cols, int64_t ld, std::size_t elem);
bool overlap(Block a, Block b);  // whether the two blocks share a byte (exact, not their spans)

// Destinations: each segment to its own y. Contiguous: every segment into one caller output (views).
enum class Mode { Destinations, Contiguous };
}  // namespace projection_detail

struct FusedProjection::Impl {
  using Mode = projection_detail::Mode;

  std::vector<Segment> segs;    // strides resolved (ldw, ldy never 0)
  std::vector<int64_t> offset;  // merged row of each segment; offset.back() = total_n
  Backend backend = Backend::Cpu;
  int64_t k = 0, max_m = 0;
  DType dtype = DType::BF16;
  std::size_t e = 2;  // element bytes
  bool zero_copy = false, has_dest = false;
  const char* w = nullptr;  // merged weights: the first segment's (zero-copy) or the packed copy
  int64_t ldw = 0;
  std::vector<uint16_t> host_packed, host_scratch;  // CPU backend
  void *dev_packed = nullptr, *dev_scratch = nullptr;  // CUDA backend
  char* scratch = nullptr;
  int64_t packed_bytes = 0, scratch_bytes = 0;
  void *fork_event = nullptr, *join_event = nullptr;  // CUDA: run_split's fork and join
  std::mutex log_mutex;
  std::set<std::string> logged;

  ~Impl() {
    cuda::device_free(dev_packed);
    cuda::device_free(dev_scratch);
    cuda::event_destroy(fork_event);
    cuda::event_destroy(join_event);
  }
  int64_t total() const { return offset.back(); }
  std::string label(std::size_t i) const { return "segment '" + segs[i].name + "' (#" + std::to_string(i) + ")"; }
  char* dest(std::size_t i) const { return static_cast<char*>(segs[i].y); }

  // Destinations of [b, end) are adjacent columns of one output with one stride and no padding, so a gemm
  // over the range can write them in place.
  bool outputs_adjacent(std::size_t b, std::size_t end) const;
  // Every rung for segments [b, end) at M = m, best first, with why each can or cannot run.
  std::vector<RungStatus> ladder(std::size_t b, std::size_t end, int64_t m, Mode mode) const;
  // The forced rung (an Error naming why if it cannot run) or the best available one; *why says why.
  Rung choose(std::size_t b, std::size_t end, int64_t m, Mode mode, std::optional<Rung> forced,
              std::string* why) const;
  void check_run(const void* x, int64_t ldx, int64_t m, bool dest_mode) const;
  // Segments [b, end) through one rung on stream (y0/ldy0: the contiguous output); appends to out.
  Rung run_range(std::size_t b, std::size_t end, const void* x, int64_t ldx, int64_t m, const RunOptions& o,
                 Mode mode, char* y0, int64_t ldy0, void* stream, std::optional<Rung> forced, RunResult* out);
  void log_once(const char* what, int64_t m, const RunResult& r, const std::string& name);
};

}  // namespace skinnygemm
