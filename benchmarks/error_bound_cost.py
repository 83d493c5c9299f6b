#!/usr/bin/python3
"""What the error-bound verdict (DECISIONS D14) costs: `probe run_ut` on a dump and `probe metrics` on a tensor
pair, each run in the `probe` profile (D14, its magnitude benches and its scan) and in the `msprobe` profile
(run_ut's old rule only) of the same binary, alternately (A B A B ...), so that a drifting machine moves both.
Prints the median CPU seconds (user + system of the child) of each side and their ratio.

    /usr/bin/python3 benchmarks/error_bound_cost.py build/bin/probe --dump /tmp/llama/dump.json \\
        [--pair BENCH.npy DEVICE.npy] [--repeat 5] [-n 2]

The dump: benchmarks/make_llama_dump.py /tmp/llama --layers 2. Without --pair a 16M-element pair (float64
bench, float32 device) is written to a temporary directory with numpy.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile

import numpy as np


def cpu_seconds(cmd):
    """User + system seconds of one child run (it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def alternate(name, make_cmd, repeat):
    """Runs the probe-profile and msprobe-profile commands in turn; prints the medians and their ratio."""
    cpu = {"probe": [], "msprobe": []}
    for profile in cpu:  # one untimed warm-up each (page cache, first-touch)
        cpu_seconds(make_cmd(profile))
    for _ in range(repeat):
        for profile in cpu:
            cpu[profile].append(cpu_seconds(make_cmd(profile)))
    p, m = statistics.median(cpu["probe"]), statistics.median(cpu["msprobe"])
    ratios = [a / b for a, b in zip(cpu["probe"], cpu["msprobe"])]
    print(f"{name}: probe profile {p:.3f} s CPU, msprobe profile {m:.3f} s CPU, ratio {p / m:.2f} "
          f"(pairs {min(ratios):.2f}..{max(ratios):.2f}; load {os.getloadavg()[0]:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("--dump", help="dump.json for probe run_ut")
    ap.add_argument("--pair", nargs=2, metavar=("BENCH", "DEVICE"), help="tensor files for probe metrics")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-n", "--threads", type=int, default=2)
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="probe-d14-cost-")
    try:
        if args.dump:
            out = os.path.join(scratch, "run_ut")
            os.makedirs(out)
            alternate("run_ut", lambda profile: [args.probe, "run_ut", "-api_info", args.dump, "-o", out, "-q",
                                                 "-n", str(args.threads), "--profile", profile], args.repeat)
        pair = args.pair
        if not pair:
            rng = np.random.default_rng(1)
            bench = rng.standard_normal(1 << 24)
            pair = [os.path.join(scratch, "bench.npy"), os.path.join(scratch, "device.npy")]
            np.save(pair[0], bench)
            np.save(pair[1], bench.astype(np.float32))
        alternate("metrics --metrics run_ut",
                  lambda profile: [args.probe, "metrics", pair[0], pair[1], "--metrics", "run_ut", "--profile",
                                   profile], args.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
