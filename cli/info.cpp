// `skinnygemm info [--table FILE]`: version, build options, devices, data folder and the table selection
// would use here -- what someone needs before trusting any number this machine prints.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "common.h"
#include "runtime/backends.h"
#include "lab/models.h"
#include "lab/step_comm.h"

namespace skinnygemm::cli {
namespace {

struct InfoArgs {
  std::string table;
};

std::string env_or_unset(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string("(unset)");
}

void print_device(const DeviceInfo& d) {
  if (d.is_cpu) {
    std::cout << d.name << " (" << d.sms << " hardware threads), signature " << d.signature() << "\n";
    return;
  }
  std::cout << d.name << " (sm_" << d.cc_major << d.cc_minor << ", " << d.sms << " SMs, L2 "
            << d.l2_bytes / (1024 * 1024) << " MiB, " << d.smem_per_block_optin / 1024
            << " KiB shared memory per block, CUDA " << d.cuda_version << ", cuBLASLt " << d.cublaslt_version
            << "), signature " << d.signature() << "\n";
}

void print_table(const Table& table, const DeviceInfo& device) {
  std::size_t markers = 0;
  for (const auto& [key, entry] : table.entries) markers += entry.heuristic_kept;
  std::cout << "  file:     " << table.path << "\n"
            << "  measured: " << table.meta.gpu << " (" << table.meta.sms << " SMs), CUDA " << table.meta.cuda
            << ", cuBLASLt " << table.meta.cublaslt << ", library " << table.meta.library << "\n"
            << "  entries:  " << table.entries.size() - markers << " configs, " << markers
            << " heuristic markers (points where tune --refine measured the heuristic's pick best)\n"
            << "  matches:  "
            << (table.matches(device) ? "yes, selection uses it on this device"
                                      : "no: measured on another device signature, selection skips it here")
            << "\n";
}

int run_info(const InfoArgs& args) {
  // An explicit table is loaded before anything is printed: a corrupt file is an error (exit 2) whose
  // message names the file, not a line lost after the device listing.
  const std::optional<Table> explicit_table = load_table_arg(args.table);
  std::cout << "skinnygemm " << version() << "\n"
            << "build:    CUDA backend " << (cuda::built() ? "built (sm_90a kernels, cuBLASLt)" : "not built")
            << ", NCCL " << (tune::step_nccl_built() ? "built (step --ranks)" : "not built") << ", data folder "
            << data_dir() << "\n"
            << "env:      SKINNYGEMM_LOG=" << env_or_unset("SKINNYGEMM_LOG")
            << " SKINNYGEMM_PDL=" << env_or_unset("SKINNYGEMM_PDL")
            << " SKINNYGEMM_DATA_DIR=" << env_or_unset("SKINNYGEMM_DATA_DIR") << "\n";
  std::string models;
  for (const auto& name : models::available_models()) models += (models.empty() ? "" : ", ") + name;
  std::cout << "models:   " << (models.empty() ? "none found" : models) << "\n";

  std::cout << "devices:\n  cuda: ";
  if (cuda::available())
    print_device(cuda::device_info());
  else
    std::cout << (cuda::built() ? "no usable GPU found" : "none (the library was built without CUDA)") << "\n";
  std::cout << "  cpu:  ";
  print_device(cpu_device_info());

  const Backend backend = resolve_backend(Backend::Auto);
  const DeviceInfo device = device_info(backend);
  std::cout << "default backend: " << backend_name(backend) << "\n";

  if (explicit_table) {
    std::cout << "table (--table):\n";
    print_table(*explicit_table, device);
  } else if (const Table* table = default_table(device)) {
    std::cout << "table (shipped):\n";
    print_table(*table, device);
  } else {
    std::cout << "table:    none for " << device.signature()
              << "; selection uses the heuristic, then the fallback\n";
  }
  return 0;
}

}  // namespace

Command add_info(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info", "Version, build options, devices and the table in use");
  add_table_option(sub, &args->table);
  return {sub, [args] { return run_info(*args); }};
}

}  // namespace skinnygemm::cli
