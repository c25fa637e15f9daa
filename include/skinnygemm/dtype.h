// Element types. Inputs and outputs share one dtype; accumulation is always FP32.
#pragma once

#include <cstddef>
#include <string>

namespace skinnygemm {

// FP32 is known (so that it can be named in errors) but no backend accepts it.
enum class DType { BF16, FP16, FP32 };

const char* dtype_name(DType dtype);       // "bf16", "fp16", "fp32"
DType parse_dtype(const std::string& name);  // throws Error naming the value and the choices
std::size_t dtype_size(DType dtype);
bool dtype_supported(DType dtype);         // BF16 and FP16

}  // namespace skinnygemm
