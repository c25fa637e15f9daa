// The public entry point: validate -> the cached plan for (problem, options, alignment) -> its launch.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/backends.h"
#include "runtime/plan_impl.h"
#include "skinnygemm/plan.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {

const char* version() { return SKINNYGEMM_VERSION; }

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::Auto: return "auto";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

Backend parse_backend(const std::string& name) {
  if (name == "auto") return Backend::Auto;
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  SKINNYGEMM_FAIL("unknown backend '" << name << "'; expected auto, cpu or cuda");
}

std::string DeviceInfo::signature() const {
  return is_cpu ? "cpu/" + std::to_string(sms) + "t" : name + "/" + std::to_string(sms) + "sm";
}

DeviceInfo cpu_device_info() {
  // Made once: hardware_concurrency() parses a /sys file on every call.
  static const DeviceInfo cpu = [] {
    DeviceInfo d;
    d.is_cpu = true;
    d.name = "cpu";
    d.sms = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return d;
  }();
  return cpu;
}

Backend resolve_backend(Backend backend) {
  if (backend == Backend::Auto) return cuda::available() ? Backend::Cuda : Backend::Cpu;
  if (backend == Backend::Cuda)
    SKINNYGEMM_CHECK(cuda::available(), (cuda::built() ? "the CUDA backend found no usable GPU"
                                                       : "skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF "
                                                         "or no nvcc); use the cpu backend"));
  return backend;
}

DeviceInfo device_info(Backend backend) {
  return resolve_backend(backend) == Backend::Cuda ? cuda::device_info() : cpu_device_info();
}

namespace {

// The folder this library was loaded from (dladdr on one of its own functions), empty when unknown.
std::filesystem::path library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&data_dir), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path() : lib.parent_path();
}

// Without the environment variable: the data next to the loaded library (an install, wherever its prefix was
// copied to: <prefix>/lib/../share/skinnygemm), else the source tree when this library is the one the build
// tree made, else the data next to the running program (<prefix>/bin/../share/skinnygemm). The configure-time
// paths are only compared with, never trusted alone: an installed copy must not read a checkout that happens to
// still exist (issue 19).
std::string located_data_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path lib = library_dir();
  const fs::path installed = lib.empty() ? fs::path() : (lib / SKINNYGEMM_LIB_TO_DATA_DIR).lexically_normal();
  if (!installed.empty() && fs::is_directory(installed / "models", ec)) return installed.string();
  if (!lib.empty() && fs::equivalent(lib, SKINNYGEMM_BUILD_LIB_DIR, ec) &&
      fs::is_directory(fs::path(SKINNYGEMM_SOURCE_DATA_DIR) / "models", ec))
    return SKINNYGEMM_SOURCE_DATA_DIR;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (!ec) {
    const fs::path next_to_program = (exe.parent_path() / SKINNYGEMM_BIN_TO_DATA_DIR).lexically_normal();
    if (fs::is_directory(next_to_program / "models", ec)) return next_to_program.string();
  }
  // Nothing found: name where an install would have it, so that "no models in X" points at the right place.
  return installed.empty() ? SKINNYGEMM_INSTALL_DATA_DIR : installed.string();
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("SKINNYGEMM_DATA_DIR"); env && *env) return env;
  static const std::string located = located_data_dir();  // the library does not move while loaded
  return located;
}


const Table* default_table(const DeviceInfo& device) {
  namespace fs = std::filesystem;
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Table>> tables;  // by device signature; null = none
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables.find(device.signature());
  if (it != tables.end()) return it->second.get();
  std::unique_ptr<Table> found;
  const fs::path dir = fs::path(data_dir()) / "tables";
  std::error_code ec;
  std::vector<fs::path> files;  // in name order, so that the pick does not depend on the directory's order
  if (fs::is_directory(dir, ec))
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    try {
      Table t = Table::load(file.string());
      if (t.matches(device)) {
        found = std::make_unique<Table>(std::move(t));
        break;
      }
    } catch (const std::exception& e) {  // one unreadable file must not hide the next one
      std::cerr << "skinnygemm: warning: skipping shipped table " << file.string() << ": " << e.what() << "\n";
    }
  }
  return (tables[device.signature()] = std::move(found)).get();
}

