// Problem validation: every invalid problem is an Error whose message names the offending value, and
// operand_alignment reports what 16-byte kernels need to know.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "skinnygemm/error.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

Problem make(int64_t m, int64_t n, int64_t k, DType dtype = DType::BF16) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype = dtype;
  return p;
}

using test::expect_error;

TEST(ProblemValidate, NegativeSizes) {
  expect_error([] { validate(make(-1, 8, 8)); }, {"M=-1"});
  expect_error([] { validate(make(1, -7, 8)); }, {"N=-7"});
  expect_error([] { validate(make(1, 8, -3)); }, {"K=-3"});
}

TEST(ProblemValidate, StridesSmallerThanARow) {
  Problem p = make(2, 16, 64);
  p.ldx = 63;
  expect_error([&] { validate(p); }, {"ldx=63", "K=64"});
  p = make(2, 16, 64);
  p.ldw = 32;
  expect_error([&] { validate(p); }, {"ldw=32", "K=64"});
  p = make(2, 16, 64);
  p.ldy = 15;
  expect_error([&] { validate(p); }, {"ldy=15", "N=16"});
  p = make(2, 16, 64);
  p.ldx = -64;
  expect_error([&] { validate(p); }, {"ldx=-64"});
}

TEST(ProblemValidate, UnsupportedDtype) {
  expect_error([] { validate(make(1, 8, 8, DType::FP32)); }, {"fp32", "not supported"});
}

TEST(ProblemValidate, ValidProblemsPass) {
  Problem p = make(64, 1536, 7168);
  EXPECT_NO_THROW(validate(p));
  p.ldx = 8000;
  p.ldw = 7168;
  p.ldy = 2048;
  EXPECT_NO_THROW(validate(p));
  EXPECT_EQ(p.x_stride(), 8000);
  EXPECT_EQ(make(1, 2, 3).y_stride(), 2);
  EXPECT_EQ(make(4, 1536, 7168).weight_bytes(), int64_t{1536} * 7168 * 2);
  EXPECT_NO_THROW(validate(make(1, 8, 8, DType::FP16)));
}

TEST(ProblemValidate, NullPointers) {
  const Problem p = make(2, 4, 8);
  std::vector<uint16_t> x(16), w(32), y(8);
  expect_error([&] { validate(p, nullptr, w.data(), y.data()); }, {"x is null", p.str()});
  expect_error([&] { validate(p, x.data(), nullptr, y.data()); }, {"w is null", p.str()});
  expect_error([&] { validate(p, x.data(), w.data(), nullptr); }, {"y is null", p.str()});
  EXPECT_NO_THROW(validate(p, x.data(), w.data(), y.data()));
}

// Elements are loaded and stored whole: an odd byte address is bad input (on the GPU a 2-byte store there faults
// and breaks the context; session 36's audit found it accepted).
TEST(ProblemValidate, PointersNotAlignedToAnElement) {
  const Problem p = make(2, 4, 8);
  alignas(16) static char buf[256];
  char *x = buf, *w = buf + 64, *y = buf + 160;
  EXPECT_NO_THROW(validate(p, x, w, y));
  expect_error([&] { validate(p, x + 1, w, y); }, {"x=", "not aligned to its 2-byte elements", p.str()});
  expect_error([&] { validate(p, x, w + 1, y); }, {"w=", "not aligned to its 2-byte elements"});
  expect_error([&] { validate(p, x, w, y + 1); }, {"y=", "not aligned to its 2-byte elements"});
  EXPECT_NO_THROW(validate(p, x + 2, w + 2, y + 2));  // 2-byte aligned: runs (the fallback where kernels need 16)
  expect_error([&] { validate(make(2, 4, 0), nullptr, nullptr, y + 1); }, {"y=", "not aligned"});
}

TEST(ProblemValidate, EmptyProblemsAcceptNull) {
  EXPECT_NO_THROW(validate(make(0, 4, 8), nullptr, nullptr, nullptr));
  EXPECT_NO_THROW(validate(make(2, 0, 8), nullptr, nullptr, nullptr));
  // K = 0 writes zeros to y but reads neither x nor w.
  std::vector<uint16_t> y(8);
  EXPECT_NO_THROW(validate(make(2, 4, 0), nullptr, nullptr, y.data()));
  expect_error([] { validate(make(2, 4, 0), nullptr, nullptr, nullptr); }, {"y is null"});
  // An empty problem is still checked for sizes.
  expect_error([] { validate(make(0, -1, 8), nullptr, nullptr, nullptr); }, {"N=-1"});
}

