// Up-front memory checks: a problem too large for the machine fails before anything is allocated, with an
// Error naming the bytes needed and available, not with std::bad_alloc (or a run of minutes). The same approach
// as the step's check (lab/step_cpu.cpp): free physical pages for the host, cudaMemGetInfo for a device.
#pragma once

#include <cstdint>
#include <string>

namespace skinnygemm {

// The byte size of a rows x cols operand with a row stride of stride elements ((rows-1)*stride + cols
// elements), or -1 when that does not fit in 63 bits. 0 when rows or cols is 0.
int64_t operand_bytes(int64_t rows, int64_t cols, int64_t stride, int64_t elem_bytes);

// a + b and a * b of byte counts, saturating at INT64_MAX (a size that large never fits anywhere).
int64_t add_bytes(int64_t a, int64_t b);
int64_t mul_bytes(int64_t a, int64_t b);

// "14.3 GB (14336000000 bytes)".
std::string bytes_text(int64_t bytes);

// Free physical memory of the host (sysconf: available pages x page size); 0 when the system does not say.
int64_t host_available_bytes();

// Throws Error "<what> needs <bytes> of host memory but <bytes> are available" unless needed fits.
void check_host_memory(int64_t needed, const std::string& what);

}  // namespace skinnygemm
