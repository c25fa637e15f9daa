// The public entry point: validate -> choose (forced, or cached selection) -> backend. Three hops.
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
#include <vector>

#include "core/backends.h"
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
  DeviceInfo d;
  d.is_cpu = true;
  d.name = "cpu";
  d.sms = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return d;
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
    } catch (const Error& e) {
      std::cerr << "skinnygemm: warning: skipping shipped table: " << e.what() << "\n";
    }
  }
  return (tables[device.signature()] = std::move(found)).get();
}

Choice gemm(const Problem& problem, const void* x, const void* w, void* y, const Options& options) {
  validate(problem, x, w, y);
  const Backend backend = resolve_backend(options.backend);
  const DeviceInfo device = backend == Backend::Cuda ? cuda::device_info() : cpu_device_info();
  // A config name Config::parse accepts (Config{} would print as "cpu_r0"), the same one K = 0 reports.
  if (problem.empty())
    return Choice{Config::parse(backend == Backend::Cuda ? "cublaslt" : "cpu_r4"), Source::Fallback,
                  "empty problem (M=0 or N=0): nothing to do"};
  const int alignment = operand_alignment(problem, x, w, y);
  Choice choice;
  if (problem.k == 0) {  // nothing to read: every backend writes zeros whatever the config
    choice.config = Config::parse(backend == Backend::Cuda ? "cublaslt" : "cpu_r4");
    choice.reason = "K=0: writes zeros";
  } else if (!options.config.empty()) {
    choice.config = forced_config(options.config, problem, device);
    std::string why_not;
    SKINNYGEMM_CHECK(supports(choice.config, problem, device, alignment, &why_not),
                     "forced config " << options.config << " cannot run " << problem.str() << " on "
                                      << device.signature() << ": " << why_not);
    choice.source = Source::Forced;
    choice.reason = "forced by Options::config";
  } else {
    const Table* table = options.table ? options.table : default_table(device);
    choice = select(problem, device, table, alignment);
  }
  if (backend == Backend::Cuda) {
    cuda::gemm(problem, x, w, y, choice.config, options.stream);
  } else {
    cpu::gemm(problem, x, w, y, choice.config);
  }
  return choice;
}

}  // namespace skinnygemm
