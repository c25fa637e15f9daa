"""Tests of skinnygemm_torch (python/run_tests.sh builds it and runs these; docs/torch.md).

CPU tests run everywhere torch imports (torch 1.13 CPU-only included); the GPU tests need torch.cuda and a
library built with CUDA, and torch.compile needs torch >= 2.1.
"""
import math
import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import skinnygemm_torch as sg

DTYPES = [torch.bfloat16, torch.float16]
# The library's own tolerance (lab/bench.cpp): relative Frobenius error vs an FP32 reference.
REL_TOL = {torch.bfloat16: 8e-3, torch.float16: 2e-3}
TORCH_VERSION = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])


def _cuda_skip_reason():
    """Why the GPU tests cannot run here, or None. SKINNYGEMM_TORCH_REQUIRE_GPU=1 (scripts/gpu-check) turns
    every such reason into a failure instead of a skip."""
    if not torch.cuda.is_available():
        why = "needs torch.cuda (a GPU)"
    else:
        why = None
        try:
            x = torch.zeros(1, 8, dtype=torch.bfloat16, device="cuda")
            torch.ops.skinnygemm.linear(x, x)
        except (RuntimeError, NotImplementedError) as e:  # library or extension built without CUDA
            why = f"the CUDA op cannot run: {str(e).splitlines()[0]}"
    if why and os.environ.get("SKINNYGEMM_TORCH_REQUIRE_GPU") == "1":
        raise RuntimeError(f"SKINNYGEMM_TORCH_REQUIRE_GPU=1 but {why}")
    return why


CUDA_SKIP = _cuda_skip_reason()
cuda = pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))


def randn(*shape, dtype, device="cpu", k=None):
    """Values scaled so that dot products over k are O(1)."""
    scale = 1.0 / math.sqrt(math.sqrt(k)) if k else 1.0
    return (torch.randn(*shape, device=device) * scale).to(dtype)


def reference(x, w, b=None):
    """F.linear in FP32, rounded to x's dtype (torch 1.13 has no CPU fp16 matmul)."""
    y = F.linear(x.float(), w.float(), None if b is None else b.float())
    return y.to(x.dtype)


def assert_close(y, ref):
    assert y.shape == ref.shape and y.dtype == ref.dtype and y.device == ref.device
    num = (y.float() - ref.float()).norm().item()
    den = max(ref.float().norm().item(), 1e-6)
    assert num / den <= REL_TOL[y.dtype], f"relative error {num / den:.3g} > {REL_TOL[y.dtype]}"
    # and elementwise: a few output ulps of the largest value
    eps = torch.finfo(y.dtype).eps
    assert (y.float() - ref.float()).abs().max().item() <= 4 * eps * max(ref.float().abs().max().item(), 1.0)


# ---- CPU ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 2, 3, 7, 8, 16, 33, 64])
@pytest.mark.parametrize("n,k", [(40, 64), (144, 256), (96, 520)])
def test_linear_cpu(dtype, m, n, k):
    torch.manual_seed(m * 1000 + n + k)
    x, w = randn(m, k, dtype=dtype, k=k), randn(n, k, dtype=dtype, k=k)
    assert_close(sg.linear(x, w), reference(x, w))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 5, 64])
def test_linear_cpu_strided(dtype, m):
    k, n = 128, 72
    torch.manual_seed(m)
    big = randn(m, k + 40, dtype=dtype, k=k)
    x = big[:, 8:8 + k]  # row stride k + 40, offset 8 elements
    assert x.stride() == (k + 40, 1) and (m == 1 or not x.is_contiguous())
    wbig = randn(n, k + 16, dtype=dtype, k=k)
    w = wbig[:, :k]  # rows contiguous, row stride k + 16
    assert_close(sg.linear(x, w), reference(x, w))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_linear_cpu(dtype):
    k = 256
    x = randn(4, k, dtype=dtype, k=k)
    ws = [randn(n, k, dtype=dtype, k=k) for n in (64, 16, 144)]
    ys = sg.fused_linear(x, ws)
    assert len(ys) == 3
    for y, w in zip(ys, ws):
        assert_close(y, reference(x, w))


