#!/usr/bin/python3
"""Generates tests/data/metrics/: a bfloat16-device vs float64-bench pair large enough that the
mean relative error runs over several of numpy's 8192-element reduction buffers of the *compacted*
selection, with NaN/Inf and small values breaking the selection up, plus the values msprobe's numpy
expressions give for it (computed here by numpy, never by probe).

Run with Debian's interpreter (numpy 1.24):  /usr/bin/python3 tests/data/make_metrics_fixtures.py
bfloat16 has no numpy dtype: the device is stored as float32 holding bfloat16 values (the low 16 bits
are zero), so the test's conversion to bfloat16 is exact. msprobe compares a bfloat16 output in float32
with the bench cast to float32, eps 2**-8 and small value 2**-10 (spec precheck.md §2).
"""
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "metrics"
OUT.mkdir(exist_ok=True)
eps, small_value = np.float32(2.0 ** -8), 2.0 ** -10
n = 9 * 8192 + 1234


def make(seed):
    rng = np.random.default_rng(seed)
    bench = rng.standard_normal(n) * np.exp(rng.uniform(-12, 4, n))  # many |b| below 2**-10
    bench[rng.integers(0, n, 40)] = 0.0
    # Heavy-tailed relative errors, so that float32 rounding depends on the summation order.
    device32 = (bench * (1 + 4e-3 * rng.standard_cauchy(n).clip(-1e3, 1e3))).astype(np.float32)
    device32[rng.integers(0, n, 25)] = np.nan
    device32[rng.integers(0, n, 25)] = np.inf
    bench[rng.integers(0, n, 25)] = -np.inf
    device = (device32.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # bf16 by truncation
    b = bench.astype(np.float32)
    abs_err = np.abs(device - b)
    abs_bench = np.abs(b)
    finite = np.logical_and(np.isfinite(device), np.isfinite(b))
    small = np.logical_and(np.less_equal(abs_bench, small_value), finite)
    mask = np.logical_or(np.logical_not(finite), small)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        rel = np.where(mask, -1, abs_err / (abs_bench + eps))
    selected = rel[rel >= 0]
    mean_rel = np.mean(selected)
    # What a kernel that did not sum the compacted array would print: the masked-with-zeros sum, or a
    # correctly rounded float64 mean. The fixture must tell all three apart.
    masked = np.float32(np.sum(np.where(mask, np.float32(0), rel)) / np.float32(selected.size))
    exact = np.float32(np.mean(selected.astype(np.float64)))
    return bench, device, rel, selected, mean_rel, masked, exact


for seed in range(20261122, 20261122 + 200):
    bench, device, rel, selected, mean_rel, masked, exact = make(seed)
    if mean_rel != masked and mean_rel != exact:
        break
else:
    raise SystemExit("no seed separates numpy's compacted sum from the alternatives")
np.save(OUT / "bf16_device_as_f32.npy", device)
np.save(OUT / "bf16_bench_f64.npy", bench)
max_rel = np.max(rel)
assert mean_rel.dtype == np.float32 and selected.size > 3 * 8192 and selected.size < n


def f32_bits(x):
    return int(np.float32(x).view(np.uint32))


expected = {
    "n": n,
    "selected": int(selected.size),
    "mean_rel_err_f32_bits": f32_bits(mean_rel),
    "max_rel_err_f32_bits": f32_bits(max_rel),
    "seed": seed,
    # What other summation orders give (the test checks probe's result is not these).
    "masked_zero_sum_f32_bits": f32_bits(masked),
    "float64_mean_f32_bits": f32_bits(exact),
}
(OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
print(json.dumps(expected))
