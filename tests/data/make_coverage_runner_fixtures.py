#!/usr/bin/python3
"""Fixtures for the runners added to close the gap to msprobe's hooked API list (tools/runner_coverage.py):
more unary/binary math, pointwise ternary ops, activations, cumulative scans, einsum with '...'.
Expected values and gradients are torch float64 (Debian's torch), via make_runner_fixtures' machinery.

    /usr/bin/python3 tests/data/make_coverage_runner_fixtures.py   # writes tests/data/runners/coverage.json
"""
import make_runner_fixtures as mrf
import mpmath
import torch
from make_runner_fixtures import C, I, T, write

# torch_npu ops, absent here, by msprobe's CPU bench formulas (msprobe/pytorch/bench_functions)
REFS = {
    "NPU.fast_gelu": lambda x: x * torch.sigmoid(1.702 * x),
    "NPU.npu_mish": torch.nn.functional.mish,
    "NPU.npu_confusion_transpose": lambda x, perm, shape, first: (
        x.permute(*perm).contiguous().view(shape) if first else x.view(shape).permute(*perm)),
}
_resolve = mrf.resolve
mrf.resolve = lambda api: REFS[api] if api in REFS else _resolve(api)

NAN, INF = float("nan"), float("inf")


def f32(*shape, **kw):
    return T("float32", shape, **kw)


def special(dtype="float32"):
    # NaN, +-Inf and signed zeros among ordinary values
    return T(dtype, (8,), values=[NAN, INF, -INF, 0.0, -0.0, 0.5, -1.5, 2.25])


# torch's trigamma (digamma's derivative) stops at 6 recurrence steps and 3 series terms: ~1e-10 relative.
TRIGAMMA_TOL = dict(rtol=1e-9, tol_reason="torch's trigamma (the gradient) truncates its series, ~1e-10 relative")

# torch 1.13's float64 erfinv refines with erf near |y| = 1, where erf rounds: erfinv(0.9999999999) is
# 4.572825001442121 in torch, 4.572824958544925 in mpmath (relative 9.4e-9; 2.2e-12 at 0.999999). The edge
# and tail cases therefore take their expected values (and gradients, sqrt(pi)/2 * exp(erfinv(y)^2) * g)
# from mpmath at 50 digits, so they keep the default 1e-12 relative tolerance instead of torch's error.
mpmath.mp.dps = 50


def mp_erfinv(y):
    return float(mpmath.erfinv(mpmath.mpf(y)))  # +-1 give +-inf, matched exactly by the test


def erfinv_from_mpmath(rec):
    x = [float(v) for v in rec["args"][0]["tensor"]["data"]]
    rec["outputs"][0]["tensor"]["data"] = [mrf.fnum(mp_erfinv(v)) for v in x]
    if "grads" in rec:
        g = [float(v) for v in rec["grad_outputs"][0]["tensor"]["data"]]
        rec["grads"]["input.0"]["tensor"]["data"] = [
            mrf.fnum(mpmath.mpf(gi) * mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(mpmath.erfinv(mpmath.mpf(xi)) ** 2))
            for xi, gi in zip(x, g)]
    rec["tol_reason"] = "expected values from mpmath (50 digits): torch's erfinv loses digits near |y| = 1"


def exact(case, fn):
    case.exact = fn
    return case


def unary_cases():
    c = []
    inside = dict(low=-0.9, high=0.9)  # domain of acos/asin/atanh/erfinv
    for api, kw in [("Torch.acos", inside), ("Torch.asin", inside), ("Torch.atanh", inside),
                    ("Torch.erfinv", inside), ("Torch.sinh", {}), ("Torch.cosh", {}), ("Torch.asinh", {}),
                    ("Torch.acosh", dict(low=1.1, high=4.0)), ("Torch.erfc", {}),
                    ("Torch.lgamma", dict(low=0.2, high=6.0)), ("Torch.digamma", dict(low=0.2, high=9.0)),
                    ("Torch.deg2rad", {}), ("Torch.rad2deg", {}), ("Torch.sinc", {}), ("Torch.frac", {}),
                    ("Torch.logit", dict(low=0.05, high=0.95)), ("Torch.arctan", {})]:
        tol = {}
        if api in ("Torch.digamma",):
            tol = TRIGAMMA_TOL
        c.append(C(api, "f32", [f32(2, 3, **kw)], **tol))
        c.append(C(api, "nan_inf_zero", [special()], grad=False))
    # the same APIs under their other names, in other dtypes, and on edge shapes
    c += [C("Tensor.arccos", "bf16", [T("bfloat16", (5,), low=-0.9, high=0.9)]),
          C("Tensor.arcsin_", "inplace_f16", [T("float16", (4,), low=-0.9, high=0.9)]),
          C("Torch.arcsinh", "scalar", [T("float32", ())]),
          C("Torch.arccosh", "empty", [f32(0, 2)]),
          C("Tensor.arctanh", "f16", [T("float16", (3,), low=-0.9, high=0.9)]),
          C("Torch.sinh", "int_to_float", [T("int64", (4,), low=-3, high=3)]),
          C("Torch.deg2rad", "int_to_float", [T("int32", (4,), low=-180, high=180)]),
          exact(C("Torch.erfinv", "edges", [T("float64", (5,), values=[-1.0, 1.0, 0.0, 0.999999, -0.5])],
                  grad=False), erfinv_from_mpmath),
          exact(C("Torch.erfinv", "tails", [T("float64", (4,), values=[1e-300, -1e-10, 0.9999999999, -0.99999999])]),
                erfinv_from_mpmath),
          C("Torch.digamma", "negative_and_poles",
            [T("float64", (6,), values=[-0.5, -2.5, -3.0, 0.0, -0.0, 1e-8])], grad=False),
          C("Torch.digamma", "negative_grad", [T("float64", (3,), values=[-0.5, -2.5, -7.3])], **TRIGAMMA_TOL),
          C("Torch.digamma", "large", [T("float64", (3,), values=[10.0, 1234.5, 1e10])], **TRIGAMMA_TOL),
          C("Torch.lgamma", "negative", [T("float64", (3,), values=[-0.5, -2.5, -7.3])]),
          C("Torch.sinc", "zero_grad", [T("float64", (3,), values=[0.0, 1.0, -2.0])]),
          C("Torch.logit", "eps", [T("float32", (6,), values=[0.0, 0.01, 0.3, 0.7, 0.99, 1.0])], {"eps": 0.05}),
          C("Torch.logit", "outside_grad", [T("float64", (3,), values=[-0.5, 0.5, 1.5])]),
          C("Tensor.frac_", "inplace", [f32(5, low=-4, high=4)]),
          C("Torch.sgn", "special", [special()], grad=False),
          C("Torch.sgn", "int", [T("int32", (5,), low=-3, high=3)]),
          C("Torch.signbit", "special", [special()]),
          C("Tensor.signbit", "int", [T("int64", (4,), values=[-2, 0, 3, -1])]),
          # default +-inf replacements are the input dtype's extremes: torch on the original dtype
          C("Torch.nan_to_num", "defaults_f32", [special()], raise_tensors=False),
          C("Torch.nan_to_num", "defaults_f16", [special("float16")], raise_tensors=False),
          C("Torch.nan_to_num", "defaults_bf16", [special("bfloat16")], raise_tensors=False),
          C("Tensor.nan_to_num", "values", [special("float64")], {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}),
          C("Torch.nan_to_num", "int", [T("int64", (3,), values=[1, -2, 3])]),
          C("Tensor.nan_to_num_", "inplace", [special()], raise_tensors=False)]
    return c