def test_degenerate_cpu():
    w = randn(40, 64, dtype=torch.bfloat16)
    y = sg.linear(torch.empty(0, 64, dtype=torch.bfloat16), w)
    assert y.shape == (0, 40)
    assert sg.linear(randn(3, 64, dtype=torch.bfloat16), w[:0]).shape == (3, 0)
    z = sg.linear(torch.empty(2, 0, dtype=torch.half), torch.empty(3, 0, dtype=torch.half))
    assert z.shape == (2, 3) and bool((z == 0).all())
    ys = sg.fused_linear(torch.empty(0, 64, dtype=torch.bfloat16), [w, w[:8]])
    assert [tuple(y.shape) for y in ys] == [(0, 40), (0, 8)]


def test_meta_and_fake():
    x = torch.empty(5, 64, dtype=torch.half, device="meta")
    w = torch.empty(7, 64, dtype=torch.half, device="meta")
    y = torch.ops.skinnygemm.linear(x, w)
    assert y.device.type == "meta" and y.shape == (5, 7) and y.dtype == torch.half
    ys = torch.ops.skinnygemm.fused_linear(x, [w, w[:3]])
    assert [tuple(t.shape) for t in ys] == [(5, 7), (5, 3)]
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        f = torch.ops.skinnygemm.linear(torch.empty(3, 64, dtype=torch.bfloat16), torch.empty(9, 64, dtype=torch.bfloat16))
        assert f.shape == (3, 9) and f.dtype == torch.bfloat16 and f.device.type == "cpu"


@pytest.mark.parametrize("make,match", [
    (lambda: (torch.randn(2, 64), torch.randn(8, 64)), "Float"),                                    # fp32
    (lambda: (randn(2, 64, dtype=torch.bfloat16), randn(8, 64, dtype=torch.half)), "Half"),          # mixed
    (lambda: (randn(2, 64, dtype=torch.bfloat16), randn(8, 32, dtype=torch.bfloat16)), "K=32"),      # K
    (lambda: (randn(2, 3, 64, dtype=torch.bfloat16), randn(8, 64, dtype=torch.bfloat16)), "3-D"),    # rank
    (lambda: (randn(2, 64, dtype=torch.bfloat16), randn(64, 8, dtype=torch.bfloat16).t()), "contiguous rows"),  # w
    (lambda: (randn(64, 2, dtype=torch.bfloat16).t(), randn(8, 64, dtype=torch.bfloat16)), "unit stride"),  # x
    (lambda: (randn(2, 64, dtype=torch.bfloat16), randn(8, 64, dtype=torch.bfloat16).to("meta")), "meta"),  # device
])
def test_errors(make, match):
    x, w = make()
    with pytest.raises(RuntimeError, match=match):
        sg.linear(x, w)


def test_fused_linear_errors():
    x = randn(2, 64, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match=r"ws\[1\] has K=32"):
        sg.fused_linear(x, [randn(8, 64, dtype=torch.bfloat16), randn(8, 32, dtype=torch.bfloat16)])
    with pytest.raises(RuntimeError, match="empty"):
        sg.fused_linear(x, [])


def test_library_error_is_runtime_error(monkeypatch):
    # An error raised inside the library (skinnygemm::Error) reaches Python as RuntimeError with its message.
    monkeypatch.setenv("SKINNYGEMM_CPU_ISA", "bogus")
    with pytest.raises(RuntimeError, match="SKINNYGEMM_CPU_ISA='bogus'"):
        sg.linear(randn(2, 64, dtype=torch.bfloat16), randn(8, 64, dtype=torch.bfloat16))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [False, True])
def test_skinny_linear_cpu(dtype, bias):
    torch.manual_seed(1)
    lin = nn.Linear(128, 48, bias=bias).to(dtype)
    sk = SkinnyLinearFrom(lin)
    for shape in [(2, 3, 128), (1, 1, 128), (4, 16, 128), (128,)]:
        x = randn(*shape, dtype=dtype, k=128)
        y = sk(x)
        assert y.shape == shape[:-1] + (48,)
        assert_close(y.reshape(-1, 48), reference(x.reshape(-1, 128), lin.weight, lin.bias))
    # M > max_m falls back to F.linear (prefill); compare in FP32 where CPU fp16 matmul is missing
    x = randn(3, 30, 128, dtype=dtype, k=128)
    if dtype == torch.bfloat16:
        assert_close(sk(x).reshape(-1, 48), reference(x.reshape(-1, 128), lin.weight, lin.bias))


