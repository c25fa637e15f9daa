"""PyTorch ops and modules over skinnygemm: decode-time projections y[M,N] = x[M,K] @ w[N,K]^T (docs/torch.md).

    import skinnygemm_torch as sg
    y = sg.linear(x, w)                        # torch.ops.skinnygemm.linear
    ys = sg.fused_linear(x, [w_q, w_kv])       # torch.ops.skinnygemm.fused_linear
    report = sg.swap_linears(model, min_features=256)
    print(report)

The ops run on CPU tensors (the library's CPU backend) and CUDA tensors (its CUDA backend, on torch's current
stream), and have Meta kernels for fake tensors / torch.compile. They are inference only: no autograd formula.
"""
import dataclasses
import glob
import os
from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["linear", "fused_linear", "SkinnyLinear", "FusedLinear", "swap_linears", "SwapReport", "library_path"]

SUPPORTED_DTYPES = (torch.bfloat16, torch.float16)


def _load() -> str:
    """Loads the extension (which registers torch.ops.skinnygemm.*) and returns its path."""
    env = os.environ.get("SKINNYGEMM_TORCH_LIB")
    if env:
        torch.ops.load_library(env)
        return env
    try:
        from . import _C  # built by setup.py next to this file (installed, or `setup.py build --build-lib`)
        return _C.__file__
    except ImportError as e:
        here = os.path.dirname(os.path.abspath(__file__))
        found = sorted(glob.glob(os.path.join(here, "_C*.so")))
        if found:  # present but failed to load: say why
            raise ImportError(f"skinnygemm_torch: cannot load {found[0]}: {e}") from e
        raise ImportError(
            "skinnygemm_torch: the extension _C is not built next to this package; build it with "
            "`cd python && python setup.py build --build-lib DIR` and put DIR on PYTHONPATH, or set "
            f"SKINNYGEMM_TORCH_LIB to the built .so (docs/torch.md). ({e})") from e


library_path = _load()


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """y[M,N] = x[M,K] @ w[N,K]^T. x: 2-D with stride(1) == 1 (any row stride); w: rows contiguous."""
    return torch.ops.skinnygemm.linear(x, w)


def fused_linear(x: torch.Tensor, ws: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    """[x @ w.T for w in ws]: one gemm per weight, in order, on one stream."""
    return torch.ops.skinnygemm.fused_linear(x, list(ws))


def _flatten(x: torch.Tensor, k: int) -> torch.Tensor:
    x2 = x.reshape(-1, k)
    if k > 1 and x2.stride(1) != 1 or x2.size(0) > 1 and x2.stride(0) < k:
        x2 = x2.contiguous()
    return x2


class SkinnyLinear(nn.Module):
    """Drop-in for nn.Linear with bf16/fp16 weights: y = x @ weight.T (+ bias), x of shape [..., in_features].

    The leading dims are flattened into M tokens. M <= max_m (default 64, the decode range the library is
    tuned for) runs torch.ops.skinnygemm.linear; larger M (prefill) runs F.linear. The bias, when there is one,
    is added afterwards with torch (a separate elementwise op). Inference only: no gradients flow through the
    skinnygemm op.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype: torch.dtype = torch.bfloat16, max_m: int = 64):
        super().__init__()
        if dtype not in SUPPORTED_DTYPES:
            raise ValueError(f"SkinnyLinear: dtype {dtype} is not supported (bfloat16 or float16)")
        self.in_features = in_features
        self.out_features = out_features
        self.max_m = max_m
        self.weight = nn.Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype),
                                   requires_grad=False)
        if bias:
            self.bias = nn.Parameter(torch.zeros(out_features, device=device, dtype=dtype), requires_grad=False)
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_linear(cls, layer: nn.Linear, max_m: int = 64) -> "SkinnyLinear":
        """Shares layer's weight and bias Parameters (no copy)."""
        new = cls.__new__(cls)
        nn.Module.__init__(new)
        if layer.weight.dtype not in SUPPORTED_DTYPES:
            raise ValueError(f"SkinnyLinear: dtype {layer.weight.dtype} is not supported (bfloat16 or float16)")
        new.in_features = layer.in_features
        new.out_features = layer.out_features
        new.max_m = max_m
        new.weight = layer.weight
        new.bias = layer.bias
        return new

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = self.in_features
        x2 = _flatten(x, k)
        if x2.size(0) > self.max_m:
            return F.linear(x, self.weight, self.bias)
        y = torch.ops.skinnygemm.linear(x2, self.weight)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(x.shape[:-1] + (self.out_features,))

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, dtype={self.weight.dtype}, max_m={self.max_m}")


class FusedLinear(nn.Module):
    """Several projections of one input (same in_features, dtype and device); forward returns a tuple.

    concat=True (default): the weights are copied once into one [sum(out), K] weight and each call runs ONE
    skinnygemm over it; the outputs are column views of one [..., sum(out)] tensor (not contiguous).
    concat=False: the weights are kept as given (no copy) and each call runs torch.ops.skinnygemm.fused_linear
    (one gemm per weight). Biases (optional per projection) are added afterwards with torch.
    M > max_m runs F.linear per projection. Inference only.
    """

    def __init__(self, weights: Sequence[torch.Tensor], biases: Optional[Sequence[Optional[torch.Tensor]]] = None,
                 concat: bool = True, max_m: int = 64):
        super().__init__()
        weights = [w.detach() for w in weights]
        if not weights:
            raise ValueError("FusedLinear: give at least one weight")
        k, dt, dev = weights[0].shape[1], weights[0].dtype, weights[0].device
        for i, w in enumerate(weights):
            if w.dim() != 2 or w.shape[1] != k or w.dtype != dt or w.device != dev:
                raise ValueError(f"FusedLinear: weight {i} is {tuple(w.shape)} {w.dtype} on {w.device}; "
                                 f"weight 0 is [*, {k}] {dt} on {dev} (they must share K, dtype and device)")
        if dt not in SUPPORTED_DTYPES:
            raise ValueError(f"FusedLinear: dtype {dt} is not supported (bfloat16 or float16)")
        biases = list(biases) if biases is not None else [None] * len(weights)
        if len(biases) != len(weights):
            raise ValueError(f"FusedLinear: {len(biases)} biases for {len(weights)} weights")
        self.in_features = k
        self.out_features = [int(w.shape[0]) for w in weights]
        self.concat = concat
        self.max_m = max_m
        if concat:
            self.register_buffer("weight", torch.cat(weights, 0).contiguous())
            self.weights = None
        else:
            self.weight = None
            self.weights = nn.ParameterList([nn.Parameter(w.contiguous(), requires_grad=False) for w in weights])
        if any(b is not None for b in biases):
            self.register_buffer("bias", torch.cat([
                b.detach().to(dt) if b is not None else torch.zeros(n, dtype=dt, device=dev)
                for b, n in zip(biases, self.out_features)]))
        else:
            self.bias = None

    @classmethod
    def from_linears(cls, layers: Sequence[nn.Linear], concat: bool = True, max_m: int = 64) -> "FusedLinear":
        return cls([l.weight for l in layers], [l.bias for l in layers], concat=concat, max_m=max_m)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        x2 = _flatten(x, self.in_features)
        lead = x.shape[:-1]
        if self.concat:
            w = self.weight
            y = F.linear(x2, w) if x2.size(0) > self.max_m else torch.ops.skinnygemm.linear(x2, w)
            if self.bias is not None:
                y = y + self.bias
            return tuple(p.reshape(lead + (p.shape[-1],)) for p in y.split(self.out_features, dim=-1))
        ws = list(self.weights)
        ys = [F.linear(x2, w) for w in ws] if x2.size(0) > self.max_m else \
            torch.ops.skinnygemm.fused_linear(x2, ws)
        if self.bias is not None:
            ys = [y + b for y, b in zip(ys, self.bias.split(self.out_features))]
        return tuple(y.reshape(lead + (y.shape[-1],)) for y in ys)


@dataclasses.dataclass
class SwapReport:
    swapped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)  # (name, "K->N dtype")
    left: List[Tuple[str, str]] = dataclasses.field(default_factory=list)     # (name, reason)

    def __str__(self) -> str:
        lines = [f"skinnygemm_torch.swap_linears: swapped {len(self.swapped)}, left {len(self.left)}"]
        lines += [f"  swapped {n}: {d}" for n, d in self.swapped]
        lines += [f"  left    {n}: {r}" for n, r in self.left]
        return "\n".join(lines)


