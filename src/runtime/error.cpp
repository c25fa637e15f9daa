#include "skinnygemm/error.h"

#include <cstring>

namespace skinnygemm::detail {

[[noreturn]] void throw_error(const char* file, int line, const std::string& message) {
  const char* base = std::strrchr(file, '/');
  std::ostringstream os;
  os << "skinnygemm error (" << (base ? base + 1 : file) << ":" << line << "): " << message;
  throw Error(os.str());
}

}  // namespace skinnygemm::detail
