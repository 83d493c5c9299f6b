"""Fault-injection cases for the error-bound verdict (DECISIONS D14), made with real torch.

For each family x device dtype x output scale the script writes:
  bench      the float64 result of the API on the (device-dtype) inputs,
  magnitude  the same operation on the inputs' absolute values in float64 (only for the families that
             accumulate: mm, sum, add, gelu, silu), with the accumulation length K,
  clean      torch's CPU kernel computing in float32 and rounding once to the dtype (what a correct device
             kernel with float32 accumulation produces),
  faults     the clean output with one fault each: one element x(1+d) (d = 1%, 3% for bfloat16), the last
             column (a tile remainder) x1.02, 1% relative noise on every element, one sign flip, one NaN, a
             transposed 4x4 tile, and for mm/sum in float16/bfloat16 the sum accumulated in the output
             dtype (a kernel that does not accumulate in float32).
A fault whose faulty output equals the clean one after rounding is left out (nothing to catch). The
expected verdict of every clean case is pass and of every fault "not pass"; nothing here comes from probe.

Also (DECISIONS D20) torch's own CPU kernels for float16/bfloat16 outputs of the element-wise functions that
round intermediate results to the dtype (rsqrt, sigmoid, exp, tanh, silu and silu's backward), on 8
elements (the scalar path) and 1024 (the vectorised one): bench, torch's output, the magnitude (silu:
silu(|x|); silu's backward: |dy| s(x) (1 + |x|) in float64) and faults (the largest element x(1+d), d = 3% for
bfloat16, and its sign flipped; torch 1.13 has no float16 CPU kernels for these), and torch's float32 and
bfloat16 backward of softmax, log_softmax and layer_norm with D20's magnitudes (backward_cases). Output:
tests/data/error_bound/reduced_kernels.json.

Output: tests/data/error_bound/cases.json. Run with Debian's /usr/bin/python3 (python3-torch).
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "error_bound", "cases.json")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
SCALES = [1e-9, 1e-4, 1.0, 1e4]


def rnd(shape, g):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def case_inputs(family, scale, g):
    """Float64 inputs whose output is of the order of `scale`, and the call's API name."""
    if family == "mm":
        k = 64
        s = math.sqrt(scale) / k ** 0.25
        return "Torch.mm", [rnd((8, k), g) * s, rnd((k, 8), g) * s], k
    if family == "mm_k256":
        k = 256
        s = math.sqrt(scale) / k ** 0.25
        return "Torch.mm", [rnd((8, k), g) * s, rnd((k, 8), g) * s], k
    if family == "sum":
        return "Torch.sum", [rnd((8, 256), g) * scale / 16], 256
    if family == "add":
        return "Torch.add", [rnd((8, 8), g) * scale, rnd((8, 8), g) * scale], 1
    if family == "mul":
        return "Torch.mul", [rnd((8, 8), g) * math.sqrt(scale), rnd((8, 8), g) * math.sqrt(scale)], 1
    if family == "exp":
        return "Torch.exp", [math.log(scale) + rnd((8, 8), g) * 0.5], 1
    if family == "tanh":
        return "Torch.tanh", [rnd((8, 8), g) * min(scale, 3.0)], 1
    if family == "gelu":
        return "Functional.gelu", [rnd((8, 8), g) * scale], 1
    if family == "silu":
        return "Functional.silu", [rnd((8, 8), g) * scale], 1
    if family == "softmax":
        return "Functional.softmax", [rnd((8, 64), g) * 3], 64
    if family == "log_softmax":
        return "Functional.log_softmax", [rnd((8, 64), g) * 3], 64
    raise ValueError(family)


def apply(family, xs, dtype):
    """The API on tensors of `dtype` (float64 for the bench)."""
    if family in ("mm", "mm_k256"):
        return xs[0] @ xs[1]
    if family == "sum":
        return xs[0].sum(-1)
    if family == "add":
        return xs[0] + xs[1]
    if family == "mul":
        return xs[0] * xs[1]
    if family == "exp":
        return torch.exp(xs[0])
    if family == "tanh":
        return torch.tanh(xs[0])
    if family == "gelu":
        return torch.nn.functional.gelu(xs[0])
    if family == "silu":
        return torch.nn.functional.silu(xs[0])
    if family == "softmax":
        return torch.softmax(xs[0], -1)
    if family == "log_softmax":
        return torch.log_softmax(xs[0], -1)
    raise ValueError(family)