// Issue 19: M = N = 2^40 wrapped int64 in the spans and allocations and ended in std::bad_alloc; validate now
// names the operand and its bytes.
TEST(ProblemValidate, SizesBeyondSixtyFourBitsAreNamed) {
  const int64_t huge = int64_t{1} << 40;
  expect_error([&] { validate(make(huge, huge, 7168)); }, {"y of", "m=1099511627776", "bytes", "2^63"});
  expect_error([&] { validate(make(1, int64_t{1} << 62, 7168)); }, {"w of", "bytes"});
  EXPECT_NO_THROW(validate(make(64, 1 << 20, 7168)));  // large but representable
}

// The README quotes this message as its example of an Error; K = 7170 is not one (it runs, via the fallback).
TEST(ProblemValidate, TheReadmesExampleMessage) {
  Problem p = make(1, 1536, 7168);
  p.ldw = 7000;
  expect_error([&] { validate(p); }, {"ldw=7000 is smaller than a row of w (K=7168)"});
  EXPECT_NO_THROW(validate(make(1, 1536, 7170)));
}

TEST(ProblemValidate, OutputOverlappingAnInput) {
  const Problem p = make(2, 4, 8);  // x: 16 elements, w: 32, y: 8
  std::vector<uint16_t> buf(128);
  uint16_t* x = buf.data();
  uint16_t* w = buf.data() + 16;
  // y over the last element of x.
  expect_error([&] { validate(p, x, w, x + 15); }, {"overlaps input x", p.str()});
  // y starting inside w.
  expect_error([&] { validate(p, x, w, w + 31); }, {"overlaps weights w"});
  // y right after w touches but does not overlap.
  EXPECT_NO_THROW(validate(p, x, w, w + 32));
  // y right before x (ends where x begins).
  EXPECT_NO_THROW(validate(p, buf.data() + 8, buf.data() + 24, buf.data()));
  // Strided rows: with ldy = 40, row 1 of y (elements 80..83) lands inside w (64..95) though row 0 does not.
  Problem s = p;
  s.ldy = 40;
  expect_error([&] { validate(s, x, buf.data() + 64, buf.data() + 40); }, {"overlaps weights w"});
}

TEST(ProblemAlignment, Cases) {
  alignas(64) static uint16_t buf[4096];
  Problem p = make(4, 64, 128);
  EXPECT_EQ(operand_alignment(p, buf, buf + 1024, buf + 2048), 16);
  // A pointer off by one element (2 bytes) or four (8 bytes).
  EXPECT_EQ(operand_alignment(p, buf + 1, buf + 1024, buf + 2048), 2);
  EXPECT_EQ(operand_alignment(p, buf, buf + 1028, buf + 2048), 8);
  // The output does not count: it is stored element by element.
  EXPECT_EQ(operand_alignment(p, buf, buf + 1024, buf + 2050), 16);
  p.ldy = 65;
  EXPECT_EQ(operand_alignment(p, buf, buf + 1024, buf + 2048), 16);
  p.ldy = 0;
  // A stride that is not a multiple of 8 elements breaks 16-byte rows even with aligned bases.
  p.ldx = 130;  // 260 bytes: divisible by 4
  EXPECT_EQ(operand_alignment(p, buf, buf + 1024, buf + 2048), 4);
  p.ldx = 0;
  p.ldw = 129;  // 258 bytes
  EXPECT_EQ(operand_alignment(p, buf, buf + 1024, buf + 2048), 2);
  // Packed strides come from K and N: K = 36 -> 72-byte rows, 8-byte aligned.
  EXPECT_EQ(operand_alignment(make(2, 64, 36), buf, buf + 1024, buf + 2048), 8);
  // Never more than 16, however aligned everything is.
  EXPECT_EQ(operand_alignment(make(1, 4096, 4096), buf, buf, buf), 16);
  // One token reads one row: x's stride does not count at M = 1, its pointer does.
  Problem one = make(1, 64, 128);
  one.ldx = 131;
  EXPECT_EQ(operand_alignment(one, buf, buf + 1024, buf + 2048), 16);
  EXPECT_EQ(operand_alignment(one, buf + 1, buf + 1024, buf + 2048), 2);
  one.m = 2;
  EXPECT_EQ(operand_alignment(one, buf, buf + 1024, buf + 2048), 2);
}

TEST(ProblemStr, NamesEveryField) {
  Problem p = make(3, 1536, 7168, DType::FP16);
  p.ldy = 2048;
  EXPECT_EQ(p.str(), "fp16 m=3 n=1536 k=7168 ldx=7168 ldw=7168 ldy=2048");
  Problem q = p;
  q.ldy = 0;
  EXPECT_FALSE(p == q);
  q.ldy = 2048;
  EXPECT_TRUE(p == q);
  q.ldx = 7168;  // explicit packed stride equals the default
  EXPECT_TRUE(p == q);
}

}  // namespace
}  // namespace skinnygemm
