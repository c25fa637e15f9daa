// Shared pieces of the `skinnygemm` subcommands: the Command record main.cpp collects, the options every
// selecting command takes, and small run-time helpers (command line, git revision, UTC date, file output).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "kernels/family.h"
#include "skinnygemm/error.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::cli {

// A subcommand: its CLI11 app (options bound to state owned by run) and what runs when it was chosen.
// run returns the exit status; errors throw skinnygemm::Error, which main prints (exit 2).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Exit statuses: 0 success, 1 a check failed (a mismatch), 2 bad input or another error.
constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

inline void add_backend_option(CLI::App* app, std::string* backend) {
  app->add_option("--backend", *backend, "cpu, cuda, or auto (cuda when built with it and a GPU is present)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
}

inline void add_table_option(CLI::App* app, std::string* table) {
  app->add_option("--table", *table, "a measured table (JSON) to select from instead of the shipped one");
}

inline void add_problem_options(CLI::App* app, std::string* shapes, std::string* m, std::string* dtype,
                                std::string* config) {
  app->add_option("--shapes", *shapes, "comma list of NxK and model:<name>:tp<N>[:fusions] items (e.g. model:kimi_k3:tp8)")
      ->required();
  app->add_option("--m", *m, "tokens: 1:64, 1:64:2, 1,2,4,8 or 3")->required();
  app->add_option("--dtype", *dtype, "bf16 or fp16")->check(CLI::IsMember({"bf16", "fp16"}))->capture_default_str();
  app->add_option("--config", *config,
                  "force a config by name (e.g. cpu_r4, bulk_m8_w1x8_u4_sk2, tma_m8_r64_b2_s4_x8), or tma for the TMA "
                  "family's first-cut config of each problem; default: select");
}

// --table FILE loaded (an Error names FILE when it is corrupt); nullopt when not given, so that the library
// uses the shipped table for the device.
// --config, checked once before any case runs: a malformed name fails (Config::parse; "tma" alone is the family's
// first cut), and a GPU family's config on the CPU backend is bad input (exit 2), not a case that failed (exit 1, once
// per case; the new user's audit of session 35).
inline void check_config_arg(const std::string& config, Backend backend) {
  if (config.empty()) return;
  if (config != "tma") Config::parse(config);
  if (backend != Backend::Cpu) return;
  const FamilyDescriptor* f = find_family(config.substr(0, config.find('_')), nullptr);
  if (f && f->gpu)
    SKINNYGEMM_FAIL("--config " << config << ": the " << f->name << " family needs a GPU (--backend cuda); the cpu "
                    "backend runs cpu_r<rows> configs, or none forced");
}

inline std::optional<Table> load_table_arg(const std::string& path) {
  if (path.empty()) return std::nullopt;
  return Table::load(path);
}

// The command line as typed, kept for result files ("command" in the meta block).
inline std::string& command_line() {
  static std::string line;
  return line;
}

inline void set_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    // Quote what a shell would split or expand, so that the recorded command can be pasted back.
    if (arg.empty() || arg.find_first_of(" \t\"'$*?;&|<>()") != std::string::npos) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    line += (i ? " " : "") + arg;
  }
  command_line() = line;
}

// stdout of a shell command with trailing newlines removed, or nullopt when it fails.
inline std::optional<std::string> capture(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  char buf[256];
  while (size_t got = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, got);
  if (pclose(pipe) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The git revision of the source tree the data folder belongs to, "-dirty" when tracked files changed;
// "unknown" outside a git checkout (an installed copy).
// $SKINNYGEMM_REVISION wins: the GPU machine gets a copy of the tree without .git (scripts/gpu-check sets it).
inline std::string git_revision() {
  if (const char* env = std::getenv("SKINNYGEMM_REVISION"); env && *env) return env;
  std::string dir = "'";
  for (char c : data_dir()) dir += c == '\'' ? std::string("'\\''") : std::string(1, c);
  dir += "'";
  const auto sha = capture("git -C " + dir + " rev-parse HEAD 2>/dev/null");
  if (!sha || sha->empty()) return "unknown";
  const auto status = capture("git -C " + dir + " status --porcelain --untracked-files=no 2>/dev/null");
  return *sha + (status && !status->empty() ? "-dirty" : "");
}

inline std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// Throws unless path can be written: called for --json / --csv before measuring, so that a long run does not
// find out at the end that its results have nowhere to go. Opens for append (an existing file is left as it is)
// and removes the file again if this check created it.
inline void check_writable(const std::string& path, const std::string& option) {
  std::error_code ec;
  SKINNYGEMM_CHECK(!std::filesystem::is_directory(path, ec),
                   option << " " << path << " is a directory; expected a file path to write");
  const bool existed = std::filesystem::exists(path, ec);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    SKINNYGEMM_CHECK(out.good(), option << " " << path << " cannot be opened for writing: " << std::strerror(errno)
                                        << " (checked before measuring)");
  }
  if (!existed) std::filesystem::remove(path, ec);
}

inline void write_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  SKINNYGEMM_CHECK(!std::filesystem::is_directory(path, ec), path << " is a directory; expected a file path to write");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  SKINNYGEMM_CHECK(out.good(), "cannot open " << path << " for writing; expected a writable file path");
  out << text;
  out.close();
  SKINNYGEMM_CHECK(!out.fail(), "writing " << path << " failed (disk full?)");
}

// Fixed-point text of v with the given decimals ("-" for 0 = not measured).
inline std::string fixed(double v, int decimals) {
  if (v == 0) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

}  // namespace skinnygemm::cli
