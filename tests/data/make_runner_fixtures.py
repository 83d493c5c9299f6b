#!/usr/bin/python3
"""Generates the runner fixtures tests/data/runners/<name>.json with real PyTorch (Debian's
/usr/bin/python3, torch + numpy): inputs, kwargs, float64 expected outputs, the dtype the API produces
with the original dtypes ("device dtype"), output gradients and expected input gradients.

    /usr/bin/python3 tests/data/make_runner_fixtures.py

Other runner files add their own cases with a small script of their own:

    from make_runner_fixtures import C, T, I, write
    write("nn", [C("Functional.layer_norm", "basic", [T("float32", (2, 3)), [3]]), ...])

File format (one JSON object, {"cases": [...]}) - every case:
    id, api ("Torch.add"), framework ("pytorch"), args [value...], kwargs {name: value},
    outputs [value...] (expected float64 results; a tensor output holds its device dtype in "dtype"),
    grad_outputs [value...] and grads {"input.0": tensor|null, "kwargs.weight": ...} when backward is checked,
    rtol (default 1e-12), atol (default 0), tol_reason (why a case needs more than the default).
Values: null; {"bool": b}; {"int": i}; {"float": "repr"}; {"str": s}; {"dtype": "torch.float32"};
    {"slice": [start, stop, step]}; {"ellipsis": true}; [values...] (list);
    {"tensor": {"dtype": "float32", "shape": [...], "data": ["repr", ...]}} (flat, row-major; "nan"/"inf"/"-inf").
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "runners")
DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "bool": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}


class T:
    """A tensor input spec: random values (reproducible per case), or explicit `values`.
    `noncontig` builds it as a transposed view in torch (dumps store it contiguous)."""

    def __init__(self, dtype, shape, values=None, low=-2.0, high=2.0, noncontig=False, grad=True):
        self.dtype, self.shape, self.values = dtype, tuple(shape), values
        self.low, self.high, self.noncontig, self.grad = low, high, noncontig, grad

    def make(self, gen):
        dt = DTYPES[self.dtype]
        if self.values is not None:
            t = torch.tensor(self.values, dtype=torch.float64).reshape(self.shape).to(dt)
        elif dt == torch.bool:
            t = torch.rand(self.shape, generator=gen, dtype=torch.float64) > 0.5
        elif not dt.is_floating_point:
            t = torch.randint(int(self.low), int(self.high) + 1, self.shape, generator=gen).to(dt)
        else:
            t = (torch.rand(self.shape, generator=gen, dtype=torch.float64) * (self.high - self.low) + self.low).to(dt)
        if self.noncontig and t.dim() >= 2:
            t = t.transpose(0, 1).contiguous().transpose(0, 1)
        return t


class I:
    """An index tensor spec (int64 values given explicitly)."""

    def __init__(self, values, dtype="int64"):
        self.values, self.dtype = values, dtype

    def make(self, gen):
        return torch.tensor(self.values, dtype=DTYPES[self.dtype])


class S:
    """A Python slice."""

    def __init__(self, start=None, stop=None, step=None):
        self.s = slice(start, stop, step)


class C:
    def __init__(self, api, name, args, kwargs=None, grad=True, rtol=None, atol=None, tol_reason=None,
                 framework="pytorch", raise_dtype_args=True, raise_tensors=True, torch_api=None):
        # torch_api: the PyTorch function computing the expected values of a MindSpore API (mint mirrors torch)
        self.torch_api = torch_api
        # raise_dtype_args: dtype arguments (sum(..., dtype=float16)) become float64 in the bench like the
        # tensors; casts (Tensor.to) keep them, since a cast's result is exactly the target dtype's value.
        self.raise_dtype_args = raise_dtype_args
        # raise_tensors=False: torch runs on the original dtypes (APIs that msprobe never raises, e.g. type_as).
        self.raise_tensors = raise_tensors
        self.api, self.name, self.args, self.kwargs = api, name, args, kwargs or {}
        self.grad, self.rtol, self.atol, self.tol_reason, self.framework = grad, rtol, atol, tol_reason, framework


def resolve(api):
    prefix, _, rest = api.partition(".")
    if prefix == "Torch":
        obj = torch
        for p in rest.split("."):
            obj = getattr(obj, p)
        return obj
    if prefix == "Functional":
        return getattr(torch.nn.functional, rest)
    if prefix == "Tensor":
        meth = getattr(torch.Tensor, rest)
        if rest.endswith("_") and not rest.startswith("__") or rest.startswith("__i"):
            # in-place on a copy so that leaves stay untouched and gradients flow through the clone
            return lambda self, *a, **k: meth(self.clone(), *a, **k)
        return meth
    if prefix == "Aten":
        name, _, overload = rest.partition(".")
        return getattr(getattr(torch.ops.aten, name), overload or "default")
    raise ValueError("unknown API prefix " + api)


def fnum(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def enc_tensor(t, dtype_name=None):
    t = t.detach()
    name = dtype_name or NAMES[t.dtype]
    flat = t.reshape(-1)
    if t.dtype == torch.bool:
        data = [fnum(1.0 if v else 0.0) for v in flat.tolist()]
    else:
        data = [fnum(v) for v in flat.to(torch.float64).tolist()]
    return {"tensor": {"dtype": name, "shape": list(t.shape), "data": data}}


def enc(v):
    if v is None:
        return None
    if isinstance(v, torch.Tensor):
        return enc_tensor(v)
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": fnum(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v)}
    if isinstance(v, slice):
        return {"slice": [v.start, v.stop, v.step]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    raise TypeError(type(v))


def build(spec, gen):
    """Spec -> (original value, float64-raised value, list of (path-free) leaves)."""
    if isinstance(spec, (T, I)):
        return spec.make(gen)
    if isinstance(spec, S):
        return spec.s
    if isinstance(spec, list):
        return [build(s, gen) for s in spec]
    if isinstance(spec, tuple):
        return tuple(build(s, gen) for s in spec)
    if isinstance(spec, dict):
        return {k: build(v, gen) for k, v in spec.items()}
    return spec


def raise64(v, leaves, path, want_grad, raise_dtype=True, raise_tensors=True):
    """Bench copy: floating tensors to float64 (grad-tracking leaves), everything else unchanged."""
    if isinstance(v, torch.Tensor):
        if v.dtype.is_floating_point and raise_tensors:
            r = v.detach().to(torch.float64).requires_grad_(want_grad)
            if want_grad:
                leaves.append((path, r))
            return r
        return v.clone()
    if isinstance(v, list):
        return [raise64(x, leaves, f"{path}.{i}", want_grad, raise_dtype, raise_tensors) for i, x in enumerate(v)]
    if isinstance(v, tuple):
        return tuple(raise64(x, leaves, f"{path}.{i}", want_grad, raise_dtype, raise_tensors) for i, x in enumerate(v))
    if raise_dtype and isinstance(v, torch.dtype) and v in (torch.float16, torch.bfloat16, torch.float32):
        return torch.float64
    return v


def as_list(out):
    return list(out) if isinstance(out, tuple) else [out]


def device_dtypes(fn, args, kwargs):
    try:
        out = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
    except RuntimeError:
        # CPU kernels for float16 are missing in places: ask the meta device for the dtype only.
        def meta(v):
            if isinstance(v, torch.Tensor):
                return v.to("meta")
            if isinstance(v, (list, tuple)):
                return type(v)(meta(x) for x in v)
            return v
        out = fn(*meta(list(args)), **{k: meta(v) for k, v in kwargs.items()})
    return [o.dtype if isinstance(o, torch.Tensor) else [x.dtype for x in o] if isinstance(o, (list, tuple)) else None
            for o in as_list(out)]


def run_case(case, seed):
    gen = torch.Generator().manual_seed(seed)
    fn = resolve(case.torch_api or case.api)
    args = build(case.args, gen)
    kwargs = build(case.kwargs, gen)
    dts = device_dtypes(fn, args, kwargs)
    leaves = []
    torch.set_default_dtype(torch.float64)  # int -> float ops then stay exact (probe's bench is float64)
    try:
        a64 = [raise64(a, leaves, f"input.{i}", case.grad, case.raise_dtype_args, case.raise_tensors)
               for i, a in enumerate(args)]
        k64 = {k: raise64(v, leaves, f"kwargs.{k}", case.grad, case.raise_dtype_args, case.raise_tensors)
               for k, v in kwargs.items()}
        out = as_list(fn(*a64, **k64))
    finally:
        torch.set_default_dtype(torch.float32)
    enc_out = []
    for o, dt in zip(out, dts):
        if isinstance(o, torch.Tensor):
            enc_out.append(enc_tensor(o, NAMES[dt]))
        elif isinstance(o, (list, tuple)):
            enc_out.append([enc_tensor(x, NAMES[d]) for x, d in zip(o, dt)])
        else:
            enc_out.append(enc(o))
    rec = {"id": f"{case.api}/{case.name}", "api": case.api, "framework": case.framework,
           "args": [enc(a) for a in args], "kwargs": {k: enc(v) for k, v in kwargs.items()}, "outputs": enc_out}
    for key in ("rtol", "atol", "tol_reason"):
        if getattr(case, key) is not None:
            rec[key] = getattr(case, key)
    if case.grad and leaves:
        gouts, targets = [], []
        for o, dt in zip(out, dts):
            if isinstance(o, torch.Tensor) and o.dtype.is_floating_point and o.requires_grad:
                g = (torch.rand(o.shape, generator=gen, dtype=torch.float64) * 2 - 1).to(dt).to(torch.float64)
                gouts.append(enc_tensor(g, NAMES[dt]))
                targets.append((o, g))
            else:
                gouts.append(None)
        if targets:
            torch.autograd.backward([t for t, _ in targets], [g for _, g in targets])
            rec["grad_outputs"] = gouts
            rec["grads"] = {p: (enc_tensor(l.grad) if l.grad is not None else None) for p, l in leaves}
    if getattr(case, "exact", None):
        # where torch itself is inexact, a high-precision reference (mpmath) replaces its values
        case.exact(rec)
    return rec


def write(name, cases):
    os.makedirs(OUT_DIR, exist_ok=True)
    recs = []
    for i, case in enumerate(cases):
        try:
            recs.append(run_case(case, 1000 + i))
        except Exception as e:  # a broken case must not go unnoticed
            print(f"case {case.api}/{case.name} failed: {e}", file=sys.stderr)
            raise
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/data/make_runner_fixtures.py", "torch": torch.__version__, "cases": recs}, f,
                  separators=(",", ":"))
    print(f"{path}: {len(recs)} cases, {os.path.getsize(path)} bytes")


def f32(*shape, **kw):
    return T("float32", shape, **kw)


def core_cases():
    c = []
    # ---- arithmetic with broadcasting, promotion and kwargs
    c += [C("Torch.add", "broadcast_alpha", [f32(2, 3), f32(3)], {"alpha": 2.5}),
          C("Torch.add", "bf16_fp32_promote", [T("bfloat16", (2, 3)), f32(2, 3)]),
          C("Torch.add", "int_float_scalar", [T("int64", (4,), low=-5, high=5), 0.5]),
          C("Torch.add", "int_int", [T("int32", (3,), low=-9, high=9), T("int64", (2, 1), low=-9, high=9)]),
          C("Torch.add", "bool_bool", [T("bool", (5,)), T("bool", (5,))]),
          C("Torch.add", "zero_dim_tensor_keeps_f16", [T("float16", (3,)), T("float32", ())]),
          C("Torch.add", "empty", [f32(0, 3), f32(3)]),
          C("Tensor.__add__", "scalar", [T("float16", (2, 2)), 3]),
          C("Tensor.__radd__", "scalar", [f32(2, 2), 1.5]),
          C("Tensor.__iadd__", "inplace", [f32(2, 2), f32(2)]),
          C("Tensor.add_", "inplace_f16_keeps_dtype", [T("float16", (3,)), f32(3)]),
          C("Torch.sub", "alpha", [f32(2, 3), f32(2, 1)], {"alpha": -0.5}),
          C("Tensor.__rsub__", "scalar", [f32(4), 2]),
          C("Torch.mul", "noncontig", [f32(3, 4, noncontig=True), f32(4)]),
          C("Torch.mul", "nan_inf", [T("float32", (4,), values=[float("nan"), float("inf"), -0.0, 2.0]), f32(4)]),
          C("Torch.div", "true", [f32(2, 3), f32(3, low=0.5, high=2.0)]),
          C("Torch.div", "int_true", [T("int64", (5,), low=-9, high=9), T("int64", (5,), values=[2, -3, 4, 7, -1])]),
          C("Torch.div", "floor", [f32(6, low=-5, high=5), f32(6, low=0.5, high=3)], {"rounding_mode": "floor"}),
          C("Torch.div", "trunc", [f32(6, low=-5, high=5), f32(6, low=-3, high=-0.5)], {"rounding_mode": "trunc"}),
          C("Torch.div", "int_floor", [T("int64", (6,), values=[7, -7, 7, -7, 0, 9]),
                                       T("int64", (6,), values=[2, 2, -2, -2, 3, 4])], {"rounding_mode": "floor"}),
          C("Tensor.__truediv__", "scalar", [f32(3), 4]),
          C("Tensor.__rtruediv__", "scalar", [f32(3, low=0.5, high=2), 1]),
          C("Tensor.__floordiv__", "scalar", [f32(4, low=-5, high=5), 1.5], grad=False),
          C("Torch.remainder", "mixed_signs", [f32(6, low=-5, high=5), f32(6, low=-3, high=3)]),
          C("Torch.pow", "tensor_scalar", [f32(2, 3, low=0.1, high=2), 2.5]),
          C("Torch.pow", "tensor_tensor", [f32(3, low=0.5, high=2), f32(3)]),
          C("Tensor.__rpow__", "scalar_base", [f32(3), 2]),
          C("Torch.pow", "int", [T("int64", (4,), low=-3, high=3), 3]),
          C("Torch.maximum", "ties_nan", [T("float32", (4,), values=[1.0, 2.0, float("nan"), 0.0]),
                                          T("float32", (4,), values=[1.0, 3.0, 1.0, -1.0])]),
          C("Torch.minimum", "broadcast", [f32(2, 3), f32(3)]),
          C("Torch.lerp", "scalar_weight", [f32(2, 3), f32(2, 3), 0.3]),
          C("Torch.lerp", "tensor_weight", [f32(2, 3), f32(3), f32(2, 3, low=0, high=1)]),
          C("Torch.clamp", "min_max", [f32(3, 4)], {"min": -0.5, "max": 0.7}),
          C("Torch.clamp", "min_only_int", [T("int64", (5,), low=-5, high=5)], {"min": 0}),
          C("Torch.clamp", "tensor_bounds", [f32(2, 3), f32(3, low=-1, high=0), f32(2, 1, low=0, high=1)]),
          C("Tensor.clamp_", "inplace", [f32(4)], {"max": 0.0})]
    for fn, lo, hi in [("sqrt", 0.1, 4), ("rsqrt", 0.1, 4), ("exp", -3, 3), ("log", 0.1, 5), ("log1p", -0.5, 3),
                       ("sin", -4, 4), ("cos", -4, 4), ("erf", -3, 3), ("reciprocal", 0.2, 3), ("abs", -2, 2),
                       ("neg", -2, 2), ("sigmoid", -5, 5), ("tanh", -3, 3), ("floor", -3, 3), ("ceil", -3, 3),
                       ("round", -3, 3), ("sign", -2, 2), ("exp2", -2, 2), ("expm1", -1, 1), ("log2", 0.1, 4),
                       ("trunc", -3, 3), ("square", -2, 2)]:
        c.append(C("Torch." + fn, "f32", [f32(2, 3, low=lo, high=hi)]))
    c += [C("Torch.sqrt", "int_to_float", [T("int64", (4,), low=0, high=9)]),
          C("Torch.exp", "bf16", [T("bfloat16", (5,))]),
          C("Tensor.exp_", "inplace", [f32(3)]),
          C("Torch.abs", "int", [T("int32", (4,), low=-5, high=5)]),
          C("Torch.round", "decimals", [f32(5, low=-30, high=30)], {"decimals": 1}),
          C("Torch.round", "half_even", [T("float64", (6,), values=[0.5, 1.5, 2.5, -0.5, -1.5, 3.4])]),
          C("Torch.sqrt", "specials", [T("float32", (4,), values=[0.0, -1.0, float("inf"), float("nan")])], grad=False),
          C("Tensor.__neg__", "f16", [T("float16", (3,))]),
          C("Torch.sign", "nan_zero", [T("float32", (3,), values=[float("nan"), 0.0, -2.0])], grad=False)]
    # ---- comparisons and logic
    for fn in ["eq", "ne", "lt", "le", "gt", "ge"]:
        c.append(C("Torch." + fn, "broadcast", [f32(2, 3, low=-1, high=1), f32(3, low=-1, high=1)], grad=False))
    c += [C("Tensor.__eq__", "int_scalar", [T("int64", (5,), low=0, high=3), 1], grad=False),
          C("Tensor.__lt__", "nan", [T("float32", (3,), values=[float("nan"), 1.0, 2.0]), 1.5], grad=False),
          C("Torch.logical_and", "mixed", [T("bool", (4,)), f32(4, low=-1, high=1)], grad=False),
          C("Torch.logical_or", "ints", [T("int64", (4,), low=0, high=1), T("int64", (4,), low=0, high=1)], grad=False),
          C("Torch.logical_not", "f32", [T("float32", (3,), values=[0.0, 1.0, float("nan")])], grad=False),
          C("Tensor.__and__", "bool", [T("bool", (4,)), T("bool", (4,))], grad=False),
          C("Tensor.__or__", "int", [T("int64", (4,), low=0, high=7), T("int64", (4,), low=0, high=7)], grad=False),
          C("Tensor.__invert__", "bool", [T("bool", (4,))], grad=False)]
    for fn in ["isnan", "isinf", "isfinite"]:
        c.append(C("Torch." + fn, "specials", [T("float32", (4,), values=[float("nan"), float("inf"), -float("inf"), 1.0])],
                   grad=False))
    c += [C("Torch.where", "broadcast", [T("bool", (2, 3)), f32(2, 3), f32(3)]),
          C("Torch.where", "scalar_other", [T("bool", (4,)), f32(4), 0.0]),
          C("Tensor.masked_fill", "scalar", [f32(2, 3), T("bool", (2, 3))], {"value": -1e9}),
          C("Tensor.masked_fill", "broadcast_mask", [f32(2, 3), T("bool", (3,)), float("-inf")]),
          C("Tensor.masked_fill_", "inplace_int", [T("int64", (4,), low=0, high=9), T("bool", (4,)), 7])]
    # ---- reductions
    c += [C("Torch.sum", "all", [f32(3, 4)]),
          C("Torch.sum", "dims_keepdim", [f32(2, 3, 4)], {"dim": [0, 2], "keepdim": True}),
          C("Tensor.sum", "int_to_int64", [T("int32", (3, 2), low=-9, high=9), 1]),
          C("Torch.sum", "bool", [T("bool", (6,))]),
          C("Torch.sum", "dtype", [T("float16", (4,))], {"dtype": torch.float32}),
          C("Torch.sum", "empty", [f32(0, 3)], {"dim": 0}),
          C("Torch.mean", "dim_neg", [f32(2, 3, 4)], {"dim": -1}),
          C("Tensor.mean", "all_bf16", [T("bfloat16", (3, 3))]),
          C("Torch.prod", "dim", [f32(3, 4, low=0.5, high=1.5)], {"dim": 1}),
          C("Torch.prod", "with_zero", [T("float32", (2, 3), values=[1.0, 0.0, 2.0, 3.0, 0.0, 0.0])], {"dim": 1}),
          C("Torch.prod", "all", [f32(5, low=0.5, high=1.5)]),
          C("Torch.max", "all", [f32(3, 4)]),
          C("Torch.max", "dim", [f32(3, 4)], {"dim": 1}),
          C("Tensor.max", "dim_keepdim", [f32(3, 4), 0, True]),
          C("Torch.max", "binary", [f32(2, 3), f32(3)]),
          C("Torch.min", "dim", [f32(3, 4)], {"dim": 0}),
          C("Torch.max", "ties_all", [T("float32", (4,), values=[1.0, 3.0, 3.0, 0.0])]),
          C("Torch.amax", "dims", [f32(2, 3, 4)], {"dim": [1, 2]}),
          C("Torch.amin", "ties", [T("float32", (2, 2), values=[1.0, 1.0, 0.0, 2.0])], {"dim": 1}),
          C("Torch.argmax", "all", [f32(3, 4)], grad=False),
          C("Torch.argmin", "dim", [f32(3, 4)], {"dim": 1, "keepdim": True}, grad=False),
          C("Torch.argmax", "nan", [T("float32", (4,), values=[1.0, float("nan"), 5.0, 2.0])], grad=False),
          C("Torch.cumsum", "dim", [f32(3, 4)], {"dim": 1}),
          C("Torch.cumsum", "int", [T("int32", (5,), low=-3, high=3)], {"dim": 0}),
          C("Torch.norm", "fro", [f32(3, 4)]),
          C("Torch.norm", "p1_dim", [f32(3, 4)], {"p": 1, "dim": 1}),
          C("Tensor.norm", "p3", [f32(2, 3), 3]),
          C("Torch.linalg.vector_norm", "default", [f32(3, 4)]),
          C("Torch.linalg.vector_norm", "inf_dim", [f32(3, 4)], {"ord": float("inf"), "dim": 0, "keepdim": True}),
          C("Torch.linalg.vector_norm", "zero_grad", [T("float32", (2, 2), values=[0.0, 0.0, 3.0, 4.0])], {"dim": 1}),
          C("Torch.var", "default", [f32(3, 4)]),
          C("Torch.var", "dim_correction0", [f32(3, 4)], {"dim": 1, "correction": 0}),
          C("Torch.std", "unbiased_false", [f32(3, 4), 1, False]),
          C("Tensor.std", "keepdim", [f32(3, 4)], {"dim": 0, "keepdim": True}),
          C("Torch.logsumexp", "dim", [f32(3, 4, low=-10, high=10)], {"dim": 1}),
          C("Torch.logsumexp", "neg_inf_row", [T("float32", (2, 2), values=[float("-inf"), float("-inf"), 1.0, 2.0])],
            {"dim": 1}, grad=False),
          C("Torch.topk", "largest", [f32(3, 5)], {"k": 2}),
          C("Torch.topk", "smallest_dim0", [f32(4, 3)], {"k": 3, "dim": 0, "largest": False}),
          C("Torch.sort", "default", [f32(3, 5)]),
          C("Torch.sort", "descending_dim0", [f32(4, 3)], {"dim": 0, "descending": True}),
          C("Torch.all", "dim", [T("bool", (3, 4))], {"dim": 1}, grad=False),
          C("Torch.any", "all", [T("float32", (3,), values=[0.0, 0.0, 2.0])], grad=False)]
    # ---- activations
    c += [C("Functional.relu", "f32", [f32(3, 4)]),
          C("Torch.relu", "int", [T("int64", (4,), low=-3, high=3)]),
          C("Tensor.relu_", "inplace", [f32(4)]),
          C("Functional.leaky_relu", "slope", [f32(3, 4)], {"negative_slope": 0.2}),
          C("Functional.gelu", "none", [f32(3, 4, low=-4, high=4)]),
          C("Functional.gelu", "tanh", [f32(3, 4, low=-4, high=4)], {"approximate": "tanh"}),
          C("Functional.gelu", "bf16", [T("bfloat16", (6,))]),
          C("Functional.silu", "f32", [f32(3, 4, low=-5, high=5)]),
          C("Functional.sigmoid", "f16", [T("float16", (5,))]),
          C("Functional.tanh", "f32", [f32(5)]),
          C("Functional.elu", "alpha", [f32(3, 4)], {"alpha": 0.5}),
          C("Functional.hardswish", "range", [f32(8, low=-5, high=5)]),
          C("Functional.softplus", "beta_threshold", [f32(8, low=-5, high=5)], {"beta": 2.0, "threshold": 3.0}),
          C("Functional.dropout", "eval", [f32(3, 4)], {"p": 0.3, "training": False}),
          C("Functional.dropout", "p0", [f32(3)], {"p": 0.0}),
          C("Functional.softmax", "dim", [f32(3, 4, low=-5, high=5)], {"dim": -1}),
          C("Functional.softmax", "implicit_dim", [f32(2, 3)]),
          C("Functional.softmax", "dtype", [T("float16", (2, 3))], {"dim": 1, "dtype": torch.float32}),
          C("Torch.softmax", "dim0", [f32(3, 4), 0]),
          C("Tensor.softmax", "neg_inf", [T("float32", (2, 3), values=[0.0, float("-inf"), 1.0, 2.0, 2.0, 2.0]), -1]),
          C("Functional.log_softmax", "dim", [f32(3, 4, low=-5, high=5)], {"dim": 1}),
          C("Torch.log_softmax", "bf16", [T("bfloat16", (2, 4)), -1])]
    # ---- linear algebra
    c += [C("Torch.matmul", "2d", [f32(3, 4), f32(4, 5)]),
          C("Torch.matmul", "batched_broadcast", [f32(2, 1, 3, 4), f32(3, 4, 2)]),
          C("Torch.matmul", "vec_mat", [f32(4), f32(4, 3)]),
          C("Torch.matmul", "mat_vec", [f32(2, 3, 4), f32(4)]),
          C("Torch.matmul", "dot", [f32(5), f32(5)]),
          C("Torch.matmul", "int", [T("int64", (2, 3), low=-5, high=5), T("int64", (3, 2), low=-5, high=5)]),
          C("Torch.matmul", "empty_k", [f32(2, 0), f32(0, 3)]),
          C("Tensor.__matmul__", "bf16", [T("bfloat16", (2, 3)), T("bfloat16", (3, 2))]),
          C("Torch.mm", "noncontig", [f32(4, 3, noncontig=True), f32(3, 2)]),
          C("Torch.bmm", "f32", [f32(2, 3, 4), f32(2, 4, 5)]),
          C("Torch.addmm", "beta_alpha", [f32(3), f32(2, 4), f32(4, 3)], {"beta": 0.5, "alpha": 2.0}),
          C("Torch.baddbmm", "default", [f32(2, 3, 3), f32(2, 3, 4), f32(2, 4, 3)]),
          C("Functional.linear", "bias", [f32(2, 5, 4), f32(3, 4), f32(3)]),
          C("Functional.linear", "no_bias_bf16", [T("bfloat16", (2, 4)), T("bfloat16", (3, 4))]),
          C("Torch.einsum", "attention", ["bhqd,bhkd->bhqk", f32(1, 2, 3, 4), f32(1, 2, 5, 4)]),
          C("Torch.einsum", "implicit", ["ij,jk", f32(2, 3), f32(3, 4)]),
          C("Torch.einsum", "outer_list", ["i,j->ij", [f32(3), f32(2)]])]
    # ---- shapes
    c += [C("Tensor.view", "varargs", [f32(2, 6), 3, -1]),
          C("Tensor.view", "list", [f32(2, 6), [4, 3]]),
          C("Torch.reshape", "infer", [f32(2, 3, 2), [-1, 2]]),
          C("Torch.flatten", "range", [f32(2, 3, 4)], {"start_dim": 1}),
          C("Torch.squeeze", "all", [f32(1, 3, 1)]),
          C("Tensor.squeeze", "dim", [f32(1, 3, 1), -1]),
          C("Torch.unsqueeze", "neg", [f32(2, 3), -1]),
          C("Torch.transpose", "dims", [f32(2, 3, 4), 0, 2]),
          C("Tensor.permute", "varargs", [f32(2, 3, 4), 2, 0, 1]),
          C("Torch.permute", "list", [f32(2, 3, 4), [1, 2, 0]]),
          C("Tensor.t", "2d", [f32(2, 3)]),
          C("Tensor.contiguous", "noncontig", [f32(3, 2, noncontig=True)]),
          C("Torch.cat", "dim1", [[f32(2, 3), f32(2, 1)]], {"dim": 1}),
          C("Torch.cat", "promote_and_skip_empty", [[T("float16", (2,)), f32(3), f32(0)]]),
          C("Torch.stack", "dim_neg", [[f32(2, 3), f32(2, 3)]], {"dim": -1})]
    c += [C("Tensor.expand", "varargs", [f32(3, 1), 2, 3, -1]),
          C("Tensor.expand", "list_new_dim", [f32(3), [2, 3]]),
          C("Tensor.expand_as", "other", [f32(1, 3), f32(2, 3)]),
          C("Tensor.repeat", "varargs", [f32(2, 3), 2, 1, 2]),
          C("Torch.repeat_interleave", "int_dim", [f32(2, 3), 2], {"dim": 1}),
          C("Torch.repeat_interleave", "tensor_flat", [f32(2, 2), I([1, 0, 2, 1])]),
          C("Torch.split", "size", [f32(5, 2), 2]),
          C("Tensor.split", "sections_dim1", [f32(2, 5), [1, 4]], {"dim": 1}),
          C("Torch.chunk", "uneven", [f32(5, 3), 3]),
          C("Tensor.chunk", "dim1", [f32(2, 4), 2, 1]),
          C("Torch.narrow", "neg_start", [f32(3, 5), 1, -3, 2]),
          C("Tensor.__getitem__", "int", [f32(3, 4), 1]),
          C("Tensor.__getitem__", "neg_int", [f32(3, 4), -1]),
          C("Tensor.__getitem__", "slice_step", [f32(5, 4), S(1, None, 2)]),
          C("Tensor.__getitem__", "tuple_mixed", [f32(3, 4, 5), [S(None, 2), None, 1, S(1, -1)]]),
          C("Tensor.__getitem__", "ellipsis", [f32(2, 3, 4), [Ellipsis, 0]]),
          C("Tensor.__getitem__", "ellipsis_none", [f32(2, 3), [None, Ellipsis, None]]),
          C("Tensor.__getitem__", "bool_mask", [f32(3, 4), T("bool", (3, 4))]),
          C("Tensor.__getitem__", "bool_rows", [f32(4, 2), T("bool", (4,), values=[1, 0, 1, 1])]),
          C("Tensor.__getitem__", "int_tensor", [f32(5, 3), I([[0, 4], [2, 2]])]),
          C("Tensor.__getitem__", "int_list", [f32(5, 3), [4, 0, 4]]),
          C("Tensor.__getitem__", "two_adjacent_adv", [f32(2, 4, 5), [S(), I([0, 3]), I([1, 4])]]),
          C("Tensor.__getitem__", "separated_adv", [f32(3, 4, 5), [I([0, 2]), S(), I([1, 3])]]),
          C("Tensor.__getitem__", "adv_after_slice", [f32(3, 4), [S(1, 3), I([3, 0, 1])]]),
          C("Tensor.__getitem__", "empty_slice", [f32(3, 4), S(2, 1)]),
          C("Torch.index_select", "dim1", [f32(3, 4), 1, I([3, 0, 3])]),
          C("Torch.gather", "dim1", [f32(3, 4), 1, I([[0, 3], [1, 1], [2, 0]])]),
          C("Torch.gather", "dim0_neg_idx", [f32(3, 2), 0, I([[2, 0], [1, 1]])]),
          C("Torch.scatter", "src", [f32(3, 4), 1, I([[0, 3], [1, 2], [2, 0]]), f32(3, 2)]),
          C("Torch.scatter", "value", [f32(3, 4), 0, I([[0, 1, 2, 0]])], {"value": 1.5}, grad=False),
          C("Torch.scatter", "reduce_add", [f32(3, 4), 1, I([[0, 0], [1, 1], [3, 3]]), f32(3, 2)], {"reduce": "add"},
            grad=False),
          C("Torch.scatter_add", "dup", [f32(3, 4), 1, I([[0, 0], [1, 1], [3, 3]]), f32(3, 2)]),
          C("Tensor.index_add_", "dim0", [f32(4, 3), 0, I([0, 2, 0]), f32(3, 3)]),
          C("Torch.index_add", "alpha_dim1", [f32(2, 4), 1, I([3, 1]), f32(2, 2)], {"alpha": -2.0}),
          C("Torch.masked_select", "broadcast", [f32(3, 4), T("bool", (4,))]),
          C("Torch.tril", "default", [f32(4, 5)]),
          C("Torch.triu", "diag1_batched", [f32(2, 3, 3), 1]),
          C("Tensor.tril", "diag_neg_int", [T("int64", (3, 3), low=-5, high=5), -1]),
          C("Torch.flip", "dims", [f32(2, 3, 2), [0, 2]]),
          C("Tensor.to", "dtype_kw", [f32(2, 3)], {"dtype": torch.float16}, raise_dtype_args=False),
          C("Tensor.to", "dtype_pos", [T("bfloat16", (3,)), torch.float32], raise_dtype_args=False),
          C("Tensor.to", "narrowing_pos", [f32(3), torch.bfloat16], raise_dtype_args=False),
          C("Tensor.to", "int_trunc", [f32(5, low=-3, high=3), torch.int64]),
          C("Tensor.to", "other_tensor", [f32(3), T("float64", (1,))]),
          C("Tensor.float", "from_half", [T("float16", (4,))]),
          C("Tensor.half", "f32", [f32(4)]),
          C("Tensor.bfloat16", "f32", [f32(4)]),
          C("Tensor.long", "f32", [f32(4, low=-3, high=3)]),
          C("Tensor.bool", "f32", [T("float32", (3,), values=[0.0, -1.0, 0.5])]),
          C("Tensor.int", "bool", [T("bool", (3,))]),
          C("Tensor.type", "dtype", [f32(3), torch.float16], raise_dtype_args=False),
          C("Tensor.type_as", "bf16", [f32(3), T("bfloat16", (1,))], grad=False, raise_tensors=False),
          C("Tensor.type_as", "widen", [T("float16", (3,)), f32(1)]),
          C("Torch.zeros_like", "f16", [T("float16", (2, 3))], grad=False),
          C("Torch.ones_like", "dtype", [f32(2)], {"dtype": torch.int32}, grad=False),
          C("Torch.full_like", "int_trunc", [T("int64", (3,)), 2.7], grad=False),
          C("Torch.full_like", "bf16", [T("bfloat16", (3,)), 0.1], grad=False),
          C("Torch.clone", "f32", [f32(2, 2)]),
          C("Tensor.detach", "f32", [f32(2)]),
          C("Torch.unbind", "dim1", [f32(2, 3), 1])]
    # ---- MindSpore names (mint mirrors torch; expected values from the torch function named in torch_api)
    ms = dict(framework="mindspore")
    c += [C("Mint.add", "alpha", [f32(2, 3), f32(3)], {"alpha": 2.0}, torch_api="Torch.add", **ms),
          C("Mint.matmul", "2d", [f32(2, 3), f32(3, 2)], torch_api="Torch.matmul", **ms),
          C("MintFunctional.relu", "f32", [f32(5)], torch_api="Functional.relu", **ms),
          C("MintFunctional.gelu", "tanh", [f32(5)], {"approximate": "tanh"}, torch_api="Functional.gelu", **ms),
          C("Functional.softmax", "axis_positional", [f32(2, 3), 0], torch_api="Torch.softmax", **ms),
          C("Tensor.sum", "dim", [f32(2, 3), 1], torch_api="Tensor.sum", **ms),
          C("Mint.mean", "keepdim", [f32(2, 3)], {"dim": 1, "keepdim": True}, torch_api="Torch.mean", **ms)]
    # ---- Aten overloads (explicit ones and the Torch./Tensor. fallback)
    c += [C("Aten.add.Tensor", "alpha", [f32(3), f32(3)], {"alpha": 3}),
          C("Aten.mul.Scalar", "scalar", [f32(3), 0.5]),
          C("Aten.gelu.default", "f32", [f32(4)]),
          C("Aten.sum.dim_IntList", "dims", [f32(2, 3), [1]]),
          C("Aten.exp.default", "fallback", [f32(3)]),
          C("Aten.transpose.int", "fallback", [f32(2, 3), 0, 1]),
          C("Aten.mm.default", "f32", [f32(2, 3), f32(3, 2)])]
    return c


if __name__ == "__main__":
    write("core", core_cases())
