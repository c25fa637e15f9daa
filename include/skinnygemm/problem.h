// One projection y[M,N] = x[M,K] · w[N,K]^T with row-major operands and row strides in elements.
#pragma once

#include <cstdint>
#include <string>

#include "skinnygemm/dtype.h"

namespace skinnygemm {

struct Problem {
  int64_t m = 0;  // tokens
  int64_t n = 0;  // output features (weight rows)
  int64_t k = 0;  // input features
  DType dtype = DType::BF16;
  // Row strides in elements; 0 means packed (ldx = ldw = k, ldy = n).
  int64_t ldx = 0;
  int64_t ldw = 0;
  int64_t ldy = 0;

  int64_t x_stride() const { return ldx ? ldx : k; }
  // The stride x's rows are read with: one token is one row, so at M = 1 the caller's stride moves no address and
  // the packed K stands for it (alignment, the TMA family's tensor map).
  int64_t x_read_stride() const { return m > 1 ? x_stride() : k; }
  int64_t w_stride() const { return ldw ? ldw : k; }
  int64_t y_stride() const { return ldy ? ldy : n; }
  int64_t weight_bytes() const;  // n * k * element size (what one call must stream)
  int64_t total_bytes() const;   // weights + x + y, each once
  bool empty() const { return m == 0 || n == 0; }  // nothing to do
  std::string str() const;  // "bf16 m=1 n=1536 k=7168 ldx=7168 ldw=7168 ldy=1536"
};

bool operator==(const Problem& a, const Problem& b);

// Throws Error for negative sizes, strides smaller than a row and unsupported dtypes.
void validate(const Problem& problem);

// validate() plus null pointers and an output that overlaps an input. Empty problems accept null pointers.
void validate(const Problem& problem, const void* x, const void* w, const void* y);

// The largest power of two (up to 16) that divides the input pointers (x, w) and their row strides in
// bytes. Kernels that use 16-byte loads require 16; the selection routes anything less to a fallback.
// The output is stored element by element, so y does not count; x counts with its read stride (the packed K at M = 1).
int operand_alignment(const Problem& problem, const void* x, const void* w, const void* y);

}  // namespace skinnygemm
