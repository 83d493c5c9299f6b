#!/usr/bin/python3
"""Verdicts per direction of `probe run_ut` on the real-model dumps (make_real_model_dumps.py), against
what was injected (faults.json): a confusion table per profile.

  /usr/bin/python3 tests/data/run_ut/confusion_table.py build/bin/probe [OUT_DIR]

Truth: a forward (backward) direction is "faulty" when faults.json names one of its forward (backward)
tensors, "cpu-bf16-inexact" when device_inexact.json lists it (CPU torch's bf16 kernel itself misses
msprobe's bound), else "clean". Cells count APIs by the verdict probe wrote (pass, Warning, error, SKIP, and
"-" for a backward with no dumped gradient).
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(probe, dump, profile, out):
    os.makedirs(out, exist_ok=True)
    subprocess.run([probe, "run_ut", "-api_info", os.path.join(dump, "dump.json"), "-o", out, "-q",
                    "--timestamp", "20260101000000", "--profile", profile, "-n", "2"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "accuracy_checking_result_20260101000000.csv"), encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))[1:]
    return {r[0]: (r[1], r[2] if r[2].strip() else "-") for r in rows}


def main():
    probe = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    kinds = ["pass", "Warning", "error", "SKIP", "-"]
    for profile in ("probe", "msprobe"):
        table = {}
        for dump in sorted(glob.glob(os.path.join(HERE, "real_*"))):
            faults = {}
            fpath = os.path.join(dump, "faults.json")
            if os.path.exists(fpath):
                faults = json.load(open(fpath))
            inexact = []
            ipath = os.path.join(dump, "device_inexact.json")
            if os.path.exists(ipath):
                inexact = json.load(open(ipath))
            res = run(probe, dump, profile, os.path.join(out, profile, os.path.basename(dump)))
            for api, (fwd, bwd) in res.items():
                for direction, verdict in (("forward", fwd), ("backward", bwd)):
                    faulty = any(k.startswith(f"{api}.{direction}.") for k in faults)
                    truth = "faulty" if faulty else "cpu-bf16-inexact" if f"{api}.{direction}" in inexact \
                        else "clean"
                    key = (direction, truth)
                    table.setdefault(key, {k: 0 for k in kinds})
                    table[key][verdict if verdict in kinds else "-"] += 1
        print(f"profile {profile}")
        print("| direction | truth | " + " | ".join(kinds) + " |")
        print("|---|---|" + "---|" * len(kinds))
        for (direction, truth), counts in sorted(table.items(), key=lambda kv: (kv[0][0] != "forward", kv[0][1])):
            print(f"| {direction} | {truth} | " + " | ".join(str(counts[k]) for k in kinds) + " |")
        print()


if __name__ == "__main__":
    main()
