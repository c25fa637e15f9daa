// The autotuner (issue 4): for each (dtype, N, K, M) measure every candidate config that supports() the
// problem with the bench protocol (lab/bench.h), reject any whose output check fails, and store the winner
// in a table. On a GPU a kernel is stored only where it beats the best cuBLASLt algorithm by a margin that
// holds across samples; otherwise that cuBLASLt algorithm is stored, so a table entry is never a loss.
// With TuneOptions::refine the table refines the heuristic (issue 18): a point gets an entry only where the winner
// beats the heuristic's pick by the same kind of margin, elsewhere a heuristic marker. docs/tuning.md describes the
// rules and the command.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lab/models.h"
#include "skinnygemm/skinnygemm.h"
#include "lab/bench.h"

namespace skinnygemm::tune {

struct TuneResult;

// One step of tune_into_table, reported through TuneOptions::progress.
struct TuneEvent {
  enum class Kind {
    Measuring,  // about to measure `candidates` configs
    Stored,     // measured; result->entry was merged into the table file
    Measured,   // measured, nothing written: TuneOptions::store is off (result as for Stored)
    Kept,       // measured; the heuristic's pick was kept (TuneOptions::refine): a heuristic marker was merged into
                // the table file (TableEntry::heuristic_kept), or with store off nothing is written
    Skipped,    // the table already has this point (resume) and force is off, or this run tuned it already
    Failed,     // no candidate passed (message says why); the run goes on
  };
  Kind kind = Kind::Measuring;
  std::size_t index = 0, total = 0;  // 1-based position among all (shape, M) points of the run
  std::string name;                  // the projection's name when it came from a model, else empty
  Problem problem;
  std::size_t candidates = 0;          // Measuring
  const TuneResult* result = nullptr;  // Stored, Measured, Kept
  std::string message;  // Skipped: why ("in the table (<entry>)", "in the table (heuristic <us>)" for a marker);
                        // Kept: the file's entry the marker replaced (with force), if any; Failed: the error
};

using MeasureFn = std::function<BenchRow(const Problem&, const BenchOptions&)>;

struct TuneOptions {
  Backend backend = Backend::Auto;
  // Comma list of globs over config names ("tma_m8_*,bulk_m8_*"); empty = every listed config of the backend's
  // families (CPU: cpu_*; GPU: every kernel family, bulk_*, tma_*). On a GPU cuBLASLt
  // (default and cublaslt_a0..a7) is always measured too: it is what the margin is measured against. A
  // cublaslt_a<i> pick is stored by its identity (measured_cublaslt_identity).
  std::string candidates;
  // Set: per point only the heuristic's pick (select without a table; measured whatever `candidates` says), the
  // configs of its family at its token tile whose names differ from it in at most this many tokens (name_distance)
  // and match `candidates`, and on a GPU cuBLASLt. Unset: every candidate the globs name.
  std::optional<int> near_heuristic;
  // Set (the quick tune; not with near_heuristic): per point the heuristic's pick, the first moves - 1 configs of its
  // kind's ranked move list that the globs name (the tma family's first cut whatever they say, as near_heuristic
  // measures it) and that run (lab/tune_moves.h), and on a GPU cuBLASLt's default.
  std::optional<int> moves;
  int samples = 5;
  int replays = 20;
  // GPU: a kernel must be >= 3% faster than the best cuBLASLt algorithm (median); with refine (both backends), the
  // winner must also be this much faster than the heuristic's pick.
  double margin = 0.03;
  // Store an entry only where the winner beats the heuristic's measured pick by the margin, in every sample; at
  // the other points (TuneResult::heuristic_kept) a heuristic marker with the pick's time (TableEntry::heuristic_kept,
  // "config": "heuristic" in the file), which replaces an entry the file has there (with force). Selection runs
  // the heuristic at a marker's M and at the Ms below it that it serves as their bucket (Table::find_bucket), so a
  // larger M's entry no longer stands for a point where the heuristic was measured best; resume skips a marker's
  // point like an entry's. Where the pick has no time (its check failed) the winner is stored as without refine.
  bool refine = false;
  // GPU: also time cuBLASLt as torch's F.linear configures it (cublaslt_torch, a baseline never stored) once per
  // point, into the heuristic row's cublaslt_torch_us (issue 18 judges the heuristic against the faster of the two).
  bool torch_baseline = false;
  bool force = false;    // re-tune points the table already has
  // false: measure and report only; the table file is neither read nor written. Held-out shapes are measured
  // this way: issue 4 forbids them in the shipped table, or the heuristic would be judged on tuned points.
  bool store = true;
  std::function<void(const TuneEvent&)> progress;
  // Measures one forced config; empty = tune::bench_problem. Tests inject fakes (e.g. a wrong kernel).
  MeasureFn measure;
};

struct Rejected {
  std::string config;
  std::string reason;  // the output check's error, or why the row could not be used
};

// The pick among measured rows and why.
struct Decision {
  TableEntry entry;
  std::size_t stored = 0;  // index of the stored config's row
  std::string reason;      // "<config> <us> us beats cublaslt_a2 <us> us by <percent>% (margin 3%) ..."
};

// What selection runs at a point without a table (the heuristic's pick, or the fallback where no kernel supports
// the problem), measured like a candidate, so that the heuristic is judged against the tuned best.
struct HeuristicPick {
  Choice choice;
  BenchRow row;        // its measured row; meaningless when error is set
  bool extra = false;  // not among the candidates (e.g. excluded by --candidates), so measured after them; a
                       // kernel pick then joins TuneResult::rows last and competes under the margin rule (unless
                       // the globs name cuBLASLt alone), so no entry is slower than it by more than the margin
  std::string error;   // why it has no time: its output check failed or it could not run
};

struct TuneResult {
  Problem problem;
  TableEntry entry;                // what the margin rule picks; not stored where heuristic_kept
  std::size_t stored = 0;          // index into rows of entry.config
  std::string reason;              // "heuristic kept: <why>" where heuristic_kept
  bool heuristic_kept = false;     // refine: the entry does not beat the heuristic's pick, so a marker is stored
  std::vector<BenchRow> rows;      // every candidate that passed its check, in candidate order, then the
                                   // heuristic's kernel pick where it is HeuristicPick::extra (GPU rows carry the
                                   // cuBLASLt default / best times of the same point)
  std::vector<Rejected> rejected;  // candidates that failed their check or could not run
  // GPU: per row, the algorithm cuBLASLt's default or a position (cublaslt_a<i>) ran on this point, by identity (or
  // why it could not be named); empty for other rows. The positions move with the shape, so a report can say which
  // algorithm won only by identity.
  struct Identity {
    std::string name, error;
  };
  std::vector<Identity> identities;
  HeuristicPick heuristic;
};

struct TuneSummary {
  std::string table_path;  // empty when options.store is off
  std::size_t points = 0, tuned = 0, skipped = 0, failed = 0;
  std::vector<TuneResult> results;    // tuned points, in run order
  std::vector<std::string> failures;  // "<problem>: <error>" per failed point
};

// The configs tune_problem measures for problem on device, in a fixed order (kernels, then cuBLASLt; with
// near_heuristic or moves the heuristic's pick first, so that a tie goes to it). near_heuristic and moves as
// TuneOptions'. Throws Error when the glob names no listed config of the device's families, near_heuristic is
// negative, moves is below 1, or both are set.
std::vector<Config> tune_candidates(const Problem& problem, const DeviceInfo& device, const std::string& globs,
                                    std::optional<int> near_heuristic = std::nullopt,
                                    std::optional<int> moves = std::nullopt);

// How many underscore-separated tokens a and b do not share (the larger of the two one-sided counts):
// tma_m8_r64_b2_s4_x8 vs tma_m8_r64_b2_s3_x8 is 1, vs tma_m8_r32_b2_s7_c2_d9 is 4.
int name_distance(const std::string& a, const std::string& b);

// Picks what to store from checked rows (see TuneOptions::margin). gpu = apply the cuBLASLt margin rule;
// on the CPU the fastest median wins. Throws Error when nothing can be stored.
Decision decide(const std::vector<BenchRow>& rows, bool gpu, double margin);

// TuneOptions::refine: why the heuristic's measured pick is kept rather than the winner decide() picked, or
// nullopt when the winner is to be stored: another config whose median beats the pick's by the margin and whose
// worst sample (us * (1 + spread)) is faster than the pick's median.
std::optional<std::string> why_keep_heuristic(const BenchRow& winner, const BenchRow& heuristic, double margin);

// Measures every candidate of one problem (forced config, check on, no baselines) and decides.
// Throws Error when no candidate passed its check.
TuneResult tune_problem(const Problem& problem, const TuneOptions& options);

// Tunes every (shape, M) point into the table file at table_path, resuming: points already in the file (an entry or
// a heuristic marker) are skipped unless options.force. The file (if present) must be for this device's signature.
// Each tuned point is merged into the file atomically at once, so an interrupted run keeps what it measured. With
// options.store off, table_path is ignored (may be empty) and every point is measured.
TuneSummary tune_into_table(const std::vector<models::Projection>& shapes, const std::vector<int64_t>& ms,
                            DType dtype, const TuneOptions& options, const std::string& table_path);

// The heuristic's loss over tuned points (issue 4 acceptance: within 10% of the best, never slower than
// cuBLASLt's default). loss = heuristic_us / best_us - 1, best over every measured row of the point.
struct HeuristicSummary {
  std::size_t points = 0;  // points whose heuristic pick has a time
  std::size_t failed = 0;  // points whose heuristic pick failed its check or could not run (must be 0)
  double median_loss = 0, worst_loss = 0;
  std::string worst_point;              // "<name> NxK m=M" of the worst loss
  std::size_t slower_than_cublaslt = 0; // points where the pick is slower than cuBLASLt's default
  std::size_t cublaslt_points = 0;      // points where cuBLASLt's default was measured (0 on the CPU)
  // Issue 18: points where the pick is more than kCublasltTolerance slower than the faster of cuBLASLt's default
  // and cublaslt_torch (where TuneOptions::torch_baseline timed it), the worst ratio and its point.
  std::size_t over_faster_cublaslt = 0;
  double worst_vs_faster_cublaslt = 0;
  std::string worst_vs_faster_cublaslt_point;
  static constexpr double kCublasltTolerance = 0.03;
};
HeuristicSummary summarize_heuristic(const std::vector<TuneResult>& results);

// What the table adds to the heuristic alone over tuned points (issue 18): where an entry was stored (or, with
// store off, would be) and where the heuristic was kept (a heuristic marker, not counted as an entry), and the gain
// of the entries, heuristic_us / entry us, over those whose heuristic pick has a time.
struct EntrySummary {
  std::size_t entries = 0, heuristic_kept = 0;
  std::size_t gain_points = 0;            // entries whose heuristic pick has a time: the gains are over these
  double gain_geomean = 0, gain_max = 0;  // 0 when gain_points is 0
  std::string gain_max_point;             // "<name> NxK m=M" of gain_max
};
EntrySummary summarize_entries(const std::vector<TuneResult>& results);

// The shared result schema with one row of kind "heuristic" per point: the heuristic pick's gemm row plus
// heuristic_config, heuristic_us, best_config, best_us and loss (heuristic_us and loss null, and
// heuristic_error set, where the pick has no time), and a top-level "summary" (HeuristicSummary, then
// EntrySummary as entries, heuristic_kept, entry_gain_points, entry_gain_geomean, entry_gain_max (both null
// without gain points) and entry_gain_max_point).
std::string heuristic_report_json(const BenchMeta& meta, const std::vector<TuneResult>& results);

// "nvidia-h200.json" for "NVIDIA H200"; the CPU's file names its thread count ("cpu-2t.json") because a table
// matches a CPU only with the same count.
std::string table_file_name(const DeviceInfo& device);

// The identity (a cublaslt_id... config) of cuBLASLt's heuristic answer at position for problem on the bench's
// operands (kBenchOperandAlignment): what a measured cublaslt_a<position> ran. tune_problem stores cuBLASLt picks
// by it, so that a table names the algorithm that was measured whatever order another cuBLASLt lists them in.
Config measured_cublaslt_identity(const Problem& problem, int position);

// Tables tuned before cuBLASLt picks were stored by identity name them by position (cublaslt_a<i>), which selection
// skips. migrate_cublaslt_names rewrites each such entry of a table file as measured_cublaslt_identity of its
// problem and position, and leaves every other entry as it is (merged into the file atomically, Table::save_merge).
// Positions mean cuBLASLt's order on the table's GPU under the cuBLASLt version it records, so another device or
// version is refused (Error naming both).
struct MigrationSummary {
  std::size_t entries = 0;            // in the file
  std::size_t positional = 0;         // entries naming a cuBLASLt algorithm by position
  std::size_t migrated = 0;           // of those, rewritten as identities
  std::vector<std::string> failures;  // "<problem> <config>: <error>" per positional entry left as it was
};
// The identity at a position for a problem; tests inject fakes.
using IdentifyFn = std::function<Config(const Problem& problem, int position)>;
// identify empty = measured_cublaslt_identity.
MigrationSummary migrate_cublaslt_names(const std::string& table_path, const DeviceInfo& device,
                                        const IdentifyFn& identify);

}  // namespace skinnygemm::tune