def SkinnyLinearFrom(lin):
    sk = sg.SkinnyLinear.from_linear(lin)
    assert sk.weight is lin.weight and sk.bias is lin.bias
    return sk


def test_skinny_linear_constructor():
    sk = sg.SkinnyLinear(64, 24, bias=True, dtype=torch.half)
    assert sk.weight.shape == (24, 64) and sk.bias.shape == (24,) and not sk.weight.requires_grad
    with pytest.raises(ValueError, match="float32"):
        sg.SkinnyLinear(64, 24, dtype=torch.float32)


@pytest.mark.parametrize("concat", [True, False])
def test_fused_linear_module_cpu(concat):
    dtype, k = torch.bfloat16, 256
    lins = [nn.Linear(k, n, bias=b).to(dtype) for n, b in ((64, False), (16, True), (144, False))]
    fl = sg.FusedLinear.from_linears(lins, concat=concat)
    x = randn(2, 3, k, dtype=dtype, k=k)
    ys = fl(x)
    assert isinstance(ys, tuple) and len(ys) == 3
    for y, lin in zip(ys, lins):
        assert y.shape == (2, 3, lin.out_features)
        assert_close(y.reshape(-1, lin.out_features), reference(x.reshape(-1, k), lin.weight, lin.bias))


def test_swap_linears():
    model = nn.Sequential(
        nn.Linear(64, 128, dtype=torch.bfloat16),            # 0: swapped
        nn.ReLU(),
        nn.Sequential(nn.Linear(128, 64, bias=False, dtype=torch.bfloat16),  # 2.0: swapped
                      nn.Linear(64, 60, dtype=torch.float32)),               # 2.1: fp32
        nn.Linear(60, 64, dtype=torch.bfloat16),             # 3: K=60
        nn.Linear(64, 8, dtype=torch.float16),               # 4: below min_features
        nn.Linear(64, 64, dtype=torch.float16),              # 5: filtered out
    )
    x = randn(3, 64, dtype=torch.bfloat16, k=64)
    before = model[0](x)
    report = sg.swap_linears(model, min_features=16, filter=lambda name, layer: name != "5")
    assert [n for n, _ in report.swapped] == ["0", "2.0"]
    left = dict(report.left)
    assert set(left) == {"2.1", "3", "4", "5"}
    assert "float32" in left["2.1"]
    assert "K=in_features=60" in left["3"] and "multiple of 8" in left["3"]
    assert "min_features=16" in left["4"]
    assert "filter" in left["5"]
    assert isinstance(model[0], sg.SkinnyLinear) and isinstance(model[2][0], sg.SkinnyLinear)
    assert type(model[3]) is nn.Linear
    assert_close(model[0](x), before)
    assert "swapped 2, left 4" in str(report)


@pytest.mark.skipif(TORCH_VERSION < (2, 1), reason="torch.compile(fullgraph=True) needs torch >= 2.1")
def test_torch_compile_fullgraph_cpu():
    torch.manual_seed(0)
    k, dtype = 256, torch.bfloat16
    with torch.no_grad():
        lin = nn.Linear(k, 64, dtype=dtype)
        block = nn.Sequential(sg.SkinnyLinear.from_linear(lin), nn.ReLU())
        fl = sg.FusedLinear([randn(n, k, dtype=dtype, k=k) for n in (32, 48)])
        f = torch.compile(lambda x: (block(x),) + fl(x), fullgraph=True)
        for m in (1, 3, 8):
            x = randn(2, m, k, dtype=dtype, k=k)
            for got, want in zip(f(x), (block(x),) + fl(x)):
                assert_close(got, want)


