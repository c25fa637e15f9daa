// `skinnygemm check`: run (shape, M) problems on a backend and compare them to the FP64 reference.
// The tolerance is measured, not guessed: 2x the error of a naive FP32-accumulating reference rounded to the
// dtype (the best a correct low-precision kernel can be expected to do) plus one output ulp per element.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <vector>

#include "common.h"
#include "runtime/backends.h"
#include "runtime/half.h"
#include "runtime/memory.h"
#include "lab/models.h"
#include "lab/bench.h"

namespace skinnygemm::cli {
namespace {

struct CheckArgs {
  std::string backend = "auto", shapes, m, dtype = "bf16", config, table;
  uint64_t seed = 1;
};

struct Outcome {
  std::string config, source;
  double rel_error = 0, naive_rel_error = 0, worst = 0;  // worst: max over elements of error / tolerance
  bool pass = false;
  std::string error;  // set when the run threw
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Spacing of the dtype's values at |r| (the smallest subnormal spacing below the normal range).
double ulp(double r, DType dtype) {
  const int mant_bits = dtype == DType::BF16 ? 7 : 10, min_exp = dtype == DType::BF16 ? -126 : -14;
  const int e = r == 0 ? min_exp : std::max(std::ilogb(r), min_exp);
  return std::ldexp(1.0, e - mant_bits);
}

// Uniform values in [-1, 1) rounded to the dtype: never zeros or constants, reproducible from the seed.
void fill_random(std::vector<uint16_t>& v, DType dtype, uint64_t seed) {
  for (auto& e : v) {
    const float f = static_cast<float>(static_cast<double>(splitmix64(seed) >> 40) * 0x1p-23 - 1.0);
    e = float_to_half(dtype, f);
  }
}

// Throws Error with the bytes needed and available unless checking p fits in the backend's memory.
void check_fits(const Problem& p, Backend backend) {
  validate(p);  // sizes that do not even fit in 64 bits are named before they are multiplied below
  if (backend == Backend::Cuda) {  // checked through the benchmark (check_cuda)
    tune::BenchOptions o;
    o.backend = backend;
    o.check = true;
    return tune::check_bench_fits(p, o);
  }
  // check_cpu's x, w, y and naive reference in the dtype, and its FP64 reference.
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  const int64_t halves = add_bytes(add_bytes(mul_bytes(p.m, p.k), mul_bytes(p.n, p.k)), mul_bytes(mul_bytes(p.m, p.n), 2));
  check_host_memory(add_bytes(mul_bytes(halves, e), mul_bytes(mul_bytes(p.m, p.n), sizeof(double))),
                    "checking " + p.str() + " (x, w, y, references)");
}

Outcome check_cpu(const Problem& p, const Options& options, uint64_t seed) {
  std::vector<uint16_t> x(p.m * p.k), w(p.n * p.k), naive(p.m * p.n);
  std::vector<uint16_t> y(p.m * p.n, p.dtype == DType::BF16 ? 0x7fc0 : 0x7e00);  // NaN: unwritten outputs fail
  fill_random(x, p.dtype, seed);
  fill_random(w, p.dtype, seed ^ 0x5bd1e995u);
  Outcome out;
  const Choice choice = gemm(p, x.data(), w.data(), y.data(), options);
  out.config = choice.config.name();
  out.source = source_name(choice.source);
  std::vector<double> ref(p.m * p.n);
  cpu::reference_f64(p, x.data(), w.data(), ref.data());
  cpu::reference_naive(p, x.data(), w.data(), naive.data());
  double naive_max = 0, ref2 = 0, err2 = 0, naive2 = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double dn = half_to_float(p.dtype, naive[i]) - ref[i];
    naive_max = std::max(naive_max, std::fabs(dn));
    naive2 += dn * dn;
    ref2 += ref[i] * ref[i];
  }
  out.pass = true;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(half_to_float(p.dtype, y[i]) - ref[i]);
    const double tol = 2 * naive_max + ulp(std::fabs(ref[i]), p.dtype);
    if (!(err <= tol)) out.pass = false;  // written so that NaN fails
    out.worst = std::max(out.worst, std::isnan(err) ? HUGE_VAL : err / tol);
    err2 += std::isnan(err) ? HUGE_VAL : err * err;
  }
  out.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  out.naive_rel_error = ref2 > 0 ? std::sqrt(naive2 / ref2) : std::sqrt(naive2);
  return out;
}

// The CUDA backend checks through the benchmark's protocol, which owns device memory (the CLI builds
// without CUDA headers) and throws Error when the output differs from the reference.
Outcome check_cuda(const Problem& p, const CheckArgs& args, const Table* table) {
  tune::BenchOptions o;
  o.backend = Backend::Cuda;
  o.table = table;
  o.config = args.config;
  o.samples = 1;
  o.replays = 1;
  o.baselines = false;
  o.check = true;
  const tune::BenchRow row = tune::bench_problem(p, o);
  Outcome out;
  out.config = row.config;
  out.source = row.source;
  out.rel_error = row.rel_error;
  out.pass = row.checked;
  if (!row.checked) out.error = "the benchmark did not check the output";
  return out;
}

int run_check(const CheckArgs& args) {
  const Backend backend = resolve_backend(parse_backend(args.backend));
  const auto shapes = models::parse_shapes(args.shapes);
  const auto ms = models::parse_m_range(args.m);
  const DType dtype = parse_dtype(args.dtype);
  check_config_arg(args.config, backend);
  const std::optional<Table> table = load_table_arg(args.table);
  Options options;
  options.backend = backend;
  options.config = args.config;
  options.table = table ? &*table : nullptr;

  // Every case is checked against the memory there is before the first one runs: a shape too large fails
  // now (exit 2), with the bytes, not as std::bad_alloc after the others.
  for (const auto& shape : shapes)
    for (const int64_t m : ms) check_fits(Problem{m, shape.n, shape.k, dtype}, backend);

  const size_t total = shapes.size() * ms.size();
  size_t index = 0, failures = 0;
  std::cout << "check on the " << backend_name(backend) << " backend (" << device_info(backend).name << "), "
            << total << " cases, " << dtype_name(dtype) << ", seed " << args.seed << "\n";
  for (const auto& shape : shapes) {
    for (const int64_t m : ms) {
      ++index;
      Problem p;
      p.m = m;
      p.n = shape.n;
      p.k = shape.k;
      p.dtype = dtype;
      // A fresh, reproducible seed per case: the same --seed, shape and M give the same data.
      uint64_t state = args.seed ^ (static_cast<uint64_t>(p.n) << 40) ^ (static_cast<uint64_t>(p.k) << 16) ^
                       static_cast<uint64_t>(m);
      const uint64_t seed = splitmix64(state);
      Outcome o;
      try {
        o = backend == Backend::Cpu ? check_cpu(p, options, seed) : check_cuda(p, args, options.table);
      } catch (const Error& e) {
        o.pass = false;
        o.error = e.what();
      }
      std::cout << "[" << index << "/" << total << "] " << (shape.name.empty() ? "" : shape.name + " ")
                << shape.shape() << " m=" << m << " " << dtype_name(dtype) << "  "
                << (!o.config.empty() ? o.config : !args.config.empty() ? args.config : "?") << " (" << (o.source.empty() ? "?" : o.source) << ")";
      if (o.error.empty()) {
        std::cout << "  rel_err " << std::scientific << std::setprecision(2) << o.rel_error;
        if (backend == Backend::Cpu) std::cout << " (naive " << o.naive_rel_error << ")";
        std::cout << std::defaultfloat;
        if (backend == Backend::Cpu) std::cout << "  err/tol " << std::setprecision(3) << o.worst;
      }
      std::cout << "  " << (o.pass ? "PASS" : "FAIL") << "\n";
      if (!o.pass) {
        ++failures;
        if (!o.error.empty()) std::cout << "    " << o.error << "\n";
        std::cout << "    problem: " << p.str() << "\n    repro: skinnygemm check --backend "
                  << backend_name(backend) << " --shapes " << shape.shape() << " --m " << m << " --dtype "
                  << dtype_name(dtype) << " --seed " << args.seed
                  << (args.config.empty() ? "" : " --config " + args.config)
                  << (args.table.empty() ? "" : " --table " + args.table) << "\n";
      }
      std::cout.flush();
    }
  }
  std::cout << (failures ? "FAILED: " : "all passed: ") << total - failures << "/" << total << " cases passed\n";
  return failures ? kExitMismatch : 0;
}

}  // namespace

Command add_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand("check", "Run problems on a backend and compare to the FP64 reference "
                                              "(exit 1 on a mismatch)");
  add_backend_option(sub, &args->backend);
  add_problem_options(sub, &args->shapes, &args->m, &args->dtype, &args->config);
  add_table_option(sub, &args->table);
  sub->add_option("--seed", args->seed, "base seed of the CPU backend's random inputs (each case derives its own; the cuda "
                                        "backend checks with the benchmark's inputs)")
      ->capture_default_str()
      // CLI11 reads "-1" into a uint64_t as 18446744073709551615 without a word.
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            const auto first = value.find_first_not_of(" \t");
            if (first != std::string::npos && value[first] == '-')
              return value + " is negative; expected a whole number from 0 to 18446744073709551615";
            return "";
          },
          "UINT64"));
  return {sub, [args] { return run_check(*args); }};
}

}  // namespace skinnygemm::cli
