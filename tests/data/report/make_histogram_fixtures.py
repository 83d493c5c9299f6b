#!/usr/bin/python3
"""Fixtures of the element-error histograms (tests/report/HistogramTest.cpp): bench/device pairs as .npy and
the counts numpy bins their element errors into, in relative error and in msprobe's ULP error (precheck.md
§2.9: |device - bench| in units of the device dtype at the bench's exponent, floored at the smallest
normal's), with the bins of include/probe/error_histogram.h: [2^e, 2^(e+1)) for -40 <= e < 24, exact zeros,
below 2^-40, at or above 2^24 (relative error against a zero bench: +inf), non-finite mismatches.

Run with Debian's /usr/bin/python3 from the repository root:
/usr/bin/python3 tests/data/report/make_histogram_fixtures.py
"""
import json
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "histograms")
MIN_EXP, MAX_EXP = -40, 24


def counts_of(err, mismatch):
    """Bins `err` (float64 >= 0 or inf) the way the header defines them; `mismatch` marks non-finite ones."""
    out = {"zero": 0, "below": 0, "above": 0, "nonfinite": int(mismatch.sum()), "bins": {}}
    e = err[~mismatch]
    out["zero"] = int((e == 0).sum())
    pos = e[e > 0]
    out["above"] = int(np.isinf(pos).sum())
    fin = pos[np.isfinite(pos)]
    _, ex = np.frexp(fin)  # fin = m * 2^ex with m in [0.5, 1): floor(log2 fin) = ex - 1
    ex = ex.astype(np.int64) - 1
    out["below"] = int((ex < MIN_EXP).sum())
    out["above"] += int((ex >= MAX_EXP).sum())
    for x in ex[(ex >= MIN_EXP) & (ex < MAX_EXP)]:
        out["bins"][str(int(x))] = out["bins"].get(str(int(x)), 0) + 1
    return out


def errors(bench, device, unit, min_eb, mant):
    b = bench.astype(np.float64)
    d = device.astype(np.float64)
    same = (b == d) | (np.isnan(b) & np.isnan(d))
    mismatch = ~same & (~np.isfinite(b) | ~np.isfinite(d))
    ok = ~same & ~mismatch
    err = np.zeros(b.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        if unit == "relative error":
            err[ok] = np.where(b[ok] == 0, np.inf, np.abs(d[ok] - b[ok]) / np.abs(b[ok]))
        else:
            _, ex = np.frexp(np.abs(b[ok]))
            ex = np.where(b[ok] == 0, 0, ex.astype(np.int64) - 1)
            ex = np.maximum(ex, min_eb)
            err[ok] = np.ldexp(np.abs(d[ok] - b[ok]), (mant - ex).astype(np.int64))
    return err, mismatch


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(34)
    cases = {}
    # float32 device against a float64 bench: rounding errors, a few large faults, zeros, a zero bench,
    # NaN on one side, NaN on both.
    b = rng.standard_normal(3000) * np.exp(rng.uniform(-20, 20, 3000))
    d = b.astype(np.float32)
    d[::97] *= np.float32(1.5)
    b[5] = 0.0
    d[5] = np.float32(0.0)
    b[6] = 0.0
    d[6] = np.float32(1e-3)
    d[7] = np.float32(np.nan)
    b[8] = np.nan
    d[8] = np.float32(np.nan)
    b[9] = np.inf
    d[9] = np.float32(np.inf)
    cases["rel_f32"] = (b, d, "relative error", -126, 23)
    # float16 device: ULP errors (the float16 row of precision_standards.json: min_eb -14, 10 mantissa bits)
    # with subnormal and zero benches.
    b = rng.standard_normal(2000) * np.exp(rng.uniform(-12, 8, 2000))
    d = b.astype(np.float16)
    d[::31] = (d[::31].astype(np.float64) * 1.01).astype(np.float16)
    b[3] = 0.0
    d[3] = np.float16(6e-8)
    b[4] = 1e-7
    cases["ulp_f16"] = (b, d, "ulp", -14, 10)
    expected = {}
    for name, (b, d, unit, min_eb, mant) in cases.items():
        np.save(os.path.join(HERE, name + "_bench.npy"), b)
        np.save(os.path.join(HERE, name + "_device.npy"), d)
        err, mismatch = errors(b, d, unit, min_eb, mant)
        expected[name] = dict(unit=unit, **counts_of(err, mismatch))
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