def binary_cases():
    c = []
    for api in ["Torch.atan2", "Torch.hypot", "Torch.copysign", "Torch.fmax", "Torch.fmin", "Torch.fmod",
                "Torch.logaddexp", "Torch.logaddexp2", "Torch.xlogy", "Torch.ldexp", "Torch.float_power"]:
        low = 0.1 if api == "Torch.xlogy" else -2.0
        c.append(C(api, "broadcast", [f32(2, 3), f32(3, low=low, high=2.0)]))
        c.append(C(api, "special", [special(), T("float32", (8,), values=[1.0, INF, 2.0, NAN, 0.0, -0.0, -INF, 3.0])],
                   grad=False))
    c += [C("Tensor.arctan2", "bf16", [T("bfloat16", (4,)), T("bfloat16", (4,))]),
          C("Tensor.atan2_", "inplace", [f32(3), f32(3)]),
          C("Torch.atan2", "int_to_float", [T("int64", (4,), low=-3, high=3), T("int64", (4,), low=-3, high=3)]),
          C("Torch.hypot", "f16", [T("float16", (2, 2)), T("float16", (2, 2))]),
          C("Torch.copysign", "zero_grad", [T("float64", (4,), values=[0.0, 1.5, -2.0, -0.0]),
                                            T("float64", (4,), values=[-1.0, -1.0, 3.0, 2.0])]),
          C("Torch.copysign", "scalar_other", [f32(3), -1.0]),
          C("Torch.fmax", "ties_grad", [T("float64", (4,), values=[1.0, NAN, 2.0, 3.0]),
                                        T("float64", (4,), values=[1.0, 2.0, NAN, 0.5])]),
          C("Torch.fmin", "int", [T("int32", (4,), low=-5, high=5), T("int64", (4,), low=-5, high=5)]),
          C("Torch.fmod", "int", [T("int64", (4,), values=[7, -7, 7, -7]), T("int64", (4,), values=[3, 3, -3, -3])]),
          C("Tensor.fmod", "scalar", [f32(4, low=-5, high=5), 1.5]),
          C("Torch.logaddexp", "large", [T("float64", (3,), values=[1000.0, -1000.0, 5.0]),
                                         T("float64", (3,), values=[999.0, -1001.0, 5.0])]),
          C("Torch.xlogy", "zero_x", [T("float64", (3,), values=[0.0, 0.0, 2.0]),
                                      T("float64", (3,), values=[0.0, 3.0, 4.0])]),
          C("Torch.xlogy", "scalar_x", [2.0, f32(3, low=0.1, high=3.0)]),
          C("Torch.ldexp", "int_exp", [f32(3), T("int64", (3,), values=[-2, 0, 5])]),
          C("Torch.float_power", "f16_int", [T("float16", (3,), low=0.5, high=2.0), 3]),
          C("Tensor.float_power", "int_base", [T("int64", (3,), values=[2, -3, 4]), f32(3)]),
          C("Torch.heaviside", "f32", [special(), T("float32", (8,), values=[0.5] * 8)], grad=False),
          C("Tensor.heaviside", "int", [T("int64", (4,), values=[-2, 0, 0, 3]), T("int64", (4,), values=[7, 8, 9, 1])]),
          C("Torch.hypot", "empty", [f32(0, 3), f32(3)])]
    # addcmul / addcdiv
    c += [C("Torch.addcmul", "broadcast_value", [f32(2, 3), f32(3), f32(2, 1)], {"value": 0.5}),
          C("Tensor.addcmul", "default", [f32(4), f32(4), f32(4)]),
          C("Tensor.addcmul_", "inplace_f16", [T("float16", (3,)), f32(3), f32(3)]),
          C("Torch.addcmul", "int", [T("int64", (3,), low=-3, high=3), T("int64", (3,), low=-3, high=3),
                                     T("int64", (3,), low=-3, high=3)], {"value": 2}),
          C("Torch.addcdiv", "broadcast_value", [f32(2, 3), f32(2, 3), f32(3, low=0.5, high=2.0)], {"value": -2.0}),
          C("Tensor.addcdiv_", "inplace", [f32(4), f32(4), f32(4, low=0.5, high=2.0)]),
          C("Torch.addcdiv", "bf16", [T("bfloat16", (3,)), T("bfloat16", (3,)), T("bfloat16", (3,), low=0.5, high=2)]),
          C("Torch.addcdiv", "zero_div", [f32(3), T("float32", (3,), values=[1.0, 0.0, -1.0]),
                                          T("float32", (3,), values=[0.0, 0.0, 0.0])], grad=False)]
    return c


