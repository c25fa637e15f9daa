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
#include "skinnygemm/plan.h"
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

// A run as it is assembled (strings and vectors grow here), then handed out as a RunResult.
struct RunLog {
  Rung rung = Rung::Separate;
  std::string reason;
  std::vector<Choice> choices;
  RunResult result() const { return RunResult{rung, reason, ChoiceList(choices)}; }
};

// The launches of one run() at one M, recorded the first time and replayed after: gemm plans (x is the run's,
// w and y fixed) and the strided copies out of the scratch output.
struct Recording {
  struct Launch {
    std::shared_ptr<const Plan> plan;  // null: a copy
    const char* w = nullptr;
    char* y = nullptr;
    char* copy_dst = nullptr;
    const char* copy_src = nullptr;
    int64_t dst_pitch = 0, src_pitch = 0, row_bytes = 0, rows = 0;
  };
  std::vector<Launch> launches;
  RunResult result;
};
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
  // The rung and why for M = 0..max_m, decided at construction: [mode][m].
  std::vector<std::pair<Rung, std::string>> decided[2];
  // run()'s recordings per M (0..max_m); null until the first default run at that M.
  std::vector<std::unique_ptr<projection_detail::Recording>> recorded;

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
  // The forced rung (an Error naming why if it cannot run) or the best available one; *why says why. Over every
  // segment, unforced, at M <= max_m: what the constructor decided.
  Rung choose(std::size_t b, std::size_t end, int64_t m, Mode mode, std::optional<Rung> forced,
              std::string* why) const;
  Rung choose_now(std::size_t b, std::size_t end, int64_t m, Mode mode, std::optional<Rung> forced,
                  std::string* why) const;
  void decide_rungs();
  void check_run(const void* x, int64_t ldx, int64_t m, bool dest_mode) const;
  // Segments [b, end) through one rung on stream (y0/ldy0: the contiguous output); appends to out, and its launches
  // to recording when given.
  Rung run_range(std::size_t b, std::size_t end, const void* x, int64_t ldx, int64_t m, const RunOptions& o,
                 Mode mode, char* y0, int64_t ldy0, void* stream, std::optional<Rung> forced,
                 projection_detail::RunLog* out, projection_detail::Recording* recording = nullptr);
  void log_once(const char* what, int64_t m, const projection_detail::RunLog& r, const std::string& name);
  // run()'s fast path: whether a recording at m serves these arguments, and its replay.
  bool replayable(const void* x, int64_t ldx, int64_t m, const RunOptions& o) const;
  RunResult replay(const projection_detail::Recording& recording, const void* x, void* stream) const;
  void copy_rows(const projection_detail::Recording::Launch& copy, void* stream) const;
};

}  // namespace skinnygemm
