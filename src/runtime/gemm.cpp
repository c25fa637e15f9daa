// The public entry point: validate -> choose (forced, or cached selection) -> backend. Three hops.
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

#include "runtime/backends.h"
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

std::string data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SKINNYGEMM_DATA_DIR"); env && *env) return env;
  if (fs::exists(fs::path(SKINNYGEMM_SOURCE_DATA_DIR) / "models")) return SKINNYGEMM_SOURCE_DATA_DIR;
  return SKINNYGEMM_INSTALL_DATA_DIR;
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
  if (problem.empty()) return Choice{Config{}, Source::Fallback, "empty problem (M=0 or N=0): nothing to do"};
  const int alignment = operand_alignment(problem, x, w, y);
  Choice choice;
  if (problem.k == 0) {  // nothing to read: every backend writes zeros whatever the config
    choice.config = Config::parse(backend == Backend::Cuda ? "cublaslt" : "cpu_r4");
    choice.reason = "K=0: writes zeros";
  } else if (!options.config.empty()) {
    choice.config = Config::parse(options.config);
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