def activation_cases():
    c = []
    for api, kw in [("Functional.hardtanh", {}), ("Functional.selu", {}), ("Functional.celu", {"alpha": 0.7}),
                    ("Functional.softsign", {}), ("Functional.logsigmoid", {}), ("Functional.hardshrink", {}),
                    ("Functional.softshrink", {"lambd": 0.3}), ("Functional.tanhshrink", {}),
                    ("Functional.threshold", None)]:
        args = [f32(3, 4, low=-3, high=3)] + ([0.1, -2.0] if kw is None else [])
        tol = {}
        if api == "Functional.celu":
            tol = dict(rtol=1e-6, tol_reason="torch's celu backward uses 1 / alpha.toFloat() (float32)")
        c.append(C(api, "f32", args, kw or {}, **tol))
        c.append(C(api, "special", [special()] + ([0.1, -2.0] if kw is None else []), kw or {}, grad=False))
    c += [C("Functional.hardtanh", "bounds", [T("float64", (6,), values=[-2.0, -0.5, 0.0, 0.5, 2.0, 1.0])],
            {"min_val": -0.5, "max_val": 1.0}),
          C("Functional.hardtanh_", "inplace_bf16", [T("bfloat16", (5,), low=-3, high=3)], grad=False),
          C("Functional.selu", "bf16", [T("bfloat16", (2, 3))]),
          C("Torch.selu", "f16", [T("float16", (4,))]),
          C("Functional.selu_", "inplace", [f32(4)], grad=False),
          C("Torch.celu", "empty", [f32(0)]),
          C("Functional.hardshrink", "boundary", [T("float64", (5,), values=[-0.5, 0.5, 0.49, -0.51, 0.0])]),
          C("Tensor.hardshrink", "lambd", [f32(5)], {"lambd": 1.0}),
          C("Torch.threshold", "int", [T("int64", (5,), low=-3, high=3), 0, 7]),
          C("Functional.threshold", "scalar_input", [T("float32", ()), 0.5, 0.0]),
          C("Functional.logsigmoid", "large", [T("float64", (4,), values=[-800.0, 800.0, -30.0, 30.0])]),
          C("Functional.glu", "last_dim", [f32(2, 6)]),
          C("Functional.glu", "dim0_f16", [T("float16", (4, 3))], {"dim": 0}),
          C("Functional.glu", "special", [T("float32", (2, 4), values=[NAN, 1.0, INF, -INF, 0.0, -0.0, 2.0, 1.0])],
            {"dim": 0}, grad=False),
          C("Functional.softmin", "dim1", [f32(2, 5)], {"dim": 1}),
          C("Functional.softmin", "dtype", [T("float16", (3, 4))], {"dim": -1, "dtype": __import__("torch").float32}),
          C("Functional.softmin", "inf", [T("float32", (2, 3), values=[INF, 1.0, 2.0, -INF, 0.0, 0.0])], {"dim": 1},
            grad=False),
          C("Functional.prelu", "channels", [f32(2, 3, 4), f32(3, low=0.05, high=0.5)]),
          C("Functional.prelu", "single", [f32(5), T("float32", (1,), values=[0.25])]),
          C("Torch.prelu", "bf16", [T("bfloat16", (2, 2, 2)), T("bfloat16", (2,), values=[0.1, 0.2])]),
          C("Tensor.prelu", "special", [T("float32", (2, 4), values=[NAN, INF, -INF, 0.0, -0.0, -1.0, 2.0, -3.0]),
                                        T("float32", (1,), values=[0.5])], grad=False)]
    return c


def scan_cases():
    c = []
    for api in ["Torch.cumprod", "Torch.logcumsumexp", "Torch.cummax", "Torch.cummin"]:
        c += [C(api, "dim1", [f32(2, 5), 1]),
              C(api, "dim0_noncontig", [f32(4, 3, noncontig=True), 0]),
              C(api, "neg_dim_3d", [f32(2, 3, 4), -1]),
              C(api, "scalar", [T("float32", ()), 0]),
              C(api, "empty", [f32(0, 3), 1]),
              C(api, "special", [T("float32", (2, 4), values=[1.0, NAN, 2.0, 0.5, INF, -INF, 0.0, 3.0]), 1], grad=False)]
    c += [C("Torch.cumprod", "zeros_grad", [T("float64", (2, 5), values=[2.0, 0.0, 3.0, 0.0, 4.0,
                                                                          1.5, -2.0, 0.0, 0.5, 2.0]), 1]),
          C("Tensor.cumprod", "bf16", [T("bfloat16", (6,), low=0.5, high=1.5), 0]),
          C("Torch.cumprod", "int_to_int64", [T("int32", (5,), low=-3, high=3), 0]),
          C("Torch.cumprod", "bool", [T("bool", (5,)), 0]),
          C("Torch.cumprod", "dtype", [T("float16", (4,)), 0], {"dtype": __import__("torch").float32}),
          C("Tensor.cumprod_", "inplace", [f32(5), 0]),
          C("Torch.logcumsumexp", "large", [T("float64", (4,), values=[1000.0, 999.0, -1000.0, 1001.0]), 0]),
          C("Torch.logcumsumexp", "bf16", [T("bfloat16", (2, 3)), 1]),
          C("Tensor.logcumsumexp", "neg_inf_start", [T("float64", (4,), values=[-INF, -INF, 0.5, 1.0]), 0],
            grad=False),
          C("Torch.cummax", "ties", [T("float64", (6,), values=[1.0, 3.0, 3.0, 2.0, 3.0, 5.0]), 0]),
          C("Torch.cummin", "ties", [T("float64", (6,), values=[1.0, 0.0, 0.0, 2.0, 0.0, -5.0]), 0]),
          C("Tensor.cummax", "int", [T("int64", (2, 4), low=-5, high=5), 1]),
          C("Tensor.cummin", "bool", [T("bool", (6,)), 0]),
          C("Torch.cummax", "bf16", [T("bfloat16", (2, 5)), 1]),
          C("Torch.cummin", "nan_twice", [T("float64", (5,), values=[1.0, NAN, 0.0, NAN, -1.0]), 0], grad=False)]
    return c


def einsum_cases():
    return [C("Torch.einsum", "ellipsis_batch_matmul", ["...ij,...jk->...ik", f32(2, 3, 2, 4), f32(2, 3, 4, 5)]),
            C("Torch.einsum", "ellipsis_broadcast", ["...ij,...jk", f32(3, 2, 4), f32(1, 4, 2)]),
            C("Torch.einsum", "ellipsis_rank_mismatch", ["...d,d->...", f32(2, 3, 4), f32(4)]),
            C("Torch.einsum", "ellipsis_middle", ["b...d,bd->b...", f32(2, 3, 5, 4), f32(2, 4)]),
            C("Torch.einsum", "ellipsis_empty", ["...i,...i->...", f32(5), f32(5)]),
            C("Torch.einsum", "ellipsis_implicit_sum", ["i...->...", f32(3, 2, 2)]),
            C("Torch.einsum", "ellipsis_bf16", ["...hd,...kd->...hk", T("bfloat16", (2, 3, 4)),
                                                T("bfloat16", (2, 5, 4))]),
            C("Torch.einsum", "ellipsis_special", ["...i,i->...", T("float32", (2, 2), values=[NAN, 1.0, INF, 0.0]),
                                                   T("float32", (2,), values=[1.0, 2.0])], grad=False)]


