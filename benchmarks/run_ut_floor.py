#!/usr/bin/python3
"""Times `probe run_ut` end to end on a dump written by benchmarks/make_llama_dump.py and compares it
with the dump's floor (issue 13): the time to read its tensor bytes plus its float64 GEMM FLOPs at
the machine's measured BLAS rate (numpy's float64 matmul, which Debian runs on OpenBLAS), both measured
in this run. Also reports probe's peak RSS (the kernel's high-water mark of the child process).

    /usr/bin/python3 benchmarks/run_ut_floor.py build/apps/probe/probe /tmp/llama_dump [--repeat 3] [-n 2]

Each timing is the median of --repeat runs (page cache warm: the tensor files are evicted once and read by an
untimed probe run first, see page_cache.py; --keep-page-cache leaves them as found); the load average
is printed with each, since the machine may be shared.
"""
import argparse
import json
import mmap
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import page_cache  # noqa: E402


def load():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def read_seconds(tensor_dir):
    """Seconds to read every tensor file once into a reused buffer (page cache warm)."""
    # An anonymous mapping, so page aligned: the kernel's copy into a buffer 8 or 16 bytes off a 32-byte
    # boundary (where a bytearray's data lies) runs at a third of the speed on AMD Zen 3.
    buf = mmap.mmap(-1, 64 << 20)
    view = memoryview(buf)
    t0 = time.perf_counter()
    total = 0
    for name in sorted(os.listdir(tensor_dir)):
        with open(os.path.join(tensor_dir, name), "rb", buffering=0) as f:
            while True:
                n = f.readinto(view)
                if not n:
                    break
                total += n
    return time.perf_counter() - t0, total


def blas_flops_per_second(size=2048, repeat=3):
    """float64 GEMM rate of numpy's BLAS on all cores (best of `repeat`)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((size, size)), rng.standard_normal((size, size))
    a @ b
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * size ** 3 / best


def run_probe(probe, dump_json, threads, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [probe, "run_ut", "-api_info", dump_json, "-o", out, "-n", str(threads), "--timestamp",
           "20260101000000", "-q"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"probe run_ut failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt


def peak_rss_mb(probe, dump_json, threads, out):
    """Peak RSS of one run, from wait4's rusage of that child alone."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [probe, "run_ut", "-api_info", dump_json, "-o", out, "-n", str(threads), "--timestamp",
           "20260101000000", "-q"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("probe run_ut failed while measuring RSS")
    return usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("dump")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-n", "--threads", type=int, default=2)
    ap.add_argument("--keep-page-cache", action="store_true",
                    help="do not evict the tensor files before probe's warm-up run (see page_cache.py)")
    args = ap.parse_args()
    floor = json.load(open(os.path.join(args.dump, "floor.json")))
    dump_json = os.path.join(args.dump, "dump.json")
    tensor_dir = os.path.join(args.dump, "dump_tensor_data")
    out = tempfile.mkdtemp(prefix="run_ut_floor-")
    try:
        tensor_files = [os.path.join(tensor_dir, name) for name in sorted(os.listdir(tensor_dir))]
        if not args.keep_page_cache:
            page_cache.evict(tensor_files)
        run_probe(args.probe, dump_json, args.threads, out)  # warm-up, untimed: reads the dump cold
        print(page_cache.describe(tensor_files, not args.keep_page_cache))
        reads = [read_seconds(tensor_dir)[0] for _ in range(args.repeat)]
        rates = [blas_flops_per_second() for _ in range(args.repeat)]
        t_read, rate = statistics.median(reads), statistics.median(rates)
        t_gemm = floor["gemm_flops_float64"] / rate
        t_floor = t_read + t_gemm
        print(f"dump: {floor['tensor_bytes'] / 1e9:.3f} GB in {floor['tensor_files']} files, "
              f"{floor['forward_entries']} forward + {floor['backward_entries']} backward entries, "
              f"{floor['gemm_flops_float64'] / 1e9:.1f} GFLOP float64 GEMM")
        print(f"floor: read {t_read:.3f} s ({floor['tensor_bytes'] / t_read / 1e9:.2f} GB/s) + GEMM "
              f"{t_gemm:.3f} s (BLAS {rate / 1e9:.1f} GFLOP/s) = {t_floor:.3f} s  [{load()}]")
        times = []
        for i in range(args.repeat):
            times.append(run_probe(args.probe, dump_json, args.threads, out))
            print(f"probe run_ut -n {args.threads}: run {i + 1}: {times[-1]:.2f} s  [{load()}]", flush=True)
        t = statistics.median(times)
        rss = peak_rss_mb(args.probe, dump_json, args.threads, out)
        print(f"probe run_ut median {t:.2f} s = {t / t_floor:.2f}x floor; peak RSS {rss:.0f} MiB "
              f"({rss * 1048576 / floor['tensor_bytes']:.1%} of the dump's tensor bytes)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
