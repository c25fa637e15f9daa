#include "skinnygemm/dtype.h"

#include "skinnygemm/error.h"

namespace skinnygemm {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP32: return "fp32";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  if (name == "bf16") return DType::BF16;
  if (name == "fp16") return DType::FP16;
  if (name == "fp32") return DType::FP32;
  SKINNYGEMM_FAIL("unknown dtype '" << name << "'; expected bf16, fp16 or fp32");
}

std::size_t dtype_size(DType dtype) { return dtype == DType::FP32 ? 4 : 2; }

bool dtype_supported(DType dtype) { return dtype == DType::BF16 || dtype == DType::FP16; }

}  // namespace skinnygemm
