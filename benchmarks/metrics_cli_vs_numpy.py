#!/usr/bin/python3
"""`probe metrics BENCH DEVICE --api linear` end to end (process start, loading both .npy files, every metric,
output) against numpy computing msprobe's run_ut metric set (metrics_numpy.metrics) on the same data.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3 \\
         benchmarks/metrics_cli_vs_numpy.py build/bin/probe DATA_DIR [--n 16777216] [--repeat 5] [--other PROBE]
DATA_DIR receives bench.npy (float64) and device.npy (float32) once (n elements each; kept for later runs).
numpy and probe runs alternate in the same window, page cache warm; each line prints the 1-minute load.
numpy is timed at its most favourable: the arrays already in memory, one warm-up round, and its temporaries'
pages reused (this script re-executes itself with glibc's malloc told never to return memory to the kernel;
with fresh mmap'd temporaries numpy's rounds vary 6x on a VM; --numpy-fresh-pages keeps glibc's default).
The ratio is numpy's best round over probe's median whole-process wall time (start, load, every metric,
output). Peak RSS of probe is /usr/bin/time's maximum resident set, against the two files' size.
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


# glibc tunables for numpy's process only: every allocation from the heap (no mmap), never trimmed.
NUMPY_MALLOC = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776"
# probe runs with the caller's environment, without the tunables above.
PROBE_ENV = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}


def run_probe(binary, bench, device):
    # Through /usr/bin/time: a child forked from this (large) Python process would inherit its peak RSS.
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", binary, "metrics", bench, device, "--api", "linear"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=PROBE_ENV)
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
    ap.add_argument("--numpy-fresh-pages", action="store_true")
    a = ap.parse_args()
    if not a.numpy_fresh_pages and os.environ.get("GLIBC_TUNABLES") != NUMPY_MALLOC:
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, "GLIBC_TUNABLES": NUMPY_MALLOC})
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
    metrics(bench, device, eps, small_value, atol)  # numpy's warm-up round: its temporaries' first page faults
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
    best, npm = min(numpy_times), statistics.median(numpy_times)
    pages = "fresh pages" if a.numpy_fresh_pages else "pages reused"
    print(f"n = {a.n}, inputs {inputs / 2**20:.0f} MiB; numpy {np.__version__} compute only ({pages}): best "
          f"{best:.3f} s, median {npm:.3f} s")
    for name, b in binaries:
        walls = [x[0] for x in probe[name]]
        wall = statistics.median(walls)
        rss = max(x[1] for x in probe[name])
        print(f"{name} ({b}) end to end median {wall:.3f} s (best {min(walls):.3f} s) = {best / wall:.1f}x numpy's "
              f"best ({npm / wall:.1f}x its median); peak RSS {rss / 2**20:.0f} MiB = {100 * rss / inputs:.1f}% of "
              f"the inputs; load {load():.2f}")
    if a.other:
        ratio = statistics.median(o[0] / p[0] for p, o in zip(probe["probe"], probe["other"]))
        print(f"other/probe wall, median of per-round ratios: {ratio:.2f}x")


if __name__ == "__main__":
    main()
