#!/usr/bin/python3
"""run_ut across MPI ranks on one machine (issue 33): throughput with 1, 2 and 4 ranks against the plain
process, the cost of one API split into load / bench / metrics / gather, and the inputs of the scaling model
in docs/distributed.md.

    /usr/bin/python3 benchmarks/mpi_scaling.py build/bin/probe /tmp/llama_dump [--ranks 1 2 4] [--repeat 3]

The dump is one written by benchmarks/make_llama_dump.py (its floor.json holds the tensor bytes and float64
GEMM FLOPs). Each rank gets max(1, cores // ranks) threads, so 4 ranks on a 2-core machine are oversubscribed
(said in the output). Every timing is the median of --repeat runs with the page cache warm. The breakdown:
  load    reading the tensor files once (as run_ut_floor.py measures it),
  bench   the dump's float64 GEMM FLOPs at numpy's BLAS rate (the bench's dominant cost),
  metrics+other  the plain run minus both,
  gather  rank 0's seconds waiting for and writing the other ranks' rows, from probe's own
          "ranks N: ..." line (it includes the ranks' imbalance at each round's end).
Every run's CSVs are checked byte-identical to the plain run's.
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ut_floor  # noqa: E402

TS = "20260101000000"
RANKS_LINE = re.compile(r"ranks (\d+): (\d+) rounds, ([0-9.]+) MB of rows gathered; rank 0 waited ([0-9.]+) s "
                        r"for them and wrote them in ([0-9.]+) s, of ([0-9.]+) s")


def run(cmd, out):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt, r.stdout


def same_csvs(a, b):
    names = sorted(n for n in os.listdir(a) if n.endswith(".csv"))
    return names == sorted(n for n in os.listdir(b) if n.endswith(".csv")) and all(
        filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("dump")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mpirun", default="mpirun")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    floor = json.load(open(os.path.join(args.dump, "floor.json")))
    dump_json = os.path.join(args.dump, "dump.json")
    apis = floor["forward_entries"]
    gb = floor["tensor_bytes"] / 1e9
    work = tempfile.mkdtemp(prefix="mpi_scaling-")
    try:
        base = [args.probe, "run_ut", "-api_info", dump_json, "--timestamp", TS, "-q"]
        plain_out = os.path.join(work, "plain")
        run(base + ["-o", plain_out, "-n", str(cores)], plain_out)  # warm-up: page cache
        reads = [run_ut_floor.read_seconds(os.path.join(args.dump, "dump_tensor_data"))[0]
                 for _ in range(args.repeat)]
        rate = statistics.median([run_ut_floor.blas_flops_per_second() for _ in range(args.repeat)])
        t_load, t_bench = statistics.median(reads), floor["gemm_flops_float64"] / rate
        plain = statistics.median(run(base + ["-o", plain_out, "-n", str(cores)], plain_out)[0]
                                  for _ in range(args.repeat))
        print(f"dump: {gb:.3f} GB, {apis} forward APIs (+ backward), "
              f"{floor['gemm_flops_float64'] / 1e9:.1f} GFLOP float64 GEMM; {cores} cores  [{run_ut_floor.load()}]")
        print(f"plain process, {cores} threads: {plain:.2f} s, {gb / plain:.3f} GB/s, {apis / plain:.1f} API/s")
        print(f"per API (plain, {cores} threads): load {t_load / apis * 1e3:.1f} ms, bench {t_bench / apis * 1e3:.1f} ms, "
              f"metrics+other {(plain - t_load - t_bench) / apis * 1e3:.1f} ms")
        for n in args.ranks:
            threads = max(1, cores // n)
            out = os.path.join(work, f"n{n}")
            cmd = [args.mpirun, "--oversubscribe", "-n", str(n)] + base + ["-o", out, "-n", str(threads)]
            runs = [run(cmd, out) for _ in range(args.repeat)]
            t = statistics.median(r[0] for r in runs)
            if not same_csvs(plain_out, out):
                sys.exit(f"-n {n}: the CSVs differ from the plain run's")
            gather = ""
            m = RANKS_LINE.search(runs[-1][1])
            if m:
                rounds, mb, waited, wrote = int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))
                gather = (f"; {rounds} rounds, {mb:.3f} MB of rows ({mb * 1e6 / apis:.0f} B/API), rank 0 waited "
                          f"{waited:.2f} s + wrote {wrote:.2f} s ({(waited + wrote) / t:.1%} of the run; "
                          f"gather per API {(waited + wrote) / apis * 1e3:.2f} ms)")
            over = " (oversubscribed)" if n * threads > cores else ""
            print(f"mpirun -n {n} x {threads} threads{over}: {t:.2f} s, {gb / t:.3f} GB/s, {apis / t:.1f} API/s, "
                  f"{plain / t:.2f}x the plain process{gather}  [{run_ut_floor.load()}]", flush=True)
        print("CSVs byte-identical to the plain process for every rank count")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
