#!/usr/bin/env python3
"""Large run_ut details CSVs for timing `probe api_precision_compare` (docs/distributed.md): the conformance
pair tests/data/conformance/msprobe_e2e/head repeated COPIES times, each copy's APIs renamed (call counter
+ 100 x copy) so that every name is unique, and a one-row GPU CSV (the NPU CSV parsed, nothing judged).

    benchmarks/make_precision_csvs.py OUT_DIR [COPIES=3000]
    -> OUT_DIR/{npu,gpu}_big.csv, OUT_DIR/gpu_one.csv
"""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "tests", "data", "conformance", "msprobe_e2e", "head")


def main():
    out = sys.argv[1]
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    os.makedirs(out, exist_ok=True)
    for side in ("npu", "gpu"):
        with open(os.path.join(SRC, f"{side}_accuracy_checking_details_20250101000000.csv"), newline="",
                  encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
        head, body = rows[0], rows[1:]
        with open(os.path.join(out, f"{side}_big.csv"), "w", newline="", encoding="utf-8-sig") as f:
            w = csv.writer(f)
            w.writerow(head)
            for k in range(copies):
                for r in body:
                    r = list(r)
                    r[0] = re.sub(r"^([^.]+\.[^.]+)\.(\d+)\.", lambda m: f"{m.group(1)}.{int(m.group(2)) + k * 100}.",
                                  r[0], count=1)
                    w.writerow(r)
        if side == "gpu":
            with open(os.path.join(out, "gpu_one.csv"), "w", newline="", encoding="utf-8-sig") as f:
                w = csv.writer(f)
                w.writerow(head)
                w.writerow(body[0])


if __name__ == "__main__":
    main()
