// A kernel family as one descriptor: everything selection, the heuristic, the tuner and the launcher need to
// know about it, so that no other file switches on the family. The registry (src/kernels/registry.cpp) lists
// the descriptors; Config::family is a position in that list (docs/adding-a-family.md).
//
// Host-only: no CUDA header. What needs CUDA (the instances and the launcher) is the descriptor's device half,
// defined in the family's .cu files and null in builds without CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backends.h"
#include "runtime/cost_model.h"
#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

// A launch resolved once for one (problem, config): kernel, grid, shared memory, parameters, and whatever the
// family reserves for it (workspace, tensor descriptors). run() only fills in the pointers and launches, so
// it does no selection, no string work, no allocation and no lock. run() is const and must be safe to call from
// several threads at once (a cached plan is shared): per-call state (e.g. a tensor descriptor whose address is
// patched) lives on run()'s stack, per-problem state is written only by prepare.
class PreparedLaunch {
 public:
  virtual ~PreparedLaunch() = default;
  // The problem's operands (the problem and alignment it was prepared for); stream is a cudaStream_t or null.
  virtual void run(const void* x, const void* w, void* y, void* stream) const = 0;
};

// What a family's instances can do, from its .cu files (CUDA builds only).
struct FamilyDevice {
  // An instance exists for this config in every supported dtype.
  bool (*built)(const Config& config);
  // The launch of config on problem (supports() holds). segments (count 1..kMaxOutputSegments, or 0) send each
  // segment's output rows to its own destination instead of y (only where writes_segments).
  std::unique_ptr<PreparedLaunch> (*prepare)(const Problem& problem, const Config& config, const DeviceInfo& device,
                                             const OutputSegment* segments, int count);
  bool writes_segments;  // the epilogue can write per-segment outputs (the fused-kernel rung)
};

// Token tile, warp layout, unroll and split-K: the parameters of the skinny family (bulk).
struct TiledTraits {
  const int* tiles;        // token tiles built
  std::size_t tile_count;
  int chunk_k;             // K elements per chunk (or stage) the kernel walks
};

struct FamilyDescriptor {
  const char* name;  // the config name's first part: "bulk"
  bool gpu;          // runs on the CUDA backend (else the CPU backend)
  bool kernel;       // one of our kernels (the tuner measures it); false: the cuBLASLt baseline
  const TiledTraits* tiled;  // null for families without token tiles (cublaslt, cpu)

  // Config names. parse gets the name split at '_' (parts[0] == name) and throws Error naming the bad part.
  Config (*parse)(const std::string& name, const std::vector<std::string>& parts, Family id);
  std::string (*print)(const Config& config);
  std::vector<Config> (*listed)(Family id);  // every config the family builds
  // Whether a table may name config: its name must mean the same code in every process that accepts the table (a
  // position in a list made at run time does not); why_not says why not. Null: every config of the family.
  bool (*storable)(const Config& config, std::string* why_not);

  // Whether config runs problem on device with operands of this alignment (bytes); why_not says why not.
  bool (*supports)(const Config& config, const Problem& problem, const DeviceInfo& device, int alignment,
                   std::string* why_not);
  // The shape arithmetic alone (no device or instance check); null = every shape fits.
  bool (*fits_shape)(const Config& config, const Problem& problem, const DeviceInfo& device, std::string* why_not);
  int64_t (*smem_bytes)(const Config& config, const Problem& problem);  // dynamic shared memory per CTA
  int (*registers)(const Config& config);  // registers per thread (ptxas -v of the built instances)

  // The cost model and the heuristic's admission: scored by the GPU heuristic when heuristic_scores is set and
  // says yes; single_wave: only where the model puts every CTA in one resident wave.
  CostBreakdown (*estimate)(const Config& config, const Problem& problem, const DeviceInfo& device);
  bool (*heuristic_scores)(const Config& config, const Problem& problem);
  bool single_wave;
  // The cost model's constants fitted to measurements, by name (`skinnygemm heuristic` dumps them for
  // scripts/heuristic_cv.py); null where the model is not fitted.
  std::vector<ModelConstants> (*fitted_constants)();

  const FamilyDevice* device;  // null without CUDA (or for the CPU family)
  // The config a forced name of the family alone ("tma") stands for on this problem and device; null: the name
  // alone is not a config.
  Config (*first_cut)(const Problem& problem, const DeviceInfo& device);
  // The heuristic's pick of the family by structural rules (no scoring), with a one-line reason; false where the
  // family leaves the problem to the scored heuristic. The GPU heuristic asks these first, in registry order, and
  // takes the first pick its caller can run. Null: the family has no such rules.
  bool (*structural_pick)(const Problem& problem, const DeviceInfo& device, Config* pick, std::string* reason);
};

// The registry, in Family order.
const std::vector<const FamilyDescriptor*>& families();
const FamilyDescriptor& family(Family id);
// The family of this name, or null (its id in *id where id is not null).
const FamilyDescriptor* find_family(const std::string& name, Family* id);

// Sets *why_not (when given) to why and returns false: the families' supports() and fits_shape() use it.
bool fail(std::string* why_not, const std::string& why);

// Device halves are named in descriptors through this macro, so that a family's host file compiles without CUDA.
#ifdef SKINNYGEMM_WITH_CUDA
#define SKINNYGEMM_DEVICE_HALF(device_half) (&(device_half))
#else
#define SKINNYGEMM_DEVICE_HALF(device_half) nullptr
#endif

}  // namespace skinnygemm
