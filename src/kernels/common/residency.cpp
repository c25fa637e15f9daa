#include "kernels/common/residency.h"

#include <algorithm>

namespace skinnygemm {

int64_t resident_ctas_per_sm(const DeviceInfo& dev, int threads, int registers, int64_t smem) {
  int64_t per_sm = std::min<int64_t>(dev.max_threads_per_sm / threads, dev.max_blocks_per_sm);
  if (registers > 0) {
    const int regs = (registers + 7) / 8 * 8;
    per_sm = std::min<int64_t>(per_sm, dev.regs_per_sm / (static_cast<int64_t>(regs) * threads));
  }
  if (smem > 0) per_sm = std::min<int64_t>(per_sm, dev.smem_per_sm / smem);
  return std::max<int64_t>(per_sm, 1);
}

}  // namespace skinnygemm
