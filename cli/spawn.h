// Running this binary again as a child process with a changed environment: the step's no-PDL pass (PDL is a
// process-wide switch) and its ranks (one process per GPU).
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "skinnygemm/error.h"

extern char** environ;

namespace skinnygemm::cli {

// Starts /proc/self/exe with args (args[0]: the program name) in this process's environment, where each
// "NAME=value" of env_set replaces or adds NAME. what names the child in errors ("the no-PDL child").
inline pid_t spawn_self(std::vector<std::string> args, const std::vector<std::string>& env_set, const std::string& what) {
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = env_set;
  for (char** e = environ; *e; ++e) {
    bool replaced = false;
    for (const std::string& set : env_set)
      replaced = replaced || std::strncmp(*e, set.c_str(), set.find('=') + 1) == 0;
    if (!replaced) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data());
  SKINNYGEMM_CHECK(err == 0, "could not start " << what << ": " << std::strerror(err));
  return pid;
}

// The exit status of a finished child: its exit code, or 128 + the signal that ended it (as a shell says).
inline int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Waits for pid; its exit_code.
inline int wait_child(pid_t pid, const std::string& what) {
  int status = 0;
  SKINNYGEMM_CHECK(waitpid(pid, &status, 0) == pid, "waiting for " << what << " failed: " << std::strerror(errno));
  return exit_code(status);
}

}  // namespace skinnygemm::cli