def matmul_family_cases():
    bf = lambda *s, **k: T("bfloat16", s, **k)
    return [C("Torch.outer", "f32", [f32(3), f32(4)]),
            C("Tensor.ger", "bf16", [bf(2), bf(3)]),
            C("Torch.outer", "int", [T("int64", (3,), low=-3, high=3), T("int64", (2,), low=-3, high=3)]),
            C("Torch.outer", "empty", [f32(0), f32(3)]),
            C("Torch.outer", "special", [special(), f32(2)], grad=False),
            C("Torch.vdot", "f32", [f32(5), f32(5)]),
            C("Tensor.vdot", "f16", [T("float16", (4,)), T("float16", (4,))]),
            C("Torch.inner", "nd", [f32(2, 3, 4), f32(5, 4)]),
            C("Tensor.inner", "vec", [f32(4), f32(4)]),
            C("Torch.inner", "scalar", [T("float32", ()), f32(2, 3)]),
            C("Torch.addmv", "beta_alpha", [f32(3), f32(3, 4), f32(4)], {"beta": 0.5, "alpha": -2.0}),
            C("Tensor.addmv_", "inplace", [f32(2), f32(2, 3), f32(3)]),
            C("Torch.addmv", "beta0_nan_input", [T("float32", (2,), values=[NAN, INF]), f32(2, 3), f32(3)],
              {"beta": 0}, grad=False),  # beta = 0: probe gives input no gradient (as its addmm), torch zeros
            C("Torch.addr", "broadcast", [f32(1, 4), f32(3), f32(4)], {"alpha": 1.5}),
            C("Tensor.addr", "bf16", [bf(2, 2), bf(2), bf(2)]),
            C("Torch.addbmm", "default", [f32(3, 5), f32(2, 3, 4), f32(2, 4, 5)]),
            C("Tensor.addbmm_", "inplace_beta", [f32(2, 2), f32(3, 2, 4), f32(3, 4, 2)], {"beta": 2.0}),
            C("Torch.addbmm", "empty_batch", [f32(2, 3), f32(0, 2, 4), f32(0, 4, 3)]),
            C("Torch.linalg.matmul", "batched", [f32(2, 3, 4), f32(4, 2)]),
            C("Torch.chain_matmul", "three", [f32(2, 3), f32(3, 4), f32(4, 2)]),
            C("Torch.linalg.multi_dot", "vec_ends", [[f32(3), f32(3, 4), f32(4, 2), f32(2)]]),
            C("Torch.linalg.multi_dot", "bf16", [[bf(2, 3), bf(3, 2)]]),
            C("Torch.tensordot", "int_dims", [f32(2, 3, 4), f32(3, 4, 5)], {"dims": 2}),
            C("Torch.tensordot", "list_dims", [f32(4, 3, 2), f32(2, 5, 4)], {"dims": [[0, 2], [2, 0]]}),
            C("Torch.tensordot", "outer_dims0", [f32(2), f32(3)], {"dims": 0}),
            C("Torch.tensordot", "special", [T("float32", (2, 2), values=[NAN, 1.0, INF, 0.0]), f32(2, 2)],
              {"dims": 1}, grad=False)]


def indexing_cases():
    return [C("Torch.roll", "flat", [f32(2, 3), 2]),
            C("Tensor.roll", "dims", [f32(3, 4), [1, -1], [0, 1]]),
            C("Torch.roll", "negative_big_shift", [f32(5), -7, 0]),
            C("Torch.roll", "int", [T("int64", (4,), low=-5, high=5), 1]),
            C("Torch.roll", "empty", [f32(0, 3), 1, 1]),
            C("Torch.fliplr", "f32", [f32(2, 3, 2)]),
            C("Tensor.flipud", "bf16", [T("bfloat16", (3, 2))]),
            C("Torch.movedim", "single", [f32(2, 3, 4), 0, -1]),
            C("Tensor.moveaxis", "list", [f32(2, 3, 4, 5), [0, 1], [3, 0]]),
            C("Torch.take", "f32", [f32(3, 4), I([[0, 5], [-1, 11]])]),
            C("Tensor.take", "bool_input", [T("bool", (2, 3)), I([1, 2, 5])]),
            C("Torch.take", "empty_index", [f32(3), I([], "int64")]),
            C("Torch.take_along_dim", "dim1", [f32(3, 4), I([[0, 3], [1, 1], [2, 0]]), 1]),
            C("Torch.take_along_dim", "broadcast", [f32(2, 3, 4), I([[[1], [3], [0]]]), -1]),
            C("Tensor.take_along_dim", "flat", [f32(2, 3), I([5, 0, 0])]),
            C("Torch.select", "f32", [f32(3, 4), 1, -1]),
            C("Tensor.select", "int", [T("int32", (2, 3), low=-5, high=5), 0, 1]),
            C("Torch.diagonal", "default", [f32(3, 4)]),
            C("Tensor.diagonal", "offset_dims", [f32(2, 3, 4)], {"offset": 1, "dim1": 2, "dim2": 1}),
            C("Torch.diagonal", "neg_offset", [f32(4, 3)], {"offset": -2}),
            C("Torch.diagonal", "out_of_range_offset", [f32(2, 2)], {"offset": 5}),
            C("Torch.index_fill", "scalar", [f32(3, 4), 1, I([0, 2]), -1.5]),
            C("Tensor.index_fill_", "inplace_f16", [T("float16", (3, 2)), 0, I([1]), 2.0]),
            C("Torch.index_fill", "tensor_value", [f32(2, 3), 1, I([2, 0]), T("float32", ())]),
            C("Tensor.index_fill", "int_input", [T("int64", (4,), low=-5, high=5), 0, I([3, -4]), 7]),
            C("Torch.index_copy", "f32", [f32(4, 3), 0, I([3, 0]), f32(2, 3)]),
            C("Tensor.index_copy_", "inplace", [f32(2, 4), 1, I([1, 2, 3]), f32(2, 3)]),
            C("Torch.ravel", "noncontig", [f32(3, 2, noncontig=True)]),
            C("Tensor.unflatten", "infer", [f32(2, 12), 1, [3, -1]]),
            C("Torch.unflatten", "first", [f32(6, 2), 0, [2, 3]])]