# ---- GPU (torch.cuda and a library built with CUDA) -------------------------------------------------------
KIMI_K3 = [(1536, 7168), (2112, 7168), (7168, 1536), (144, 7168)]  # (N, K)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 4, 16, 64])
@pytest.mark.parametrize("n,k", KIMI_K3)
def test_linear_cuda_kimi(dtype, m, n, k):
    torch.manual_seed(m + n)
    x = randn(m, k, dtype=dtype, device="cuda", k=k)
    w = randn(n, k, dtype=dtype, device="cuda", k=k)
    y = sg.linear(x, w)
    assert_close(y, reference(x, w))
    assert_close(y, F.linear(x, w))  # torch's own (cuBLAS) result, same tolerance
    xs = randn(m, k + 64, dtype=dtype, device="cuda", k=k)[:, 64:]  # strided input, 128-byte offset
    assert_close(sg.linear(xs, w), reference(xs, w))


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_cuda_all_m(dtype):
    n, k = 2112, 7168
    w = randn(n, k, dtype=dtype, device="cuda", k=k)
    for m in range(1, 65):
        x = randn(m, k, dtype=dtype, device="cuda", k=k)
        assert_close(sg.linear(x, w), reference(x, w))


@cuda
def test_fused_linear_cuda():
    k, dtype = 7168, torch.bfloat16
    x = randn(4, k, dtype=dtype, device="cuda", k=k)
    ws = [randn(n, k, dtype=dtype, device="cuda", k=k) for n in (1536, 576, 144)]
    for y, w in zip(sg.fused_linear(x, ws), ws):
        assert_close(y, reference(x, w))
    fl = sg.FusedLinear(ws)
    for y, w in zip(fl(x), ws):
        assert_close(y, reference(x, w))


@cuda
def test_cuda_errors_and_stream():
    x = randn(2, 64, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(RuntimeError, match="same device"):
        sg.linear(x, randn(8, 64, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError, match="same device"):
        sg.linear(x.cpu(), randn(8, 64, dtype=torch.bfloat16, device="cuda"))
    # launched on torch's current stream
    k, n = 7168, 1536
    x = randn(16, k, dtype=torch.bfloat16, device="cuda", k=k)
    w = randn(n, k, dtype=torch.bfloat16, device="cuda", k=k)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = sg.linear(x, w)
    torch.cuda.current_stream().wait_stream(s)
    assert_close(y, reference(x, w))


class Block(nn.Module):
    """A module using both ops: q/kv projections of one input, then an output projection."""

    def __init__(self, dtype, device):
        super().__init__()
        self.qkv = sg.FusedLinear([randn(n, 7168, dtype=dtype, device=device, k=7168) for n in (1536, 576)])
        self.o = sg.SkinnyLinear(1536, 7168, bias=True, device=device, dtype=dtype)
        self.o.weight.copy_(randn(7168, 1536, dtype=dtype, device=device, k=1536))
        self.g = sg.SkinnyLinear(7168, 144, bias=False, device=device, dtype=dtype)
        self.g.weight.copy_(randn(144, 7168, dtype=dtype, device=device, k=7168))

    def forward(self, x):
        q, kv = self.qkv(x)
        return self.o(q) + x, self.g(x), kv

    def reference(self, x):
        w_q, w_kv = self.qkv.weight.split(self.qkv.out_features)
        q = reference(x, w_q)
        return (reference(q, self.o.weight, self.o.bias) + x, reference(x, self.g.weight), reference(x, w_kv))


@cuda
@pytest.mark.skipif(TORCH_VERSION < (2, 1), reason="torch.compile(fullgraph=True) needs torch >= 2.1")
@pytest.mark.parametrize("m", [1, 4, 16, 64])
def test_torch_compile_fullgraph(m):
    torch.manual_seed(0)
    with torch.no_grad():
        block = Block(torch.bfloat16, "cuda")
        compiled = torch.compile(block, fullgraph=True)
        x = randn(m, 7168, dtype=torch.bfloat16, device="cuda", k=7168)
        for got, want in zip(compiled(x), block(x)):
            assert_close(got, want)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_graph_capture_replay(dtype):
    torch.manual_seed(0)
    with torch.no_grad():
        block = Block(dtype, "cuda")
        static_x = randn(4, 7168, dtype=dtype, device="cuda", k=7168)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm up (selection, caches) outside the capture
            for _ in range(2):
                block(static_x)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = block(static_x)
        for _ in range(3):
            static_x.copy_(randn(4, 7168, dtype=dtype, device="cuda", k=7168))
            graph.replay()
            torch.cuda.synchronize()
            for got, want in zip(static_out, block.reference(static_x)):
                assert_close(got, want)