ACCUMULATING = {"mm", "mm_k256", "sum", "add", "gelu", "silu"}


def low_precision_accumulation(family, xs, dtype):
    """The sum of an mm or a row sum accumulated term by term in `dtype` (every partial sum rounded)."""
    if family in ("mm", "mm_k256"):
        a, b = xs
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=dtype)
        for k in range(a.shape[1]):
            acc = (acc + (a[:, k:k + 1].float() * b[k:k + 1, :].float()).to(dtype)).to(dtype)
        return acc
    if family == "sum":
        x = xs[0]
        acc = torch.zeros(x.shape[0], dtype=dtype)
        for k in range(x.shape[1]):
            acc = (acc + x[:, k]).to(dtype)
        return acc
    return None


def faults(family, clean, dtype, xs, g):
    c = clean.double()
    flat = c.reshape(-1)
    big = int(flat.abs().argmax())
    out = {}
    d = 0.03 if dtype == torch.bfloat16 else 0.01
    f = flat.clone()
    f[big] *= 1 + d
    out["one element x(1+d)"] = f.reshape(c.shape)
    f = c.clone()
    if f.dim() == 2:
        f[:, -1] *= 1.02
    else:
        f[-4:] *= 1.02
    out["last column x1.02"] = f
    noise = torch.randn(c.shape, generator=g, dtype=torch.float64)
    out["1% noise"] = c * (1 + 0.01 * noise)
    f = flat.clone()
    f[big] = -f[big]
    out["sign flip"] = f.reshape(c.shape)
    f = flat.clone()
    f[len(f) // 2] = float("nan")
    out["one NaN"] = f.reshape(c.shape)
    if c.dim() == 2 and c.shape[0] >= 4 and c.shape[1] >= 4:
        f = c.clone()
        f[:4, :4] = c[:4, :4].t()
        out["transposed 4x4 tile"] = f
    if dtype != torch.float32:
        low = low_precision_accumulation(family, [x.to(dtype) for x in xs], dtype)
        if low is not None:
            out["accumulation in the output dtype"] = low.double()
    return {k: v.to(dtype) for k, v in out.items()}


def nums(t):
    return [float(x) if not math.isnan(x) else "nan" for x in t.double().reshape(-1).tolist()]


def main():
    g = torch.Generator().manual_seed(20261128)
    cases = []
    for family in ["mm", "mm_k256", "sum", "add", "mul", "exp", "tanh", "gelu", "silu", "softmax",
                   "log_softmax"]:
        for dname, dtype in DTYPES.items():
            scales = [1.0] if family in ("softmax", "log_softmax") else SCALES
            for scale in scales:
                api, xs, k = case_inputs(family, scale, g)
                xs = [x.to(dtype) for x in xs]  # the device's inputs
                bench = apply(family, [x.double() for x in xs], torch.float64)
                clean = apply(family, [x.float() for x in xs], torch.float32).to(dtype)
                case = {
                    "family": family, "api": api, "dtype": dname, "scale": scale, "k": k,
                    "shape": list(bench.shape), "bench": nums(bench), "clean": nums(clean), "faults": {},
                }
                if family in ACCUMULATING:
                    case["magnitude"] = nums(apply(family, [x.double().abs() for x in xs], torch.float64))
                for name, faulty in faults(family, clean, dtype, [x.double() for x in xs], g).items():
                    same = torch.equal(faulty.double().nan_to_num(123.0), clean.double().nan_to_num(123.0))
                    if not same:
                        case["faults"][name] = nums(faulty)
                cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "make_error_bound_fixtures.py", "torch": torch.__version__, "cases": cases}, f)
    print(f"{len(cases)} cases, {sum(len(c['faults']) for c in cases)} faults -> {OUT}")


REDUCED_OUT = os.path.join(HERE, "error_bound", "reduced_kernels.json")


