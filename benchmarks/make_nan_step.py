#!/usr/bin/env python3
"""A large multi-rank step for timing `probe nan_analyze` (docs/distributed.md): RANKS rank directories of
LAYERS layers each, a layer being 4 clean statistics entries and an all_reduce; after the last layer rank 1's
Torch.log makes NaN and a final all_reduce carries it to the others, so the search links every layer. The
entries are copies of tests/data/nan_analyze/during_comm's (written by torch), renamed.

    benchmarks/make_nan_step.py OUT_STEP_DIR [RANKS=4] [LAYERS=4000]
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "tests", "data", "nan_analyze", "during_comm", "step0")


def main():
    out = sys.argv[1]
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    layers = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
    for r in range(ranks):
        with open(os.path.join(SRC, "rank1" if r == 1 else "rank0", "dump.json")) as f:
            src = json.load(f)["data"]
        data = {}
        for layer in range(layers):
            for j in range(4):
                data[f"Functional.linear.{4 * layer + j}.forward"] = src["Functional.linear.0.forward"]
            data[f"Distributed.all_reduce.{layer}.forward"] = src["Distributed.all_reduce.0.forward"]
        if r == 1:
            data["Tensor.__mul__.0.forward"] = src["Tensor.__mul__.0.forward"]
            data["Torch.log.0.forward"] = src["Torch.log.0.forward"]
        data[f"Distributed.all_reduce.{layers}.forward"] = src["Distributed.all_reduce.1.forward"]
        d = os.path.join(out, f"rank{r}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "dump.json"), "w") as f:
            json.dump({"task": "statistics", "level": "L1", "dump_data_dir": None, "data": data}, f, indent=1)
        stack = {str(i): [[k], [f"File train.py, line {i}, in step"]] for i, k in enumerate(data)}
        with open(os.path.join(d, "stack.json"), "w") as f:
            json.dump(stack, f, indent=1)
        with open(os.path.join(d, "construct.json"), "w") as f:
            json.dump({k: None for k in data}, f, indent=1)


if __name__ == "__main__":
    main()
