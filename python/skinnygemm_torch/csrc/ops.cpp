// PyTorch custom ops over skinnygemm (docs/torch.md).
//
//   torch.ops.skinnygemm.linear(x, w) -> y              y[M,N] = x[M,K] @ w[N,K]^T
//   torch.ops.skinnygemm.fused_linear(x, [w0, w1, ...]) -> [y0, y1, ...]
//
// Kernels: CPU (Backend::Cpu), CUDA (Backend::Cuda on torch's current stream, built only when this file is
// compiled with SKINNYGEMM_TORCH_CUDA, i.e. against a CUDA torch) and Meta (shapes and dtypes only, for fake
// tensors and torch.compile). Nothing here allocates outside torch's allocator or synchronizes, so the CUDA
// kernels can be captured in a CUDA graph as far as the library's gemm is capture-safe.
#include <Python.h>  // first, as Python asks; only for the module init at the end

#include <torch/library.h>
#include <torch/version.h>
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "skinnygemm/skinnygemm.h"

#ifdef SKINNYGEMM_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace {

std::string shape_str(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

std::string strides_str(const at::Tensor& t) {
  std::string s = "(";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.stride(i));
  return s + ")";
}

skinnygemm::DType to_dtype(c10::ScalarType t) {
  return t == at::kBFloat16 ? skinnygemm::DType::BF16 : skinnygemm::DType::FP16;
}

// Checks one (x, w) pair; `what` names the weight in messages ("w" or "ws[i]").
void check_pair(const char* op, const at::Tensor& x, const at::Tensor& w, const std::string& what) {
  TORCH_CHECK(x.dim() == 2, "skinnygemm::", op, ": x must be 2-D [M, K], got ", x.dim(), "-D with shape ",
              shape_str(x));
  TORCH_CHECK(w.dim() == 2, "skinnygemm::", op, ": ", what, " must be 2-D [N, K], got ", w.dim(),
              "-D with shape ", shape_str(w));
  const auto xt = x.scalar_type();
  TORCH_CHECK(xt == at::kBFloat16 || xt == at::kHalf, "skinnygemm::", op,
              ": x must be bfloat16 or float16, got ", xt);
  TORCH_CHECK(w.scalar_type() == xt, "skinnygemm::", op, ": ", what, " has dtype ", w.scalar_type(),
              " but x has dtype ", xt, " (they must match)");
  TORCH_CHECK(w.device() == x.device(), "skinnygemm::", op, ": ", what, " is on ", w.device(),
              " but x is on ", x.device(), " (they must be on the same device)");
  TORCH_CHECK(w.size(1) == x.size(1), "skinnygemm::", op, ": ", what, " has K=", w.size(1), " (shape ",
              shape_str(w), ") but x has K=", x.size(1), " (shape ", shape_str(x), ")");
  const int64_t m = x.size(0), n = w.size(0), k = x.size(1);
  if (m > 0 && k > 1)
    TORCH_CHECK(x.stride(1) == 1, "skinnygemm::", op, ": x must have unit stride along K, got strides ",
                strides_str(x), " for shape ", shape_str(x), " (call .contiguous())");
  if (m > 1)
    TORCH_CHECK(x.stride(0) >= k, "skinnygemm::", op, ": x rows overlap: stride(0)=", x.stride(0),
                " is smaller than K=", k, " (call .contiguous())");
  if (n > 0 && k > 1)
    TORCH_CHECK(w.stride(1) == 1, "skinnygemm::", op, ": ", what, " must have contiguous rows (stride(1) == 1), "
                "got strides ", strides_str(w), " for shape ", shape_str(w), " (call .contiguous())");
  if (n > 1)
    TORCH_CHECK(w.stride(0) >= k, "skinnygemm::", op, ": ", what, " rows overlap: stride(0)=", w.stride(0),
                " is smaller than K=", k, " (call .contiguous())");
}

skinnygemm::Problem problem_for(const at::Tensor& x, const at::Tensor& w) {
  skinnygemm::Problem p;
  p.m = x.size(0);
  p.n = w.size(0);
  p.k = x.size(1);
  p.dtype = to_dtype(x.scalar_type());
  p.ldx = p.m > 1 ? x.stride(0) : 0;
  p.ldw = p.n > 1 ? w.stride(0) : 0;
  p.ldy = 0;
  return p;
}

// Runs one gemm into a new [M, N] tensor, turning skinnygemm::Error into c10::Error with its message.
at::Tensor run_one(const char* op, const at::Tensor& x, const at::Tensor& w, const skinnygemm::Options& o) {
  at::Tensor y = at::empty({x.size(0), w.size(0)}, x.options());
  const skinnygemm::Problem p = problem_for(x, w);
  if (p.empty()) return y;
  if (p.k == 0) return y.zero_();  // x and w hold no elements (their data may be null): y = 0
  try {
    skinnygemm::gemm(p, x.data_ptr(), w.data_ptr(), y.data_ptr(), o);
  } catch (const skinnygemm::Error& e) {
    TORCH_CHECK(false, "skinnygemm::", op, " (", p.str(), ") failed: ", e.what());
  }
  return y;
}

