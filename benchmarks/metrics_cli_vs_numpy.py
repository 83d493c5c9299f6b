#!/usr/bin/python3
"""`probe metrics BENCH DEVICE` end to end (process start, loading both .npy files, the metrics, output) against
numpy on the same data, the same work on both sides: `--metrics run_ut` (run_ut's metric set and verdict, the
benchmark standard) against numpy's msprobe run_ut metric set (metrics_numpy.metrics), and `--api linear`
(every metric: that set plus the ULP, dump-compare and MindSpore metrics) against numpy computing each of
those with msprobe's formula. Also numpy's in-memory copy of the inputs, and the floor (benchmarks'
probe_readfloor: a whole process that reads every byte of both files on every core, mmap or pread, the
faster counts).

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3 \\
         benchmarks/metrics_cli_vs_numpy.py build/bin/probe DATA_DIR [--n 16777216] [--repeat 5] [--other PROBE]
DATA_DIR receives bench.npy (float64) and device.npy (float32) once (n elements each; kept for later runs).
numpy, probe and floor runs alternate in the same window, page cache warm: the inputs are evicted once and read
by probe's warm-up run (page_cache.py says why; --keep-page-cache leaves them as found); each line prints the
1-minute load.
numpy is timed at its most favourable: the arrays already in memory, one warm-up round, and its temporaries'
pages reused (this script re-executes itself with glibc's malloc told never to return memory to the kernel;
with fresh mmap'd temporaries numpy's rounds vary 6x on a VM; --numpy-fresh-pages keeps glibc's default).
Ratios are numpy's best round over probe's median whole-process wall time (start, load, metrics, output),
and probe's median over the floor's. Peak RSS of probe is /usr/bin/time's maximum resident set, against the
two files' size. --other PROBE interleaves a second binary's every-metric run (e.g. a build of main before a
change) for an A/B ratio."""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_numpy import metrics  # noqa: E402
import page_cache  # noqa: E402


def load():
    return os.getloadavg()[0]


def ulp_metrics(bench, device):
    """ULP error of a float32 device output (spec precheck.md 2.9: float64 arithmetic, min_eb -126, 23 bits)."""
    abs_bench = np.abs(bench)
    with np.errstate(divide="ignore"):
        eb = np.where(abs_bench == 0, 0, np.floor(np.log2(abs_bench)))
    eb = np.maximum(eb, -126)
    ulp_err = np.abs((device.astype(np.float64) - bench) * np.exp2(23 - eb))
    return ulp_err.max(), ulp_err.mean(), np.sum(ulp_err > 32) / ulp_err.size


def dump_compare_metrics(bench, device):
    """msprobe compare's real-data metrics (spec dump-and-compare.md step 3): inf/nan zeroed, float64."""
    n = device.reshape(-1).astype(np.float64)
    b = bench.reshape(-1).astype(np.float64)
    n = np.where(np.isfinite(n), n, 0)
    b = np.where(np.isfinite(b), b, 0)
    zero = b == 0
    eps = np.finfo(np.float64).eps
    n_eps, b_eps = np.where(zero, n + eps, n), np.where(zero, eps, b)
    rel = np.abs(n_eps - b_eps) / np.abs(b_eps)
    cosine = np.dot(n, b) / (np.linalg.norm(n) * np.linalg.norm(b))
    euc = np.linalg.norm(n - b)
    max_abs = np.max(np.abs(n - b))
    return cosine, euc, max_abs, rel.max(), np.sum(rel < 0.001) / rel.size, np.sum(rel < 0.005) / rel.size


def mindspore_metrics(bench, device):
    """The MindSpore checker's Cosine, MaxAbsErr and MaxRelativeErr (spec precheck.md 7)."""
    t = device.astype(np.float64)
    cosine = (1e-8 + np.dot(bench, t)) / (1e-8 + np.linalg.norm(bench) * np.linalg.norm(t))
    abs_err = np.abs(bench - t)
    return cosine, abs_err.max(), np.max(abs_err / (np.abs(bench) + (bench == 0) * 1e-8))


def printed_metrics(bench, device, eps, small_value, atol):
    """Every metric `probe metrics --api linear` prints, each the way msprobe computes it with numpy."""
    return (metrics(bench, device, eps, small_value, atol), ulp_metrics(bench, device),
            dump_compare_metrics(bench, device), mindspore_metrics(bench, device))


def run_floor(floor, mode, bench, device):
    """Whole-process wall time of benchmarks' probe_readfloor (reads every byte of both inputs)."""
    t0 = time.perf_counter()
    subprocess.run([floor, mode, bench, device], check=True, stdout=subprocess.DEVNULL, env=PROBE_ENV)
    return time.perf_counter() - t0


# glibc tunables for numpy's process only: every allocation from the heap (no mmap), never trimmed.
NUMPY_MALLOC = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776"
# probe runs with the caller's environment, without the tunables above.
PROBE_ENV = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}


