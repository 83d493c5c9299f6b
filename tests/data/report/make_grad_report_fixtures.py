#!/usr/bin/python3
"""Fixtures of the grad_compare page (tests/report/GradReportTest.cpp): a grad_compare output directory written
with Python's csv module in msprobe's similarities.csv layout (a row "step,<steps>", one row per parameter,
then "summary"), and what the page must embed for it: the steps, the rows as Python reads them and the first
suspicious step by msprobe's documented rule (docs/zh/17.grad_probe.md: the first step at which any row is
below 0.97 at the first compared step, or dropped by more than 0.03 from the previous compared step).

Run with Debian's /usr/bin/python3 from the repository root:
/usr/bin/python3 tests/data/report/make_grad_report_fixtures.py
"""
import csv
import json
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_out")


def first_suspicious(steps, rows):
    for i, step in enumerate(steps):
        for _, values in rows:
            if (values[0] < 0.97) if i == 0 else (values[i - 1] - values[i] > 0.03):
                return step
    return None


def write_rank(rank, steps, rows):
    d = os.path.join(HERE, "rank%d" % rank)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "similarities.csv"), "w", encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step"] + steps)
        for name, values in rows:
            w.writerow([name] + [repr(float(v)) for v in values])


def main():
    rng = np.random.default_rng(34)
    expected = {}
    # rank 0: steps 0, 2, 4, ... 18; fc2.weight drops by 0.05 at step 10, slowly elsewhere.
    steps = list(range(0, 20, 2))
    names = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    rows = []
    for k, name in enumerate(names):
        v = 1.0 - np.cumsum(rng.uniform(0, 0.004, len(steps)))
        if name == "fc2.weight":
            v[5:] -= 0.05
        rows.append((name, [round(float(x), 6) for x in v]))
    summary = [round(float(np.mean([r[1][i] for r in rows])), 6) for i in range(len(steps))]
    rows.append(("summary", summary))
    write_rank(0, steps, rows)
    # rank 2: below 0.97 at the first step already.
    steps2 = [1, 2, 3]
    rows2 = [("w", [0.95, 0.96, 0.97]), ("summary", [0.95, 0.96, 0.97])]
    write_rank(2, steps2, rows2)
    for rank in (0, 2):
        with open(os.path.join(HERE, "rank%d" % rank, "similarities.csv"), encoding="utf-8-sig", newline="") as f:
            table = list(csv.reader(f))
        st = [int(s) for s in table[0][1:]]
        rs = [(r[0], [float(x) for x in r[1:]]) for r in table[1:]]
        expected[str(rank)] = {"steps": st, "rows": [{"name": n, "values": v} for n, v in rs],
                               "first_suspicious": first_suspicious(st, rs)}
    with open(os.path.join(os.path.dirname(HERE), "expected_grad.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