def loss_and_distance_cases():
    prob = dict(low=0.02, high=0.98)
    c = []
    for red in ["mean", "sum", "none"]:
        c += [C("Functional.binary_cross_entropy", red, [f32(2, 3, **prob), f32(2, 3, low=0, high=1)],
                {"reduction": red}),
              C("Functional.binary_cross_entropy_with_logits", red, [f32(2, 3, low=-4, high=4), f32(2, 3, low=0, high=1)],
                {"reduction": red}),
              C("Functional.smooth_l1_loss", red, [f32(2, 4), f32(2, 4)], {"reduction": red, "beta": 0.5}),
              C("Functional.huber_loss", red, [f32(2, 4), f32(2, 4)], {"reduction": red, "delta": 0.7}),
              C("Functional.kl_div", red, [f32(2, 3, low=-3, high=0), f32(2, 3, low=0, high=1)], {"reduction": red})]
    c += [C("Functional.binary_cross_entropy", "weight_edges",
            [T("float64", (4,), values=[0.0, 1.0, 0.5, 1e-30]), T("float64", (4,), values=[0.0, 0.0, 1.0, 1.0]),
             T("float64", (4,), values=[1.0, 2.0, 0.5, 1.0], grad=False)], grad=False),
          C("Functional.binary_cross_entropy", "bf16", [T("bfloat16", (3,), **prob), T("bfloat16", (3,), low=0, high=1)]),
          # torch has no derivative for `weight` / `pos_weight` (the fixture cannot exclude one input): values only
          C("Functional.binary_cross_entropy_with_logits", "pos_weight",
            [f32(2, 3), f32(2, 3, low=0, high=1)], {"pos_weight": f32(3, low=0.5, high=3)}, grad=False),
          C("Functional.binary_cross_entropy_with_logits", "pos_weight_weight",
            [f32(2, 3), f32(2, 3, low=0, high=1)], {"weight": f32(3, low=0.5, high=2), "pos_weight": f32(3, low=0.5, high=3)},
            grad=False),
          C("Functional.binary_cross_entropy_with_logits", "large_logits",
            [T("float64", (4,), values=[-800.0, 800.0, 0.0, 35.0]), T("float64", (4,), values=[1.0, 0.0, 0.5, 1.0])],
            atol=1e-16, tol_reason="torch's input gradient sigmoid(x) - t cancels at x = 35 (probe: -1 / (1 + e^x))"),
          C("Functional.binary_cross_entropy_with_logits", "f16", [T("float16", (4,)), T("float16", (4,), low=0, high=1)]),
          C("Functional.binary_cross_entropy_with_logits", "empty_mean", [f32(0), f32(0)], grad=False),
          C("Functional.smooth_l1_loss", "beta0", [f32(5), f32(5)], {"beta": 0.0}),
          C("Functional.smooth_l1_loss", "boundary", [T("float64", (3,), values=[1.0, -1.0, 0.25]),
                                                      T("float64", (3,), values=[0.0, 0.0, 0.0])]),
          C("Functional.smooth_l1_loss", "broadcast_target", [f32(2, 3), f32(3)], grad=False),
          C("Functional.huber_loss", "bf16", [T("bfloat16", (4,)), T("bfloat16", (4,))]),
          C("Functional.huber_loss", "nan", [special(), f32(8)], {"reduction": "none"}, grad=False),
          C("Functional.kl_div", "batchmean", [f32(3, 2, low=-3, high=0), f32(3, 2, low=0, high=1)],
            {"reduction": "batchmean"}),
          C("Functional.kl_div", "log_target", [f32(2, 3, low=-3, high=0), f32(2, 3, low=-3, high=0)],
            {"reduction": "sum", "log_target": True}),
          C("Functional.kl_div", "zero_target", [f32(4, low=-3, high=0), T("float32", (4,), values=[0.0, 0.5, 0.0, 1.0])],
            {"reduction": "none"}),
          C("Functional.normalize", "default", [f32(2, 3, 4)]),
          C("Functional.normalize", "p1_dim_last", [f32(3, 4)], {"p": 1.0, "dim": -1}),
          C("Functional.normalize", "zero_row", [T("float64", (2, 3), values=[0.0, 0.0, 0.0, 1.0, -2.0, 2.0])],
            {"dim": 1}),
          C("Functional.normalize", "bf16", [T("bfloat16", (2, 4))], {"dim": 0}),
          C("Functional.normalize", "special", [T("float32", (2, 3), values=[NAN, 1.0, 2.0, INF, 0.0, 1.0])], grad=False),
          C("Functional.cosine_similarity", "default", [f32(3, 5), f32(3, 5)]),
          C("Functional.cosine_similarity", "broadcast_dim_last", [f32(2, 1, 4), f32(3, 4)], {"dim": -1}),
          C("Torch.cosine_similarity", "zero_vector", [T("float64", (2, 2), values=[0.0, 0.0, 1.0, 2.0]),
                                                       T("float64", (2, 2), values=[1.0, 1.0, 3.0, -1.0])], {"dim": 1}),
          C("Functional.cosine_similarity", "f16", [T("float16", (2, 3)), T("float16", (2, 3))]),
          C("Functional.pairwise_distance", "default", [f32(3, 4), f32(3, 4)]),
          C("Functional.pairwise_distance", "p1_keepdim", [f32(3, 4), f32(4)], {"p": 1.0, "keepdim": True}),
          C("Torch.pairwise_distance", "vectors", [f32(5), f32(5)]),
          C("Functional.pairwise_distance", "pinf", [f32(2, 3), f32(2, 3)], {"p": INF})]
    return c


def torch_inplace_alias_cases():
    # torch.<fn>_ mutate their argument: no gradient through the leaf
    return [C("Torch.exp_", "f32", [f32(3)], grad=False),
            C("Torch.sigmoid_", "bf16", [T("bfloat16", (3,))], grad=False),
            C("Torch.xlogy_", "f32", [f32(3), f32(3, low=0.1, high=2)], grad=False),
            C("Torch.clamp_", "min_max", [f32(4)], {"min": -0.5, "max": 0.5}, grad=False),
            C("Torch.fix_", "f32", [f32(4, low=-3, high=3)], grad=False),
            C("Tensor.negative_", "f16", [T("float16", (3,))], grad=False),
            C("Torch.nan_to_num_", "special", [special("float64")], {"nan": 0.0}, grad=False)]