def backward_cases(g):
    """DECISIONS D20: torch's CPU backward of softmax / log_softmax (dim 1 of [3, 24, 5] and -1 of [4, 128])
    and layer_norm (over the last dim of [2, 6, 16] and [3, 256]), mul with a broadcast [12] operand and rsqrt
    in float32 and bfloat16: inputs,
    output gradient, float64 gradients, torch's, and the magnitudes D20 derives, computed here in float64."""
    out = []
    F = torch.nn.functional
    for dname in ("float32", "bfloat16"):
        dtype = DTYPES[dname]
        for api, shape, dim in (("Functional.softmax", (3, 24, 5), 1), ("Functional.softmax", (4, 128), -1),
                                ("Functional.log_softmax", (3, 24, 5), 1),
                                ("Functional.log_softmax", (4, 128), -1),
                                ("Functional.layer_norm", (2, 6, 16), None),
                                ("Functional.layer_norm", (3, 256), None),
                                ("Tensor.__mul__", (4, 6, 12), None), ("Torch.rsqrt", (64,), None)):
            x = (rnd(shape, g) * 2).to(dtype)
            gy = rnd(shape, g).to(dtype)
            case = {"api": api, "dtype": dname, "shape": list(shape), "x": nums(x), "g": nums(gy)}
            X, G = x.double(), gy.double()
            if api == "Tensor.__mul__":
                # x * w with w broadcast over the rows: w's gradient sums 24 products
                w = rnd(shape[-1:], g).to(dtype)
                case["other"] = nums(w)
                xd, wd = X.clone().requires_grad_(True), w.double().requires_grad_(True)
                (xd * wd).backward(G)
                xl, wl = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
                (xl * wl).backward(gy)
                bench, device = [xd.grad, wd.grad], [xl.grad, wl.grad]
                mags = [G.abs() * w.double().abs(), (G.abs() * X.abs()).reshape(-1, shape[-1]).sum(0)]
            elif api == "Torch.rsqrt":
                x = (X.abs() + 0.05).to(dtype)
                X = x.double()
                case["x"] = nums(x)
                xd = X.clone().requires_grad_(True)
                torch.rsqrt(xd).backward(G)
                xl = x.clone().requires_grad_(True)
                torch.rsqrt(xl).backward(gy)
                bench, device = [xd.grad], [xl.grad]
                mags = [0.5 * G.abs() * X.pow(-1.5)]
            elif api != "Functional.layer_norm":
                f = F.softmax if api == "Functional.softmax" else F.log_softmax
                xd = X.clone().requires_grad_(True)
                y = f(xd, dim)
                y.backward(G)
                xl = x.clone().requires_grad_(True)
                f(xl, dim).backward(gy)
                bench, device = [xd.grad], [xl.grad]
                y = y.detach()
                n = shape[dim]
                if api == "Functional.softmax":
                    u_out = 2.0 ** -24 if dtype == torch.float32 else 2.0 ** -8
                    lev = 1 + 8 * 2.0 ** -24 / u_out * (1 + y.log().abs() + math.log(n))
                    ag = (y * G.abs()).sum(dim, keepdim=True)
                    agl = (lev * y * G.abs()).sum(dim, keepdim=True)
                    mags = [y * (lev * (G.abs() + ag) + agl)]
                else:
                    mags = [G.abs() + y.exp() * (1 + y.abs()) * G.abs().sum(dim, keepdim=True)]
                case["dim"] = dim
            else:
                k = shape[-1]
                w = rnd((k,), g).to(dtype)
                b = rnd((k,), g).to(dtype)
                case["w"], case["b"] = nums(w), nums(b)
                xd, wd, bd = (t.double().requires_grad_(True) for t in (x, w, b))
                F.layer_norm(xd, (k,), wd, bd).backward(G)
                xl, wl, bl = (t.clone().requires_grad_(True) for t in (x, w, b))
                F.layer_norm(xl, (k,), wl, bl).backward(gy)
                bench, device = [xd.grad, wd.grad, bd.grad], [xl.grad, wl.grad, bl.grad]
                mu = X.mean(-1, keepdim=True)
                r = 1 / ((X - mu).pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()
                a = (X - mu).abs() * r + r * X.abs().mean(-1, keepdim=True)
                gw = (G * w.double()).abs()
                mags = [r * (gw + gw.mean(-1, keepdim=True) + a * (gw * a).mean(-1, keepdim=True)),
                        (G.abs() * a).reshape(-1, k).sum(0), G.abs().reshape(-1, k).sum(0)]
            case["bench"] = [nums(t) for t in bench]
            case["device"] = [nums(t) for t in device]
            case["magnitude"] = [nums(t) for t in mags]
            # the largest gradient element of input 0 x(1 + d) and sign-flipped. log_softmax's bfloat16
            # backward takes exp of the saved bfloat16 log-probabilities y, which err by 2^-8 |y| absolute:
            # torch's own gradient is up to ~370 2^-8 relative off on single elements, so its fault is 10%.
            d = 0.01 if dtype == torch.float32 else 0.10 if api == "Functional.log_softmax" else 0.03
            c = device[0].double().reshape(-1)
            big = int(bench[0].reshape(-1).abs().argmax())
            f1, f2 = c.clone(), c.clone()
            f1[big] *= 1 + d
            f2[big] = -f2[big]
            case["faults"] = {"largest element x(1+d)": nums(f1.to(dtype)), "sign flip": nums(f2.to(dtype))}
            out.append(case)
    return out


def reduced_kernel_cases():
    g = torch.Generator().manual_seed(20261129)
    cases = []
    funcs = {"Torch.rsqrt": torch.rsqrt, "Torch.sigmoid": torch.sigmoid, "Torch.exp": torch.exp,
             "Torch.tanh": torch.tanh, "Functional.silu": torch.nn.functional.silu}
    # float16: torch 1.13 has no CPU kernel for these functions.
    for dname in ("bfloat16",):
        dtype = DTYPES[dname]
        for n in (8, 1024):
            for api, f in funcs.items():
                for direction in (("forward", "backward") if api == "Functional.silu" else ("forward",)):
                    x = rnd((n,), g) * 3
                    if api == "Torch.rsqrt":
                        x = x.abs() + 0.05
                    x = x.to(dtype)
                    case = {"api": api, "dtype": dname, "direction": direction, "shape": [n]}
                    if direction == "forward":
                        bench = f(x.double())
                        device = f(x)
                        if api == "Functional.silu":
                            case["magnitude"] = nums(f(x.double().abs()))
                    else:
                        dy = rnd((n,), g).to(dtype)
                        xd = x.double().requires_grad_(True)
                        f(xd).backward(dy.double())
                        bench = xd.grad
                        xl = x.clone().requires_grad_(True)
                        f(xl).backward(dy)
                        device = xl.grad
                        s = torch.sigmoid(x.double())
                        case["magnitude"] = nums(dy.double().abs() * s * (1 + x.double().abs()))
                    case["bench"] = nums(bench)
                    case["device"] = nums(device)
                    # how far torch's kernel is from its float64 result rounded once (for the note)
                    case["not_rounded_once"] = int((device.double() != bench.to(dtype).double()).sum())
                    d = 0.03 if dtype == torch.bfloat16 else 0.01
                    c = device.double().clone()
                    big = int(bench.abs().argmax())
                    faults = {}
                    f1 = c.clone()
                    f1[big] *= 1 + d
                    faults["largest element x(1+d)"] = f1
                    f2 = c.clone()
                    f2[big] = -f2[big]
                    faults["sign flip"] = f2
                    case["faults"] = {k: nums(v.to(dtype)) for k, v in faults.items()}
                    cases.append(case)
    backward = backward_cases(torch.Generator().manual_seed(20261130))
    with open(REDUCED_OUT, "w") as fh:
        json.dump({"generator": "make_error_bound_fixtures.py", "torch": torch.__version__, "cases": cases,
                   "backward": backward}, fh)
    print(f"{len(cases)} reduced-precision kernel cases -> {REDUCED_OUT}")


if __name__ == "__main__":
    main()
    reduced_kernel_cases()
