#!/usr/bin/python3
"""The Python module `probe` against plain numpy/torch, in one process:

1. probe.metrics on 64M-element arrays (float64 bench, float32 device, read in place) against msprobe's
   run_ut metric set written in numpy (metrics_numpy.metrics, one numpy expression per metric as msprobe
   writes them): probe with parts="run_ut" (the same set, the verdict computed in the same pass: the probe
   profile's error bound), and with every metric (parts="all": plus ULP, dump compare and MindSpore).
2. probe.torch.Dispatch's cost per aten op on a small model (an MLP's forward and backward) against the same
   step unchecked and under an empty TorchDispatchMode (what Python's dispatch costs by itself): the time
   inside the `with` block (handing each op to the C++ checker, which copies its tensors; with one worker the
   queue fills and the block waits for the float64 re-runs) and the time including the end of the block
   (the last re-runs and the CSVs).

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 \\
         benchmarks/python_module.py [--n 67108864] [--repeat 3] [--steps 20]
Times are the best of --repeat rounds, numpy and probe alternating."""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_numpy import metrics as numpy_metrics  # noqa: E402

import probe  # noqa: E402


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_metrics(n, repeat):
    rng = np.random.default_rng(1)
    bench = rng.standard_normal(n)
    device = bench.astype(np.float32)
    eps, sv, atol = np.finfo(np.float64).eps, 2**-20, 2**-30
    numpy_metrics(bench, device, eps, sv, atol)  # warm-up: numpy's temporaries' pages
    probe.metrics(bench, device, parts="run_ut")
    t_np, t_run_ut, t_all = [], [], []
    for _ in range(repeat):
        t_np.append(best(lambda: numpy_metrics(bench, device, eps, sv, atol), 1))
        t_run_ut.append(best(lambda: probe.metrics(bench, device, parts="run_ut"), 1))
        t_all.append(best(lambda: probe.metrics(bench, device), 1))
    t_np, t_run_ut, t_all = min(t_np), min(t_run_ut), min(t_all)
    print(f"metrics, {n} elements (float64 bench, float32 device), {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}:")
    print(f"  numpy, msprobe's run_ut set    {t_np:8.3f} s")
    print(f"  probe.metrics parts='run_ut'   {t_run_ut:8.3f} s   {t_np / t_run_ut:6.1f}x numpy")
    print(f"  probe.metrics every metric     {t_all:8.3f} s   {t_np / t_all:6.1f}x numpy")


def bench_dispatch(steps, repeat):
    import torch
    import probe.torch as pt
    from torch.utils._python_dispatch import TorchDispatchMode

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64),
                                torch.nn.LayerNorm(64), torch.nn.Linear(64, 10))
    x = torch.randn(32, 64)

    def step():
        model.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), torch.arange(32) % 10)
        loss.backward()

    for _ in range(3):
        step()
    plain = best(lambda: [step() for _ in range(steps)], repeat) / steps

    class Null(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    def null_steps():
        with Null():
            for _ in range(steps):
                step()

    null = best(null_steps, repeat) / steps
    inside, total, ops = [], [], 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            mode = pt.Dispatch(d)
            t0 = time.perf_counter()
            with mode:
                for _ in range(steps):
                    step()
                t1 = time.perf_counter()
            t2 = time.perf_counter()
            inside.append((t1 - t0) / steps)
            total.append((t2 - t0) / steps)
            s = mode.summary
            ops = s["calls"] + sum(mode.unsupported.values())
    inside, total = min(inside), min(total)

    def overflow_steps():
        with tempfile.TemporaryDirectory() as d:
            with pt.Dispatch(d, overflow=True):
                for _ in range(steps):
                    step()

    overflow = best(overflow_steps, repeat) / steps
    per_step_ops = ops / steps
    print(f"dispatch mode, MLP 64-128-64 + LayerNorm, batch 32, forward + backward, {per_step_ops:.0f} aten ops "
          f"per step ({s['passed']} checked of {s['calls']} handed over in {steps} steps, "
          f"{s['blacklisted']} black-listed, {len(mode.unsupported)} op kinds without runner):")
    print(f"  unchecked step                 {plain * 1e3:8.3f} ms")
    print(f"  empty TorchDispatchMode        {null * 1e3:8.3f} ms   "
          f"{(null - plain) / per_step_ops * 1e6:7.1f} us per op (Python's dispatch alone)")
    print(f"  checked, inside the block      {inside * 1e3:8.3f} ms   "
          f"{(inside - plain) / per_step_ops * 1e6:7.1f} us per op")
    print(f"  checked, block ended (flushed) {total * 1e3:8.3f} ms   "
          f"{(total - plain) / per_step_ops * 1e6:7.1f} us per op")
    print(f"  overflow mode (scan only)      {overflow * 1e3:8.3f} ms   "
          f"{(overflow - plain) / per_step_ops * 1e6:7.1f} us per op")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    bench_metrics(args.n, args.repeat)
    bench_dispatch(args.steps, args.repeat)