# probe's two cases: the flags, and the numpy case doing the same work.
PROBE_CASES = {"every metric": (["--api", "linear"], "every printed metric"),
               "run_ut set": (["--metrics", "run_ut"], "run_ut set")}


def run_probe(binary, bench, device, flags):
    # Through /usr/bin/time: a child forked from this (large) Python process would inherit its peak RSS.
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", binary, "metrics", bench, device] + flags,
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
    ap.add_argument("--floor", help="probe_readfloor binary (default: ../benchmarks/ next to PROBE's directory)")
    ap.add_argument("--keep-page-cache", action="store_true",
                    help="do not evict the inputs before the warm-up (see page_cache.py)")
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
    # (name, binary, flags): probe's cases, and the other binary's every-metric run.
    runs = [(f"probe {case}", a.probe, flags) for case, (flags, _) in PROBE_CASES.items()]
    runs += [("other every metric", a.other, PROBE_CASES["every metric"][0])] if a.other else []
    floor = a.floor or os.path.join(os.path.dirname(os.path.abspath(a.probe)), "..", "benchmarks",
                                    "probe_readfloor")
    floor_modes = ["--mmap", "--pread"] if os.access(floor, os.X_OK) else []
    if not a.keep_page_cache:
        page_cache.evict([bench_path, device_path])
    for _, b, flags in runs:  # warm the page cache and the binaries
        run_probe(b, bench_path, device_path, flags)
    for mode in floor_modes:
        run_floor(floor, mode, bench_path, device_path)
    # numpy's warm-up round: its temporaries' first page faults.
    printed_metrics(bench, device, eps, small_value, atol)
    numpy_cases = {"run_ut set": lambda: metrics(bench, device, eps, small_value, atol),
                   "every printed metric": lambda: printed_metrics(bench, device, eps, small_value, atol),
                   "plain copy": lambda: (bench.copy(), device.copy())}
    numpy_times = {c: [] for c in numpy_cases}
    probe = {name: [] for name, _, _ in runs}
    floors = {m: [] for m in floor_modes}
    for r in range(a.repeat):
        line = f"round {r}: numpy"
        for case, fn in numpy_cases.items():
            t0 = time.perf_counter()
            fn()
            numpy_times[case].append(time.perf_counter() - t0)
            line += f" {case} {numpy_times[case][-1]:.3f} s,"
        for name, b, flags in runs:
            wall, rss, cpu = run_probe(b, bench_path, device_path, flags)
            probe[name].append((wall, rss, cpu))
            line += f" {name} {wall:.3f} s (cpu {cpu:.2f} s, peak RSS {rss / 2**20:.0f} MiB);"
        for mode in floor_modes:
            floors[mode].append(run_floor(floor, mode, bench_path, device_path))
            line += f" floor {mode[2:]} {floors[mode][-1]:.3f} s;"
        print(line + f" load {load():.2f}", flush=True)
    print(page_cache.describe([bench_path, device_path], not a.keep_page_cache))
    pages = "fresh pages" if a.numpy_fresh_pages else "pages reused"
    print(f"n = {a.n}, inputs {inputs / 2**20:.0f} MiB; numpy {np.__version__}, arrays in memory ({pages}):")
    for case, times in numpy_times.items():
        print(f"  numpy {case}: best {min(times):.3f} s, median {statistics.median(times):.3f} s")
    floor_wall = None
    if floor_modes:
        medians = {m: statistics.median(t) for m, t in floors.items()}
        floor_wall = min(medians.values())
        print("  floor (whole process reading both files on every core, " + ", ".join(
            f"{m[2:]} median {t:.3f} s" for m, t in medians.items()) + ")")
    else:
        print(f"  floor: not measured ({floor} not built)")
    copy_best = min(numpy_times["plain copy"])
    for name, b, flags in runs:
        walls = [x[0] for x in probe[name]]
        wall = statistics.median(walls)
        rss = max(x[1] for x in probe[name])
        same_work = PROBE_CASES[name.split(" ", 1)[1]][1]
        print(f"{name} ({b} metrics ... {' '.join(flags)}) end to end: median {wall:.3f} s (best {min(walls):.3f} "
              f"s); peak RSS {rss / 2**20:.0f} MiB = {100 * rss / inputs:.1f}% of the inputs")
        print(f"  = {min(numpy_times[same_work]) / wall:.1f}x numpy's best {same_work} (the same work); "
              f"{wall / copy_best:.2f}x numpy's in-memory copy of the inputs" +
              (f"; {wall / floor_wall:.2f}x the floor" if floor_wall else ""))
    if a.other:
        ratio = statistics.median(
            o[0] / p[0] for p, o in zip(probe["probe every metric"], probe["other every metric"]))
        print(f"other/probe wall, median of per-round ratios: {ratio:.2f}x")
    print(f"load {load():.2f}")


if __name__ == "__main__":
    main()
