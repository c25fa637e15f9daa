#include "runtime/memory.h"

#include <unistd.h>

#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>

#include "skinnygemm/error.h"

namespace skinnygemm {

int64_t add_bytes(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<int64_t>::max() : out;
}

int64_t mul_bytes(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<int64_t>::max() : out;
}

int64_t operand_bytes(int64_t rows, int64_t cols, int64_t stride, int64_t elem_bytes) {
  if (rows <= 0 || cols <= 0) return 0;
  int64_t elems = 0, bytes = 0;
  if (__builtin_mul_overflow(rows - 1, stride, &elems) || __builtin_add_overflow(elems, cols, &elems) ||
      __builtin_mul_overflow(elems, elem_bytes, &bytes))
    return -1;
  return bytes;
}

std::string bytes_text(int64_t bytes) {
  std::ostringstream os;
  if (bytes == std::numeric_limits<int64_t>::max()) return "more than 9.2 EB (2^63 bytes)";
  os << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / 1e9 << " GB (" << bytes << " bytes)";
  return os.str();
}

int64_t host_available_bytes() {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? mul_bytes(pages, page) : 0;
}

void check_host_memory(int64_t needed, const std::string& what) {
  const int64_t available = host_available_bytes();
  SKINNYGEMM_CHECK(available <= 0 || needed <= available, what << " needs " << bytes_text(needed)
                                                              << " of host memory but " << bytes_text(available)
                                                              << " are available");
}

}  // namespace skinnygemm