def _why_not(name: str, layer: nn.Linear, min_features: int,
             filter: Optional[Callable[[str, nn.Linear], bool]]) -> Optional[str]:
    w = layer.weight
    if type(layer) is not nn.Linear:
        return f"{type(layer).__name__} is a subclass of nn.Linear (its forward may differ)"
    if w.dtype not in SUPPORTED_DTYPES:
        return f"dtype {w.dtype} is not bfloat16/float16"
    if w.device.type not in ("cpu", "cuda"):
        return f"device {w.device} is not cpu/cuda"
    if layer.in_features % 8 != 0:
        return f"K=in_features={layer.in_features} is not a multiple of 8"
    if layer.in_features < min_features or layer.out_features < min_features:
        return (f"in_features={layer.in_features}, out_features={layer.out_features}: "
                f"below min_features={min_features}")
    if w.dim() != 2 or (w.shape[0] > 1 and w.shape[1] > 1 and w.stride(1) != 1):
        return f"weight strides {tuple(w.stride())}: rows are not contiguous"
    if filter is not None and not filter(name, layer):
        return "excluded by filter"
    return None


def swap_linears(model: nn.Module, min_features: int = 0,
                 filter: Optional[Callable[[str, nn.Linear], bool]] = None, max_m: int = 64) -> SwapReport:
    """Replaces the eligible nn.Linear layers of model in place by SkinnyLinear (sharing their Parameters).

    Eligible: exactly nn.Linear (not a subclass), bf16/fp16 weights on cpu/cuda, in_features % 8 == 0, both
    in_features and out_features >= min_features, weight rows contiguous, and filter(name, layer) true when a
    filter is given. Returns a SwapReport of what was swapped and what was left, with the reason.
    """
    report = SwapReport()
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if not isinstance(child, nn.Linear):
                continue
            name = f"{parent_name}.{child_name}" if parent_name else child_name
            why = _why_not(name, child, min_features, filter)
            if why is not None:
                report.left.append((name, why))
                continue
            setattr(parent, child_name, SkinnyLinear.from_linear(child, max_m=max_m))
            report.swapped.append((name, f"{child.in_features}->{child.out_features} "
                                         f"{str(child.weight.dtype).replace('torch.', '')}"
                                         f"{' +bias' if child.bias is not None else ''}"))
    return report
