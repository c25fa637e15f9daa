// Helpers for the families' config-name parsers (Config::parse hands each family its name split at '_').
#pragma once

#include <algorithm>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace skinnygemm {

std::vector<std::string> split(const std::string& s, char sep);

// Whether `name` names a config of a retired family (reg_*: the register ring, retired in 0.2.0); `why` gets what
// happened to it. Config::parse refuses such a name with `why`; Table::load leaves such entries out with it.
bool retired_family_name(const std::string& name, std::string* why);

// The number after `prefix` in `part` ("u4" with prefix "u" -> 4); an Error names the config and `what`.
int number_after(const std::string& name, const std::string& part, const std::string& prefix, const char* what);

template <std::size_t N>
bool listed(const int (&list)[N], int v) {
  return std::find(std::begin(list), std::end(list), v) != std::end(list);
}

inline bool listed(const int* list, std::size_t n, int v) { return std::find(list, list + n, v) != list + n; }

inline std::string join(const int* list, std::size_t n) {
  std::ostringstream os;
  for (std::size_t i = 0; i < n; ++i) os << (i ? "," : "") << list[i];
  return os.str();
}

template <std::size_t N>
std::string join(const int (&list)[N]) {
  return join(list, N);
}

}  // namespace skinnygemm
