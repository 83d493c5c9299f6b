#!/usr/bin/python3
"""`probe metrics BENCH DEVICE --api linear` end to end (process start, loading both .npy files, every metric,
output) against numpy computing msprobe's run_ut metric set (metrics_numpy.metrics) on the same data.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3 \\
         benchmarks/metrics_cli_vs_numpy.py build/bin/probe DATA_DIR [--n 16777216] [--repeat 5] [--other PROBE]
DATA_DIR receives bench.npy (float64) and device.npy (float32) once (n elements each; kept for later runs).
numpy and probe runs alternate in the same window, page cache warm; each line prints the 1-minute load. The
ratio is numpy's compute-only time (the arrays already in memory, its most favourable case) over probe's
whole process wall time. Peak RSS of probe is /usr/bin/time's maximum resident set, against the two files' size.
--other PROBE interleaves a second binary (e.g. a build of main before a change) for an A/B ratio."""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_numpy import metrics  # noqa: E402


def load():
    return os.getloadavg()[0]


def run_probe(binary, bench, device):
    # Through /usr/bin/time: a child forked from this (large) Python process would inherit its peak RSS.
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", binary, "metrics", bench, device, "--api", "linear"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{binary} metrics failed ({proc.returncode}): {proc.stderr}")
    rss_kib, user, system = proc.stderr.split()[-3:]
    return wall, int(rss_kib) * 1024, float(user) + float(system)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe")
    ap.add_argument("data_dir")
    ap.add_argument("--n", type=int, default=16 << 20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--other")
    a = ap.parse_args()
    os.makedirs(a.data_dir, exist_ok=True)
    bench_path, device_path = (os.path.join(a.data_dir, f) for f in ("bench.npy", "device.npy"))
    if not (os.path.exists(bench_path) and np.load(bench_path, mmap_mode="r").size == a.n):
        rng = np.random.default_rng(1)
        bench = rng.standard_normal(a.n)
        np.save(bench_path, bench)
        np.save(device_path, (bench * (1 + 1e-6 * rng.standard_normal(a.n))).astype(np.float32))
    inputs = os.path.getsize(bench_path) + os.path.getsize(device_path)
    bench, device = np.load(bench_path), np.load(device_path)
    eps, small_value, atol = np.finfo(np.float64).eps, 2**-20, 2**-30
    binaries = [("probe", a.probe)] + ([("other", a.other)] if a.other else [])
    for _, b in binaries:  # warm the page cache and the binaries
        run_probe(b, bench_path, device_path)
    numpy_times, probe = [], {name: [] for name, _ in binaries}
    for r in range(a.repeat):
        t0 = time.perf_counter()
        metrics(bench, device, eps, small_value, atol)
        numpy_times.append(time.perf_counter() - t0)
        line = f"round {r}: numpy {numpy_times[-1]:.3f} s"
        for name, b in binaries:
            wall, rss, cpu = run_probe(b, bench_path, device_path)
            probe[name].append((wall, rss, cpu))
            line += f"; {name} {wall:.3f} s (cpu {cpu:.2f} s, peak RSS {rss / 2**20:.0f} MiB)"
        print(line + f"; load {load():.2f}", flush=True)
    npm = statistics.median(numpy_times)
    print(f"n = {a.n}, inputs {inputs / 2**20:.0f} MiB; numpy {np.__version__} compute only, median {npm:.3f} s")
    for name, b in binaries:
        wall = statistics.median(x[0] for x in probe[name])
        rss = max(x[1] for x in probe[name])
        print(f"{name} ({b}) end to end median {wall:.3f} s = {npm / wall:.1f}x numpy; peak RSS {rss / 2**20:.0f} "
              f"MiB = {100 * rss / inputs:.1f}% of the inputs; load {load():.2f}")
    if a.other:
        ratio = statistics.median(o[0] / p[0] for p, o in zip(probe["probe"], probe["other"]))
        print(f"other/probe wall, median of per-round ratios: {ratio:.2f}x")


if __name__ == "__main__":
    main()