namespace {

// What a cached plan is for. Everything that changes the choice or the launch is in it: the backend and device,
// the table (and its revision), the forced config (by hash; the plan keeps the name to rule out collisions), the
// problem and the operand alignment.
struct PlanKey {
  int64_t m, n, k, ldx, ldw, ldy;
  const Table* table;
  uint64_t table_id;
  std::size_t config_hash;
  int device, alignment;
  DType dtype;
  Backend backend;
  bool operator==(const PlanKey& o) const {
    return m == o.m && n == o.n && k == o.k && ldx == o.ldx && ldw == o.ldw && ldy == o.ldy && table == o.table &&
           table_id == o.table_id && config_hash == o.config_hash && device == o.device &&
           alignment == o.alignment && dtype == o.dtype && backend == o.backend;
  }
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const {
    std::size_t h = 0;
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (int64_t v : {k.m, k.n, k.k, k.ldx, k.ldw, k.ldy}) mix(static_cast<uint64_t>(v));
    mix(reinterpret_cast<uintptr_t>(k.table));
    mix(k.table_id);
    mix(k.config_hash);
    mix((static_cast<uint64_t>(k.device) << 16) | (static_cast<uint64_t>(k.alignment) << 8) |
        (static_cast<uint64_t>(k.dtype) << 4) | static_cast<uint64_t>(k.backend));
    return h;
  }
};

struct CachedPlan {
  std::string config;  // the forced config's name ("" = selected)
  std::unique_ptr<const Plan> plan;
};

// Plans are never freed while the process runs: clear_plan_cache() retires them, so that a call that found a plan
// just before a clear still runs it safely without holding the lock (and a hit copies no shared pointer).
struct PlanCache {
  std::mutex mutex;
  std::unordered_map<PlanKey, CachedPlan, PlanKeyHash> plans;
  std::vector<std::unique_ptr<const Plan>> retired;
};
PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

}  // namespace

void clear_plan_cache() {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto& [key, cached] : cache.plans) cache.retired.push_back(std::move(cached.plan));
  cache.plans.clear();
}

// One lock (the cache's) and no allocation on a hit; a miss makes the plan outside the lock.
Choice gemm(const Problem& problem, const void* x, const void* w, void* y, const Options& options) {
  validate(problem, x, w, y);
  const Backend backend = resolve_backend(options.backend);
  if (problem.empty()) {
    // A forced name that is no config is an Error here too, as in a Plan (empty calls are rare: the check is not on
    // the hot path).
    if (!options.config.empty()) forced_config(options.config, problem, device_info(backend));
    // A config name Config::parse accepts (Config{} would print as "cpu_r0"), the same one K = 0 reports.
    static const Choice empty_cpu{Config::parse("cpu_r4"), Source::Fallback,
                                  "empty problem (M=0 or N=0): nothing to do"};
    static const Choice empty_cuda{Config::parse("cublaslt"), Source::Fallback,
                                   "empty problem (M=0 or N=0): nothing to do"};
    if (backend == Backend::Cuda) return empty_cuda;
    return empty_cpu;
  }
  PlanKey key{problem.m, problem.n, problem.k, problem.x_stride(), problem.w_stride(), problem.y_stride(),
              options.table, options.table ? options.table->id : 0,
              options.config.empty() ? 0 : std::hash<std::string>{}(options.config),
              backend == Backend::Cuda ? cuda::current_device() : 0,
              operand_alignment(problem, x, w, y), problem.dtype, backend};
  PlanCache& cache = plan_cache();
  const Plan* plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.plans.find(key);
    if (it != cache.plans.end() && it->second.config == options.config) plan = it->second.plan.get();
  }
  if (!plan) {
    Options resolved = options;
    resolved.backend = backend;
    auto made = std::make_unique<const Plan>(problem, resolved, key.alignment);
    plan = made.get();
    std::lock_guard<std::mutex> lock(cache.mutex);
    CachedPlan& slot = cache.plans[key];
    if (slot.plan) cache.retired.push_back(std::move(slot.plan));  // another thread's plan, or another config's
    slot = CachedPlan{options.config, std::move(made)};
  }
  PlanAccess::impl(*plan).run_unchecked(x, w, y, options.stream);
  return plan->choice();
}

}  // namespace skinnygemm
