#!/usr/bin/python3
"""numpy baseline for benchmarks/MetricsBench.cpp: the run_ut metric set (old rule, benchmark, absolute-threshold,
accumulative and binary-consistency standards) written as msprobe writes them (one numpy
expression per metric), on the same 64M-element float32/bfloat16-as-float32 device vs float64 bench tensors.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3 \\
         benchmarks/metrics_numpy.py [build/benchmarks/probe_metricsbench]
With the benchmark binary, its one-thread run_ut-set case runs right after each numpy case and the
ratio probe/numpy is printed (both measured in the same run, so machine noise mostly cancels)."""
import json
import subprocess
import sys
import time

import numpy as np

N = 64 << 20


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
    # Absolute-threshold standard: relative / absolute / inf-nan error rates.
    normal = np.logical_and(np.logical_not(small), finite)
    rel_err_ratio = np.sum(np.logical_and(rel_origin > 1e-4, normal)) / max(np.sum(normal), 1)
    abs_err_ratio = np.sum(np.logical_and(abs_err > atol, small)) / max(np.sum(small), 1)
    inf_nan_ratio = np.sum(inf_nan) / max(np.sum(inf_nan), 1)
    # Accumulative error (its own small-value threshold and bound).
    acc_small = np.logical_and(np.less_equal(abs_bench, 1e-9), finite)
    acc_normal = np.logical_and(np.logical_not(acc_small), finite)
    acc_rel = np.sum(np.logical_and(rel_origin > 1e-5, acc_normal)) / max(np.sum(acc_normal), 1)
    acc_abs = np.sum(np.logical_and(abs_err > 1e-5, acc_small)) / max(np.sum(acc_small), 1)
    # Binary consistency.
    binary = np.sum(device != bench.astype(device.dtype)) / bench.size
    return (cos, max_abs, ratios, eb, rmse, small_ratio, max_rel, mean_rel, rel_err_ratio, abs_err_ratio,
            inf_nan_ratio, acc_rel, acc_abs, binary)


def probe_rate(binary, case):
    """G elements/s of probe's one-thread run_ut-set benchmark `case` (F32vsF64 / BF16vsF64)."""
    out = subprocess.run([binary, f"--benchmark_filter=BM_{case}_RunUtSet/1/", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["benchmarks"][0]["Gelem_per_s"]


if __name__ == "__main__":  # benchmarks/metrics_cli_vs_numpy.py imports metrics()
    rng = np.random.default_rng(1)
    bench64 = rng.standard_normal(N)
    probe_bin = sys.argv[1] if len(sys.argv) > 1 else None
    for case, name, device, bench, eps, sv, atol in [
            ("F32vsF64", "f32_vs_f64", bench64.astype(np.float32), bench64, np.finfo(np.float64).eps, 2**-20, 2**-30),
            ("BF16vsF64", "bf16_vs_f64 (msprobe: both float32)",
             (bench64.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32), bench64.astype(np.float32),
             2**-8, 2**-10, 1e-16)]:
        dt = float("inf")
        for _ in range(2):  # the better of two: the first run also pays the page faults of numpy's temporaries
            t0 = time.perf_counter()
            metrics(bench, device, eps, sv, atol)
            dt = min(dt, time.perf_counter() - t0)
        rate = N / dt / 1e9
        line = f"{name}: numpy {dt:.2f} s, {rate:.4f} G elements/s (one thread, numpy {np.__version__})"
        if probe_bin:
            p = probe_rate(probe_bin, case)
            line += f"; probe {p:.3f} G elements/s one thread = {p / rate:.1f}x numpy"
        print(line, flush=True)
