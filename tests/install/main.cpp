// y = x w^T on the CPU backend through the installed package: 3 tokens, 5 outputs, K = 16, all ones.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "skinnygemm/skinnygemm.h"

int main() {
  const skinnygemm::Problem p{3, 5, 16, skinnygemm::DType::BF16};
  std::vector<uint16_t> x(3 * 16, 0x3f80), w(5 * 16, 0x3f80), y(3 * 5, 0);  // bf16 1.0
  skinnygemm::Options o;
  o.backend = skinnygemm::Backend::Cpu;
  const skinnygemm::Choice c = skinnygemm::gemm(p, x.data(), w.data(), y.data(), o);
  for (uint16_t v : y)
    if (v != 0x4180) {  // bf16 16.0
      std::printf("wrong output 0x%04x\n", v);
      return 1;
    }
  std::printf("skinnygemm %s from the installed package: ok (%s)\n", skinnygemm::version(), c.config.name().c_str());
  return 0;
}