skinnygemm::Options options_for(const at::Tensor& x) {
  skinnygemm::Options o;
#ifdef SKINNYGEMM_TORCH_CUDA
  if (x.is_cuda()) {
    o.backend = skinnygemm::Backend::Cuda;
    o.stream = static_cast<void*>(at::cuda::getCurrentCUDAStream(x.device().index()).stream());
    return o;
  }
#endif
  TORCH_CHECK(x.is_cpu(), "skinnygemm: unsupported device ", x.device());
  o.backend = skinnygemm::Backend::Cpu;
  return o;
}

at::Tensor linear_impl(const at::Tensor& x, const at::Tensor& w) {
  check_pair("linear", x, w, "w");
#ifdef SKINNYGEMM_TORCH_CUDA
  const c10::OptionalDeviceGuard guard(x.device());  // the library runs on the current device
#endif
  return run_one("linear", x, w, options_for(x));
}

std::vector<at::Tensor> fused_linear_impl(const at::Tensor& x, at::TensorList ws) {
  TORCH_CHECK(!ws.empty(), "skinnygemm::fused_linear: ws is empty (give at least one weight)");
  for (size_t i = 0; i < ws.size(); ++i) check_pair("fused_linear", x, ws[i], "ws[" + std::to_string(i) + "]");
#ifdef SKINNYGEMM_TORCH_CUDA
  const c10::OptionalDeviceGuard guard(x.device());
#endif
  // One gemm per weight, in order, on one stream (see docs/torch.md for why not FusedProjection here).
  const skinnygemm::Options o = options_for(x);
  std::vector<at::Tensor> out;
  out.reserve(ws.size());
  for (const at::Tensor& w : ws) out.push_back(run_one("fused_linear", x, w, o));
  return out;
}

// Meta (fake) kernels: dtype, device, rank and K only, with symbolic sizes so that torch.compile's dynamic
// shapes go through. The strides are checked by the real kernels.
void check_pair_meta(const char* op, const at::Tensor& x, const at::Tensor& w, const std::string& what) {
  TORCH_CHECK(x.dim() == 2, "skinnygemm::", op, ": x must be 2-D [M, K], got ", x.dim(), "-D");
  TORCH_CHECK(w.dim() == 2, "skinnygemm::", op, ": ", what, " must be 2-D [N, K], got ", w.dim(), "-D");
  const auto xt = x.scalar_type();
  TORCH_CHECK(xt == at::kBFloat16 || xt == at::kHalf, "skinnygemm::", op,
              ": x must be bfloat16 or float16, got ", xt);
  TORCH_CHECK(w.scalar_type() == xt, "skinnygemm::", op, ": ", what, " has dtype ", w.scalar_type(),
              " but x has dtype ", xt, " (they must match)");
  TORCH_CHECK(w.device() == x.device(), "skinnygemm::", op, ": ", what, " is on ", w.device(),
              " but x is on ", x.device(), " (they must be on the same device)");
  TORCH_CHECK(w.sym_size(1) == x.sym_size(1), "skinnygemm::", op, ": ", what, " has K=", w.sym_size(1),
              " but x has K=", x.sym_size(1));
}

at::Tensor linear_meta(const at::Tensor& x, const at::Tensor& w) {
  check_pair_meta("linear", x, w, "w");
  return at::empty_symint({x.sym_size(0), w.sym_size(0)}, x.options());
}

std::vector<at::Tensor> fused_linear_meta(const at::Tensor& x, at::TensorList ws) {
  TORCH_CHECK(!ws.empty(), "skinnygemm::fused_linear: ws is empty (give at least one weight)");
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < ws.size(); ++i) {
    check_pair_meta("fused_linear", x, ws[i], "ws[" + std::to_string(i) + "]");
    out.push_back(at::empty_symint({x.sym_size(0), ws[i].sym_size(0)}, x.options()));
  }
  return out;
}

}  // namespace

TORCH_LIBRARY(skinnygemm, m) {
  m.def("linear(Tensor x, Tensor w) -> Tensor");
  m.def("fused_linear(Tensor x, Tensor[] ws) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(skinnygemm, CPU, m) {
  m.impl("linear", &linear_impl);
  m.impl("fused_linear", &fused_linear_impl);
}

#ifdef SKINNYGEMM_TORCH_CUDA
TORCH_LIBRARY_IMPL(skinnygemm, CUDA, m) {
  m.impl("linear", &linear_impl);
  m.impl("fused_linear", &fused_linear_impl);
}
#endif

TORCH_LIBRARY_IMPL(skinnygemm, Meta, m) {
  m.impl("linear", &linear_meta);
  m.impl("fused_linear", &fused_linear_meta);
}

#if TORCH_VERSION_MAJOR < 2
// torch 1.x has no autograd fallback for the Meta key (2.x has one for every backend).
TORCH_LIBRARY_IMPL(skinnygemm, AutogradMeta, m) {
  m.impl("linear", torch::CppFunction::makeFallthrough());
  m.impl("fused_linear", torch::CppFunction::makeFallthrough());
}
#endif

// A Python module, so that `import skinnygemm_torch._C` loads the library and registers the ops.
extern "C" {
static struct PyModuleDef skinnygemm_torch_module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr,
                                                    nullptr, nullptr, nullptr, nullptr};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&skinnygemm_torch_module); }
}
