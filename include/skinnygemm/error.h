// skinnygemm::Error and the checking macros used by every layer.
// Messages carry file:line and the offending values; the library never exits or aborts.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace skinnygemm {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_error(const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace skinnygemm

// SKINNYGEMM_CHECK(k % 8 == 0, "K=" << k << " must be a multiple of 8");
#define SKINNYGEMM_CHECK(cond, stream_expr)                                      \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::ostringstream skinnygemm_os_;                                         \
      skinnygemm_os_ << stream_expr;                                             \
      ::skinnygemm::detail::throw_error(__FILE__, __LINE__, skinnygemm_os_.str()); \
    }                                                                            \
  } while (0)

// Unconditional, so that the compiler sees a function ending in it never returns.
#define SKINNYGEMM_FAIL(stream_expr)                                                           \
  do {                                                                                         \
    std::ostringstream skinnygemm_os_;                                                         \
    skinnygemm_os_ << stream_expr;                                                             \
    ::skinnygemm::detail::throw_error(__FILE__, __LINE__, skinnygemm_os_.str());              \
  } while (0)
