#!/usr/bin/python3
"""Fixtures for the device runner's low-precision emulation (--device_runner emulated): torch's own CPU
results computed natively in float16 / bfloat16 / float32, which the emulation must reproduce.

    /usr/bin/python3 tests/data/make_emulation_fixtures.py   # writes tests/data/emulation/device.json

Each case holds the inputs (in the device dtype), torch's CPU output in that dtype, and the tolerance the
test (tests/runners/EmulationTest.cpp) allows, in units of the output dtype's spacing (ULP):
  * "element": |probe - torch| <= ulps * ulp(torch value), for ops whose every output element is one
    rounded function value (elementwise ops);
  * "max": |probe - torch| <= ulps * ulp(max |torch|), for sums, matmuls and normalisations, whose
    elements are differences of larger float32 partial results (the summation order of torch's kernels is
    not reproduced, so the error scales with the largest magnitude, not with each element).
Why the numbers: torch computes float16/bfloat16 kernels in float32 and rounds once to the output dtype;
the emulation computes each primitive in float64 and rounds it to float32, then to the output dtype. Their
float32 intermediates differ by a few float32 ULPs (libm vs torch's vectorised exp/erf/tanh, summation
order), which is at most 1 ULP of float16/bfloat16 after the final rounding. In float32 the same differences
stay visible: 4 ULPs for elementwise ops, 16 ULPs of the largest magnitude for reductions over <= 64 terms.
float16 covers only the ops torch 1.13 has CPU float16 kernels for (add, mul, sum, mean, var); the others
raise "not implemented for 'Half'" on CPU, so there is no torch result to compare with.

The "cancel" cases make the float32 accumulation itself visible: [2^24, 1, -2^24] . [1, 1, 1] is 0 when
accumulated in float32 (2^24 + 1 rounds back to 2^24), 1 in exact arithmetic: an emulation that skipped its
float32 rounding would give 1, torch gives 0.
"""
import json
import os

import torch
import torch.nn.functional as F

from make_runner_fixtures import NAMES, enc, enc_tensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "emulation", "device.json")

ELEMENT_LOW = dict(ulps=1, scale="element")
ELEMENT_F32 = dict(ulps=4, scale="element")
MAX_LOW = dict(ulps=1, scale="max")
MAX_F32 = dict(ulps=16, scale="max")


def cases(dtype, g):
    low = dtype != torch.float32
    el, mx = (ELEMENT_LOW, MAX_LOW) if low else (ELEMENT_F32, MAX_F32)

    def r(*shape, lo=-2.0, hi=2.0):
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)

    x, y = r(4, 16), r(4, 16)
    c = [("Torch.add", "add", [x, y], {}, el),
         ("Torch.mul", "mul", [x, y], {}, el),
         ("Torch.sum", "sum", [r(4, 64)], {"dim": -1}, mx),
         ("Torch.mean", "mean", [r(4, 64)], {"dim": 1}, mx),
         ("Torch.var", "var", [r(4, 32)], {"dim": -1}, mx)]
    if dtype == torch.float16:
        return c
    c += [("Torch.exp", "exp", [r(4, 16)], {}, el),
          ("Torch.tanh", "tanh", [r(4, 16, lo=-4, hi=4)], {}, el),
          ("Torch.sigmoid", "sigmoid", [r(4, 16, lo=-6, hi=6)], {}, el),
          ("Torch.rsqrt", "rsqrt", [r(4, 16, lo=0.05, hi=9)], {}, el),
          # torch's float32 gelu evaluates 0.5 x (1 + erf(x / sqrt 2)) in float32: for x < -2 the sum
          # cancels, so its absolute error is ~|x| 2^-24 (hundreds of ULPs of a small negative output, while
          # the emulation rounds the exact value once): the bound is relative to the largest output.
          ("Functional.gelu", "gelu", [r(4, 16, lo=-4, hi=4)], {}, el if low else mx),
          ("Functional.silu", "silu", [r(4, 16, lo=-4, hi=4)], {}, el),
          ("Torch.matmul", "matmul", [r(5, 32), r(32, 6)], {}, mx),
          ("Functional.linear", "linear", [r(3, 24), r(8, 24), r(8)], {}, mx),
          ("Functional.softmax", "softmax", [r(4, 33, lo=-5, hi=5)], {"dim": -1}, mx),
          ("Functional.layer_norm", "layer_norm", [r(3, 40), [40], r(40), r(40)], {"eps": 1e-5}, mx),
          ("Torch.logsumexp", "logsumexp", [r(4, 20, lo=-3, hi=3)], {"dim": -1}, mx),
          ("Torch.matmul", "cancel", [torch.tensor([[2.0**24, 1.0, -2.0**24]], dtype=dtype),
                                      torch.ones(3, 1, dtype=dtype)], {}, dict(ulps=0, scale="element"))]
    return c


def resolve(api):
    prefix, name = api.split(".", 1)
    return getattr(torch if prefix == "Torch" else F, name)


def main():
    recs = []
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        g = torch.Generator().manual_seed({torch.float16: 16, torch.bfloat16: 7, torch.float32: 32}[dtype])
        for api, name, args, kwargs, tol in cases(dtype, g):
            out = resolve(api)(*args, **kwargs)  # torch's CPU kernel in the device dtype itself
            assert out.dtype == dtype, (api, out.dtype)
            recs.append({"id": f"{api}/{name}/{NAMES[dtype]}", "api": api, "framework": "pytorch",
                         "args": [enc(a) for a in args], "kwargs": {k: enc(v) for k, v in kwargs.items()},
                         "outputs": [enc_tensor(out)], **tol})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "tests/data/make_emulation_fixtures.py", "torch": torch.__version__,
                   "cases": recs}, f, indent=0)
    print(f"{OUT}: {len(recs)} cases")


if __name__ == "__main__":
    main()
