// `skinnygemm`: info, shapes, check, bench, tune, heuristic, step, mla, fused, overhead. Each subcommand lives in
// cli/<name>.cpp and defines `Command add_<name>(CLI::App&)`; adding one is that file plus its name in
// SKINNYGEMM_CLI_COMMANDS.
#include <algorithm>
#include <exception>
#include <string>
#include <iostream>
#include <vector>

#include "common.h"

#define SKINNYGEMM_CLI_COMMANDS(X) \
  X(info) X(shapes) X(check) X(bench) X(tune) X(heuristic) X(step) X(mla) X(fused) X(overhead)

namespace skinnygemm::cli {
#define SKINNYGEMM_CLI_DECLARE(name) Command add_##name(CLI::App& app);
SKINNYGEMM_CLI_COMMANDS(SKINNYGEMM_CLI_DECLARE)
#undef SKINNYGEMM_CLI_DECLARE
}  // namespace skinnygemm::cli

int main(int argc, char** argv) {
  using namespace skinnygemm::cli;
  CLI::App app{"skinnygemm " + std::string(skinnygemm::version()) +
               ": decode-time projections y[M,N] = x[M,K] w[N,K]^T at the memory limit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(skinnygemm::version()));
#define SKINNYGEMM_CLI_ADD(name) add_##name(app),
  const std::vector<Command> commands = {SKINNYGEMM_CLI_COMMANDS(SKINNYGEMM_CLI_ADD)};
#undef SKINNYGEMM_CLI_ADD
  // A first word that is no command and no option: name it (CLI11 says only "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-' && std::none_of(commands.begin(), commands.end(), [&](const Command& c) {
        return c.app->get_name() == argv[1];
      })) {
    std::string known;
    for (const Command& c : commands) known += (known.empty() ? "" : ", ") + c.app->get_name();
    std::cerr << "skinnygemm: unknown command '" << argv[1] << "'; expected one of " << known
              << " (skinnygemm --help)\n";
    return kExitError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or --help / --version, status 0) and returns its own code per error kind
    // (105 validation, 106 required, 109 extras ...); the README documents 2 for every bad input.
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  set_command_line(argc, argv);
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const skinnygemm::Error& e) {
    std::cout.flush();
    std::cerr << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "skinnygemm: " << e.what() << "\n";
    return kExitError;
  }
  return kExitError;  // unreachable: require_subcommand(1) made CLI11 reject a missing subcommand
}