def stats_and_misc_cases():
    import torch
    return [C("Torch.var_mean", "dim", [f32(3, 4), 1]),
            C("Torch.std_mean", "all_unbiased_false", [f32(3, 4)], {"unbiased": False}),
            C("Torch.var_mean", "correction_keepdim", [f32(2, 3, 4), [0, 2]], {"correction": 0, "keepdim": True}),
            C("Torch.std_mean", "bf16", [T("bfloat16", (5,))]),
            C("Torch.var_mean", "special", [special(), 0], grad=False),
            C("Torch.nanmean", "nans", [T("float32", (2, 3), values=[NAN, 1.0, 2.0, NAN, NAN, 4.0])], {"dim": 1}),
            C("Tensor.nanmean", "all", [f32(3, 2)]),
            C("Torch.nanmean", "all_nan_row", [T("float64", (2, 2), values=[NAN, NAN, 1.0, 3.0])], {"dim": 1,
                                                                                                   "keepdim": True}),
            C("Torch.nanmean", "f16_dtype", [T("float16", (4,))], {"dtype": torch.float32}),
            C("Torch.count_nonzero", "all", [T("float32", (2, 3), values=[0.0, -0.0, NAN, 1.0, INF, 0.0])]),
            C("Tensor.count_nonzero", "dims", [T("int64", (2, 3, 2), low=-1, high=1), [0, 2]]),
            C("Torch.count_nonzero", "bool_empty", [T("bool", (0, 3)), 0]),
            C("Torch.aminmax", "all", [f32(3, 4)], grad=False),
            C("Tensor.aminmax", "dim_keepdim", [f32(3, 4)], {"dim": 1, "keepdim": True}, grad=False),
            C("Torch.aminmax", "ties", [T("float64", (4,), values=[1.0, 3.0, 3.0, 1.0])], grad=False),
            C("Torch.aminmax", "int", [T("int32", (5,), low=-9, high=9)], {"dim": 0}),
            C("Torch.aminmax", "nan", [special()], grad=False),
            C("Torch.isclose", "default", [T("float32", (6,), values=[1.0, NAN, INF, -INF, 1e-9, 2.0]),
                                           T("float32", (6,), values=[1.000001, NAN, INF, INF, 0.0, 2.1])]),
            C("Tensor.isclose", "equal_nan_tol", [T("float64", (3,), values=[NAN, 1.0, 5.0]),
                                                  T("float64", (3,), values=[NAN, 1.05, 5.4])],
              {"rtol": 0.0, "atol": 0.1, "equal_nan": True}),
            C("Torch.isclose", "int", [T("int64", (3,), values=[1, 2, 3]), T("int64", (3,), values=[1, 3, 3])]),
            C("Torch.allclose", "true", [f32(4), f32(4)]),
            C("Tensor.allclose", "false_nan", [T("float32", (2,), values=[NAN, 1.0]), T("float32", (2,), values=[NAN, 1.0])]),
            C("Torch.equal", "true", [T("int64", (3,), values=[1, 2, 3]), T("int64", (3,), values=[1, 2, 3])]),
            C("Tensor.equal", "shape_differs", [f32(3), f32(1, 3)]),
            C("Torch.equal", "nan_unequal", [T("float32", (1,), values=[NAN]), T("float32", (1,), values=[NAN])]),
            C("Tensor.view_as", "f32", [f32(2, 6), f32(3, 4)]),
            C("Tensor.reshape_as", "noncontig", [f32(4, 3, noncontig=True), f32(2, 6)]),
            C("Functional.one_hot", "infer", [I([[0, 2], [1, 4]])]),
            C("Functional.one_hot", "num_classes", [I([3, 0, 1]), 5]),
            C("Functional.one_hot", "scalar", [I(2), 3]),
            C("Functional.one_hot", "empty", [I([], "int64"), 4])]


def rearrange_cases():
    return [C("Torch.diag", "vec_to_mat", [f32(3)]),
            C("Tensor.diag", "vec_offset_neg", [f32(2)], {"diagonal": -2}),
            C("Torch.diag", "mat_offset", [f32(3, 4), 1]),
            C("Torch.diag", "mat_empty_offset", [f32(3, 4), -3]),
            C("Torch.diag", "int", [T("int64", (3,), low=-3, high=3)]),
            C("Torch.rot90", "k1", [f32(2, 3)]),
            C("Tensor.rot90", "k3_dims", [f32(2, 3, 4), 3, [2, 0]]),
            C("Torch.rot90", "k_neg", [f32(2, 3), -2]),
            C("Torch.atleast_1d", "scalar", [T("float32", ())]),
            C("Torch.atleast_2d", "vec", [f32(3)]),
            C("Torch.atleast_3d", "vec", [f32(3)]),
            C("Torch.atleast_3d", "mat", [f32(2, 3)]),
            C("Torch.atleast_2d", "two", [T("float32", ()), f32(2)]),
            C("Torch.vstack", "vec_mat", [[f32(3), f32(2, 3)]]),
            C("Torch.row_stack", "bf16", [[T("bfloat16", (2,)), T("bfloat16", (2,))]]),
            C("Torch.hstack", "vecs", [[f32(2), f32(3)]]),
            C("Torch.hstack", "mats", [[f32(2, 1), f32(2, 3)]]),
            C("Torch.dstack", "mixed", [[f32(2), f32(1, 2), f32(1, 2, 2)]]),
            C("Torch.column_stack", "mixed", [[f32(3), f32(3, 2)]]),
            C("Torch.broadcast_tensors", "three", [f32(3, 1), f32(4), T("float32", ())]),
            C("Torch.tensor_split", "sections", [f32(7, 2), 3]),
            C("Tensor.tensor_split", "indices_dim1", [f32(2, 6), [1, 4]], {"dim": 1}),
            C("Torch.tensor_split", "indices_out_of_range", [f32(5), [2, 9, -1]]),
            C("Torch.hsplit", "mat", [f32(2, 4), 2]),
            C("Tensor.vsplit", "list", [f32(4, 2), [1, 3]]),
            C("Torch.dsplit", "cube", [f32(1, 2, 4), 2]),
            C("Torch.hsplit", "vec", [f32(6), [2]]),
            C("Functional.pixel_shuffle", "r2", [f32(1, 8, 2, 3), 2]),
            C("Torch.pixel_shuffle", "batch_dims", [f32(2, 1, 9, 1, 2), 3]),
            C("Functional.pixel_unshuffle", "r2", [f32(1, 2, 4, 6), 2]),
            C("Functional.pixel_shuffle", "bf16", [T("bfloat16", (4, 2, 2)), 2]),
            C("Functional.channel_shuffle", "g2", [f32(1, 4, 2, 2), 2], grad=False),
            C("Torch.channel_shuffle", "g3_3d", [f32(2, 6, 3), 3], grad=False)]


