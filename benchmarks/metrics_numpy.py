#!/usr/bin/python3
"""numpy baseline for benchmarks/MetricsBench.cpp: msprobe's metrics written as msprobe writes them (one numpy
expression per metric), on the same 64M-element float32/bfloat16-as-float32 device vs float64 bench tensors.
Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 benchmarks/metrics_numpy.py"""
import time
import numpy as np

N = 64 << 20
rng = np.random.default_rng(1)
bench64 = rng.standard_normal(N)


def metrics(bench, device, eps, small_value, atol):
    abs_err = np.abs(device - bench)
    abs_bench = np.abs(bench)
    abs_bench_eps = abs_bench + eps
    rel_origin = np.abs(abs_err / abs_bench_eps)
    n = device.reshape(-1).astype(float) / np.max(np.abs(device))
    b = bench.reshape(-1).astype(float) / np.max(np.abs(bench))
    cos = np.dot(n, b) / (np.linalg.norm(n) * np.linalg.norm(b))
    max_abs = abs_err.max()
    ratios = [np.sum(rel_origin < t) / rel_origin.size for t in (0.01, 0.001, 0.0001)]
    finite = np.logical_and(np.isfinite(device), np.isfinite(bench.astype(device.dtype)))
    inf_nan = np.logical_not(finite)
    small = np.logical_and(np.less_equal(abs_bench, small_value), finite)
    diff = device - bench.astype(device.dtype)
    eb = abs(np.sum(diff > 0) - np.sum(diff < 0)) / bench.size
    mask = np.logical_or(inf_nan, small)
    rel = np.where(mask, -1, abs_err / abs_bench_eps)
    mse = np.mean(np.square(np.where(mask, 0, abs_err)))
    rmse = np.sqrt(mse * (abs_err.size / (abs_err.size - np.sum(mask) + 0.0001) + 0.0001))
    small_ratio = np.sum(np.logical_and(small, abs_err > atol)) / max(np.sum(small), 1)
    max_rel = np.max(rel)
    mean_rel = np.mean(rel[rel >= 0])
    return cos, max_abs, ratios, eb, rmse, small_ratio, max_rel, mean_rel


for name, device, bench, eps, sv, atol in [
        ("f32_vs_f64", bench64.astype(np.float32), bench64, np.finfo(np.float64).eps, 2**-20, 2**-30),
        ("bf16_vs_f64 (msprobe: both float32)",
         (bench64.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32), bench64.astype(np.float32),
         2**-8, 2**-10, 1e-16)]:
    t0 = time.perf_counter()
    metrics(bench, device, eps, sv, atol)
    dt = time.perf_counter() - t0
    print(f"{name}: {dt:.2f} s, {N / dt / 1e9:.4f} G elements/s (one thread, numpy {np.__version__})")