def order_stat_and_margin_cases():
    distinct = lambda *shape: T("float64", shape, values=[float(v) for v in
                                                            __import__("random").Random(7).sample(range(-50, 50), math_prod(shape))])
    pm1 = lambda n: T("float32", (n,), values=[1.0, -1.0] * (n // 2))
    return [C("Torch.median", "all_odd", [distinct(3, 3)]),
            C("Tensor.median", "all_even_lower", [distinct(2, 3)]),
            C("Torch.median", "dim", [distinct(3, 4), 1]),
            C("Torch.median", "dim0_keepdim", [distinct(4, 3), 0, True]),
            C("Torch.median", "nan_first", [T("float32", (2, 4), values=[1.0, NAN, 3.0, NAN, 4.0, 2.0, 0.0, 1.5]), 1],
              grad=False),
            C("Torch.median", "nan_all", [T("float32", (3,), values=[2.0, NAN, 1.0])], grad=False),
            C("Torch.median", "int", [T("int64", (5,), values=[5, -1, 3, 9, 0])]),
            C("Torch.median", "bf16", [T("bfloat16", (5,), values=[0.5, -1.0, 3.0, 2.0, 0.25]), 0]),
            C("Torch.median", "scalar", [T("float32", ())]),
            C("Torch.kthvalue", "k2", [distinct(3, 5), 2]),
            C("Tensor.kthvalue", "dim0_keepdim", [distinct(4, 2), 3, 0, True]),
            C("Torch.kthvalue", "nan_largest", [T("float64", (4,), values=[NAN, 1.0, -2.0, 5.0]), 3], grad=False),
            C("Torch.msort", "mat", [distinct(4, 3)]),
            C("Tensor.msort", "int", [T("int32", (4, 2), low=-5, high=5)]),
            C("Torch.msort", "special", [special()], grad=False),
            C("Functional.margin_ranking_loss", "mean", [f32(6), f32(6), pm1(6)], {"margin": 0.2}),
            C("Functional.margin_ranking_loss", "none_2d", [f32(2, 3), f32(2, 3),
                                                            T("float32", (2, 3), values=[1.0, -1.0, -1.0, 1.0, 1.0, -1.0])],
              {"reduction": "none"}),
            C("Functional.hinge_embedding_loss", "sum", [f32(6), pm1(6)], {"reduction": "sum", "margin": 0.5}),
            C("Functional.hinge_embedding_loss", "other_targets", [f32(4), T("float32", (4,), values=[1.0, -1.0, 0.0, 2.0])],
              {"reduction": "none"}),
            # torch has no derivative for soft_margin_loss's target: int targets keep it out of the gradient check
            C("Functional.soft_margin_loss", "mean", [f32(2, 3), T("int64", (2, 3), values=[1, -1, 1, 1, -1, -1])]),
            C("Functional.soft_margin_loss", "bf16", [T("bfloat16", (4,)), T("bfloat16", (4,), values=[1.0, -1.0, 1.0, -1.0])],
              {"reduction": "sum"}, grad=False),
            C("Functional.soft_margin_loss", "special", [special(), f32(8)], {"reduction": "none"}, grad=False)]


def math_prod(shape):
    n = 1
    for v in shape:
        n *= v
    return n


def constructor_and_aten_cases():
    import torch
    return [C("Torch.arange", "end_int", [5]),
            C("Torch.arange", "float_step", [0, 1, 0.1]),
            C("Torch.arange", "neg_step", [5, -3, -2]),
            C("Torch.arange", "dtype_f16", [0, 4], {"dtype": torch.float16}),
            C("Torch.arange", "empty", [3, 3]),
            C("Torch.arange", "int_dtype_float_args", [0.5, 4.5], {"dtype": torch.int64}),
            C("Torch.full", "float", [[2, 3], 1.5]),
            C("Torch.full", "int", [[2], 7]),
            C("Torch.full", "bool", [[3], True]),
            C("Torch.full", "dtype_bf16", [[2, 2], 0.1], {"dtype": torch.bfloat16}),
            C("Torch.full", "inf_empty", [[0, 2], float("inf")]),
            C("Torch.eye", "square", [3]),
            C("Torch.eye", "rect_int", [2, 4], {"dtype": torch.int64}),
            C("Torch.linspace", "five", [0, 1, 5]),
            C("Torch.linspace", "neg_dtype", [-2.5, 7.0, 6], {"dtype": torch.float16}),
            C("Torch.linspace", "one_step", [3.0, 9.0, 1]),
            C("Torch.linspace", "int_dtype", [0, 10, 4], {"dtype": torch.int64}),
            C("Torch.scalar_tensor", "default", [2.5]),
            C("Torch.scalar_tensor", "int_dtype", [3.7], {"dtype": torch.int32}),
            C("Aten._softmax.default", "f32", [f32(2, 5), 1, False]),
            C("Aten._softmax.default", "f16", [T("float16", (3, 4)), -1, False]),
            C("Aten._log_softmax.default", "f32", [f32(2, 3, 4), 2, False]),
            C("Aten._log_softmax.default", "inf", [T("float32", (2, 3), values=[INF, 0.0, 1.0, -INF, 0.0, 2.0]), 1, False],
              grad=False),
            C("Aten.slice.Tensor", "step", [f32(5, 3), 0, 1, 5, 2]),
            C("Aten.slice.Tensor", "neg_clamped", [f32(2, 6), 1, -4, 100]),
            C("Aten.slice.Tensor", "empty", [f32(4), 0, 3, 1]),
            C("Aten._unsafe_view.default", "f32", [f32(2, 6), [3, 4]]),
            C("Aten._unsafe_view.default", "infer", [T("bfloat16", (2, 6)), [-1, 2]])]


def shift_fill_alias_cases():
    i64 = lambda vals: T("int64", (len(vals),), values=vals)
    return [C("Torch.bitwise_left_shift", "int", [i64([1, -3, 5, 7]), i64([0, 2, 3, 40])]),
            C("Tensor.__lshift__", "scalar", [T("int32", (3,), values=[1, 2, -4]), 3]),
            C("Tensor.__rshift__", "neg", [i64([-17, 17, 1024, -1]), i64([2, 2, 11, 5])]),
            C("Tensor.bitwise_right_shift_", "inplace_int8", [T("int8", (3,), values=[-128, 127, 64]),
                                                              T("int8", (3,), values=[1, 3, 7])]),
            C("Tensor.fill_", "scalar", [f32(2, 3), 1.5], grad=False),
            C("Tensor.fill_", "int_input_float_value", [T("int64", (3,), values=[1, 2, 3]), 2.7], grad=False),
            C("Tensor.fill_", "tensor_value_f16", [T("float16", (2, 2)), T("float32", (), values=[0.3])], grad=False),
            C("Tensor.divide_", "inplace", [f32(3), f32(3, low=0.5, high=2)]),
            C("Tensor.multiply_", "inplace_bf16", [T("bfloat16", (3,)), f32(3)]),
            C("Tensor.true_divide_", "inplace", [f32(3), 4.0]),
            C("Tensor.absolute_", "inplace", [f32(3)]),
            C("Tensor.greater_", "inplace", [f32(4), f32(4)], grad=False),
            C("Tensor.less_equal_", "inplace_int", [T("int64", (3,), values=[1, 2, 3]), 2], grad=False)]


def npu_cases():
    return [C("NPU.fast_gelu", "f32", [f32(2, 5, low=-6, high=6)]),
            C("NPU.fast_gelu", "bf16", [T("bfloat16", (4,))]),
            C("NPU.fast_gelu", "special", [special()], grad=False),
            C("NPU.npu_mish", "f16", [T("float16", (5,))]),
            C("NPU.npu_confusion_transpose", "transpose_first", [f32(2, 3, 4), [0, 2, 1], [2, 12], True]),
            C("NPU.npu_confusion_transpose", "reshape_first", [f32(2, 12), [1, 0, 2], [2, 3, 4], False])]


def more_shape_cases():
    return [C("Torch.unsafe_split", "f32", [f32(5, 2), 2]),
            C("Tensor.unsafe_chunk", "f32", [f32(2, 5), 2, 1]),
            C("Torch.unsafe_split_with_sizes", "f32", [f32(6), [1, 5]]),
            C("Tensor.narrow_copy", "f32", [f32(4, 3), 0, 1, 2], grad=False),
            C("Torch.nonzero", "mat", [T("float32", (2, 3), values=[0.0, 1.0, NAN, 0.0, -0.0, 2.0])]),
            C("Tensor.nonzero", "as_tuple", [T("int64", (2, 2), values=[0, 3, 4, 0])], {"as_tuple": True}),
            C("Torch.argwhere", "bool_3d", [T("bool", (2, 2, 2))]),
            C("Torch.nonzero", "scalar", [T("float32", (), values=[2.0])]),
            C("Torch.nonzero", "empty", [f32(0, 3)]),
            C("Torch.diff", "default", [f32(2, 5)]),
            C("Tensor.diff", "n2_dim0", [f32(4, 3)], {"n": 2, "dim": 0}),
            C("Torch.diff", "prepend_append", [f32(3)], {"prepend": f32(2), "append": f32(1)}),
            C("Torch.diff", "int", [T("int64", (5,), values=[1, 4, 9, 16, 25])]),
            C("Torch.diff", "bool", [T("bool", (5,))]),
            C("Torch.diff", "special", [special()], grad=False),
            C("Torch.kron", "mats", [f32(2, 3), f32(2, 2)]),
            C("Tensor.kron", "rank_mismatch", [f32(3), f32(2, 2)]),
            C("Torch.kron", "int", [T("int64", (2,), values=[1, -2]), T("int64", (2,), values=[3, 4])])]


def new_and_copy_cases():
    return [C("Tensor.new_zeros", "list", [T("float16", (2,)), [2, 3]]),
            C("Tensor.new_ones", "varargs_dtype", [f32(2), 3, 1], {"dtype": torch.int64}),
            C("Tensor.new_full", "value", [T("bfloat16", (1,)), [2, 2], 0.1]),
            C("Tensor.new_full", "int_input", [T("int32", (1,), values=[1]), [3], 2.9]),
            C("Torch.zeros", "varargs", [2, 3]),
            C("Torch.ones", "list_dtype", [[4]], {"dtype": torch.float16}),
            C("Torch.zeros", "empty", [[0, 3]]),
            C("Tensor.zero_", "f32", [f32(2, 2)], grad=False),
            C("Tensor.copy_", "broadcast_f16", [T("float16", (2, 3)), f32(3)], grad=False),
            C("Tensor.copy_", "to_int", [T("int64", (3,), values=[0, 0, 0]), T("float32", (3,), values=[1.7, -2.5, 3.0])],
              grad=False),
            C("Aten.copy.default", "f32", [f32(2, 2), f32(2, 2)]),
            C("Aten.alias.default", "f32", [f32(3)]),
            C("Aten.lift_fresh.default", "f32", [f32(3)], grad=False),
            C("Aten.expand.default", "f32", [f32(3, 1), [3, 4]])]


def distance_cross_gcd_cases():
    i64 = lambda vals: T("int64", (len(vals),), values=vals)
    return [C("Torch.dist", "p2", [f32(2, 3), f32(3)]),
            C("Tensor.dist", "p1", [f32(4), f32(4), 1]),
            C("Torch.dist", "pinf", [f32(4), f32(4), INF]),
            C("Torch.dist", "zero_grad", [T("float64", (2,), values=[1.0, 2.0]), T("float64", (2,), values=[1.0, 2.0])]),
            C("Torch.cdist", "p2", [f32(3, 4), f32(5, 4)]),
            C("Torch.cdist", "batched_p1", [f32(2, 3, 2), f32(2, 4, 2)], {"p": 1.0}),
            C("Torch.cdist", "f64_zero_distance", [T("float64", (2, 2), values=[1.0, 2.0, 0.0, 0.0]), T("float64", (1, 2), values=[1.0, 2.0])]),
            C("Torch.cross", "default_dim", [f32(3, 2), f32(3, 2)]),
            C("Tensor.cross", "dim1", [f32(2, 3), f32(2, 3)], {"dim": 1}),
            C("Torch.linalg.cross", "broadcast", [f32(2, 3), f32(1, 3)]),
            C("Torch.linalg.cross", "int", [i64([1, 2, 3]), i64([4, 5, 6])]),
            C("Torch.gcd", "int", [i64([12, -18, 0, 7, 0]), i64([8, 12, 5, -21, 0])]),
            C("Tensor.lcm", "int", [i64([4, -6, 0, 7]), i64([6, 4, 3, -21])]),
            C("Tensor.gcd_", "inplace_int32", [T("int32", (3,), values=[9, 10, 14]), T("int32", (3,), values=[6, 4, 21])])]


def more_loss_cases():
    pm1 = T("float32", (4,), values=[1.0, -1.0, -1.0, 1.0])
    return [C("Functional.poisson_nll_loss", "log_input", [f32(2, 3), f32(2, 3, low=0, high=4)]),
            C("Functional.poisson_nll_loss", "rate_full_sum", [f32(2, 3, low=0.1, high=3), f32(2, 3, low=0, high=4)],
              {"log_input": False, "full": True, "reduction": "sum"}),
            C("Functional.poisson_nll_loss", "bf16_none", [T("bfloat16", (4,)), T("bfloat16", (4,), low=0, high=3)],
              {"reduction": "none"}),
            C("Functional.poisson_nll_loss", "zero_rate", [T("float64", (3,), values=[0.0, 1.0, 2.0]),
                                                           T("float64", (3,), values=[0.0, 2.0, 1.0])],
              {"log_input": False}),
            C("Functional.cosine_embedding_loss", "mean", [f32(4, 3), f32(4, 3), pm1], {"margin": 0.1}),
            C("Functional.cosine_embedding_loss", "none_zero_vec",
              [T("float64", (2, 2), values=[0.0, 0.0, 1.0, 2.0]), f32(2, 2), T("float32", (2,), values=[1.0, -1.0])],
              {"reduction": "none"}, rtol=1e-8,
              tol_reason="at a zero vector the gradient is ~1e6 (eps 1e-12 under a square root): torch's backward "
                         "orders the products differently"),
            C("Functional.cosine_embedding_loss", "vectors_sum", [f32(3), f32(3), T("float32", (), values=[-1.0])],
              {"reduction": "sum", "margin": -0.5})]


if __name__ == "__main__":
    write("coverage", unary_cases() + binary_cases() + activation_cases() + scan_cases() + einsum_cases()
          + matmul_family_cases() + indexing_cases()
          + loss_and_distance_cases() + torch_inplace_alias_cases()
          + stats_and_misc_cases() + rearrange_cases()
          + order_stat_and_margin_cases() + constructor_and_aten_cases()
          + shift_fill_alias_cases() + npu_cases()
          + more_shape_cases() + new_and_copy_cases()
          + distance_cross_gcd_cases() + more_loss_cases())
