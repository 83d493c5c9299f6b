#!/usr/bin/python3
"""Writes multi-rank NPU/bench step directories under tests/data/diff_analyze/ for `probe compare -da`.

Run with Debian's interpreter (it has torch and numpy):  /usr/bin/python3 tests/data/make_diff_analyze_fixtures.py

Each case is a pair of step directories (npu/step0, bench/step0) holding rank* directories written like
msprobe's dumper (the Dump helper of make_dump_compare_fixtures.py), a compare.json, and expected.json: which
entry of which rank is the first difference, decided by how the case is built (the comments say why), and the
statistics relative errors of the different rows, computed here in Python as msprobe's compare prints them.
"""
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_dump_compare_fixtures import Dump, gen, torch_stats  # noqa: E402

OUT = os.path.join(HERE, "diff_analyze")


def rel_err_text(npu, bench):
    """msprobe's statistics relative error cell: f"{abs(diff / bench * 100)}%" (§3.6)."""
    return f"{abs((npu - bench) / bench * 100)}%"


def int_leaf(v):
    return {"type": "int", "value": v}


def group(ranks):
    return {"type": "torch.ProcessGroup", "group_ranks": ranks, "group_id": "0"}


class Case:
    def __init__(self, name, ranks, task="statistics", md5=False):
        self.root = os.path.join(OUT, name)
        self.task, self.md5 = task, md5
        self.sides = {side: {r: Dump(os.path.join(self.root, side, "step0", f"rank{r}"), task, md5=md5)
                             for r in ranks} for side in ("npu", "bench")}
        self.expected = {"phase": "", "first_diff": {}, "relative_errors": {}}

    def add(self, rank, key, ins, outs, kwargs=None, npu_scale=1.0, npu_in_scale=1.0, stack=None):
        """One entry on both sides; the NPU side's output tensors are multiplied by npu_scale."""
        for side in ("npu", "bench"):
            d = self.sides[side][rank]
            s_out = npu_scale if side == "npu" else 1.0
            s_in = npu_in_scale if side == "npu" else 1.0

            def enc(v, s, where):
                if isinstance(v, torch.Tensor):
                    return d.tensor(key, where, v * s if v.is_floating_point() else v)
                return v

            entry = {"input_args": [enc(t, s_in, f"input.{i}") for i, t in enumerate(ins)]}
            if kwargs is not None:
                entry["input_kwargs"] = kwargs
            entry["output"] = [enc(t, s_out, f"output.{i}") for i, t in enumerate(outs)]
            d.add(key, entry, stack if side == "npu" else None)

    def write(self, expected):
        for side in self.sides.values():
            for d in side.values():
                d.write()
        self.expected.update(expected)
        with open(os.path.join(self.root, "expected.json"), "w") as f:
            json.dump(self.expected, f, indent=1)
        with open(os.path.join(self.root, "compare.json"), "w") as f:
            json.dump({"npu_path": "npu/step0", "bench_path": "bench/step0"}, f, indent=1)


def before_comm_case(randn):
    """The first difference lies before any communication op (statistics dumps, 2 ranks)."""
    c = Case("before_comm", [0, 1])
    x, w = randn(4, 8), randn(8, 8)
    # Rank 0: linear agrees; matmul's output is 3x on the NPU -> every relative error is 200% > 50%.
    c.add(0, "Functional.linear.0.forward", [x, w], [x @ w],
          stack=["File /m.py, line 3, in forward, \n y = F.linear(x, w)"])
    # Torch.empty differs but is in the ignore list.
    c.add(0, "Torch.empty.0.forward", [], [randn(4)], npu_scale=5.0)
    # Only an INPUT row differs: not a different entry (outputs decide).
    c.add(0, "Torch.relu.0.forward", [x], [torch.relu(x)], npu_in_scale=4.0)
    y = x @ w
    c.add(0, "Torch.matmul.0.forward", [x, w], [y], npu_scale=3.0,
          stack=["File /m.py, line 9, in forward, \n z = x @ w", "File /train.py, line 2, in <module>, \n main()"])
    c.add(0, "Distributed.all_reduce.0.forward", [y], [y], kwargs={"group": group([0, 1])})
    # Rank 1: npu_fusion_attention differs only in outputs 4 and 5 (ignored); then the communication op.
    q = randn(2, 4)
    outs = [q, randn(2), randn(2), randn(2), randn(3), randn(3)]
    for side in ("npu", "bench"):
        d = c.sides[side][1]
        enc = [d.tensor("NPU.npu_fusion_attention.0.forward", f"output.{i}",
                        t * (7.0 if side == "npu" and i >= 4 else 1.0)) for i, t in enumerate(outs)]
        d.add("NPU.npu_fusion_attention.0.forward", {"input_args": [d.tensor("", "", q)], "output": enc})
    c.add(1, "Distributed.all_reduce.0.forward", [q], [q * 2.0], kwargs={"group": group([0, 1])}, npu_scale=3.0)
    mx, mn, mean, norm = torch_stats(y * 3.0)
    bx, bn, bmean, bnorm = torch_stats(y)
    c.expected["relative_errors"] = {"rank0": {"Torch.matmul.0.forward.output.0": {
        "MaxRelativeErr": rel_err_text(mx, bx), "MinRelativeErr": rel_err_text(mn, bn),
        "MeanRelativeErr": rel_err_text(mean, bmean), "NormRelativeErr": rel_err_text(norm, bnorm)}}}
    c.write({"phase": "before_communication",
             "first_diff": {"rank_0": "Torch.matmul.0.forward"},
             "stack": {"rank_0": ["File /m.py, line 9, in forward, \n z = x @ w",
                                  "File /train.py, line 2, in <module>, \n main()"]}})


def graph_case(randn):
    """md5 dumps, 3 ranks; the answer needs the communication graph.

    rank0: send.0(dst 1)  Torch.sub.0 (differs)   all_reduce.0([0,1,2])
    rank1: recv.0(src 0)  send.0(dst 2)  send.1(dst 2)  all_reduce.0
    rank2: recv.0(src 1)  Torch.matmul.0 (differs)  recv.1(src 1)  all_reduce.0
    Links: r0.send.0-r1.recv.0 (layer 0), r1.send.0-r2.recv.0 (layer 1), r1.send.1-r2.recv.1 (layer 2), the
    all_reduces (layer 3). rank2's matmul precedes recv.1 (layer 2); rank0's sub precedes the all_reduce
    (layer 3). Both are the second communication op of their rank, so only the graph tells them apart.
    """
    c = Case("graph", [0, 1, 2], md5=True)
    t = {r: randn(6) for r in range(3)}
    c.add(0, "Torch.add.0.forward", [t[0], t[0]], [t[0] + t[0]])
    c.add(0, "Distributed.send.0.forward", [t[0]], [None], kwargs={"dst": int_leaf(1), "group": None})
    c.add(0, "Torch.sub.0.forward", [t[0], t[0]], [t[0] - 1.0], npu_scale=1.5)
    c.add(0, "Distributed.all_reduce.0.forward", [t[0]], [t[0]], kwargs={"group": group([0, 1, 2])})
    c.add(1, "Distributed.recv.0.forward", [t[1]], [int_leaf(0)], kwargs={"src": int_leaf(0), "group": None})
    c.add(1, "Distributed.send.0.forward", [t[1]], [None], kwargs={"dst": int_leaf(2), "group": None})
    c.add(1, "Distributed.send.1.forward", [t[1]], [None], kwargs={"dst": int_leaf(2), "group": None})
    c.add(1, "Distributed.all_reduce.0.forward", [t[1]], [t[1]], kwargs={"group": group([0, 1, 2])})
    c.add(2, "Distributed.recv.0.forward", [t[2]], [int_leaf(1)], kwargs={"src": int_leaf(1), "group": None})
    c.add(2, "Torch.matmul.0.forward", [t[2], t[2]], [t[2] @ t[2]], npu_scale=1.0001)
    c.add(2, "Distributed.recv.1.forward", [t[2]], [int_leaf(1)], kwargs={"src": int_leaf(1), "group": None})
    c.add(2, "Distributed.all_reduce.0.forward", [t[2]], [t[2]], kwargs={"group": group([0, 1, 2])})
    c.write({"phase": "communication", "first_diff": {"rank_2": "Torch.matmul.0.forward"}, "layer": 2})


def real_case(randn):
    """Real-data (task tensor) dumps are analysed by their recorded statistics; 2 ranks."""
    c = Case("real", [0, 1], task="tensor")
    x = randn(3, 5)
    c.add(0, "Functional.relu.0.forward", [x], [torch.relu(x)])
    c.add(0, "Distributed.all_reduce.0.forward", [x], [x], kwargs={"group": group([0, 1])})
    c.add(1, "Functional.relu.0.forward", [x], [torch.relu(x)])
    # gelu's NPU output is doubled: every statistic's relative error is 100%.
    g = torch.nn.functional.gelu(x)
    c.add(1, "Functional.gelu.0.forward", [x], [g], npu_scale=2.0)
    c.add(1, "Distributed.all_reduce.0.forward", [x], [x], kwargs={"group": group([0, 1])})
    mx, mn, mean, norm = torch_stats(g * 2.0)
    bx, bn, bmean, bnorm = torch_stats(g)
    c.expected["relative_errors"] = {"rank1": {"Functional.gelu.0.forward.output.0": {
        "MaxRelativeErr": rel_err_text(mx, bx), "NormRelativeErr": rel_err_text(norm, bnorm)}}}
    c.write({"phase": "before_communication", "first_diff": {"rank_1": "Functional.gelu.0.forward"}})


def after_comm_case(randn):
    """The only difference follows the last communication op (statistics, 2 ranks)."""
    c = Case("after_comm", [0, 1])
    x = randn(4)
    for r in (0, 1):
        c.add(r, "Distributed.all_reduce.0.forward", [x], [x], kwargs={"group": group([0, 1])})
    c.add(1, "Torch.mul.0.forward", [x, x], [x * x], npu_scale=-1.0)
    c.write({"phase": "after_communication", "first_diff": {"rank_1": "Torch.mul.0.forward"}})


def same_case(randn):
    """Nothing differs (statistics, 2 ranks): per-rank files only, no diff_analyze file."""
    c = Case("same", [0, 1])
    x = randn(4)
    for r in (0, 1):
        c.add(r, "Torch.add.0.forward", [x, x], [x + x])
        c.add(r, "Distributed.all_reduce.0.forward", [x], [x], kwargs={"group": group([0, 1])})
        c.add(r, "Torch.mul.0.forward", [x, x], [x * x])
    c.write({"phase": ""})


def bad_cases(randn):
    bad = os.path.join(OUT, "bad")
    os.makedirs(bad)
    x = randn(2)
    # A rank directory without dump.json on the NPU side.
    for side in ("npu", "bench"):
        for r in (0, 1):
            d = Dump(os.path.join(bad, "missing_rank", side, "step0", f"rank{r}"), "statistics")
            d.add("Torch.add.0.forward", {"input_args": [d.tensor("", "", x)], "output": [d.tensor("", "", x)]})
            if not (side == "npu" and r == 1):
                d.write()
            else:  # git keeps no empty directory: the rank directory holds only construct.json
                with open(os.path.join(d.dir, "construct.json"), "w") as f:
                    f.write("{}")
    # Different rank sets: NPU rank0, rank1; bench rank0, rank2.
    for side, ranks in (("npu", (0, 1)), ("bench", (0, 2))):
        for r in ranks:
            d = Dump(os.path.join(bad, "rank_sets", side, "step0", f"rank{r}"), "statistics")
            d.add("Torch.add.0.forward", {"input_args": [d.tensor("", "", x)], "output": [d.tensor("", "", x)]})
            d.write()
    docs = {
        "missing_rank.json": {"npu_path": "missing_rank/npu/step0", "bench_path": "missing_rank/bench/step0"},
        "rank_sets.json": {"npu_path": "rank_sets/npu/step0", "bench_path": "rank_sets/bench/step0"},
        "files.json": {"npu_path": "rank_sets/npu/step0/rank0/dump.json",
                       "bench_path": "rank_sets/bench/step0/rank0/dump.json"},
    }
    # rank_count: bench step with one rank less.
    d = Dump(os.path.join(bad, "one_rank", "step0", "rank0"), "statistics")
    d.add("Torch.add.0.forward", {"input_args": [d.tensor("", "", x)], "output": [d.tensor("", "", x)]})
    d.write()
    docs["rank_count.json"] = {"npu_path": "rank_sets/npu/step0", "bench_path": "one_rank/step0"}
    for name, doc in docs.items():
        with open(os.path.join(bad, name), "w") as f:
            json.dump(doc, f, indent=1)


def ignore_prefix_case(randn):
    """The ignore list's "Tensor.to." hides casts only (statistics, 2 ranks).

    rank0: Tensor.to.0 differs (a cast: ignored), then Tensor.topk.0 differs. msprobe's entry "Tensor.to"
    (a bare substring) would hide topk as well; probe reports it (DECISIONS, compare -da ignore list).
    """
    c = Case("ignore_prefix", [0, 1])
    x = randn(6)
    c.add(0, "Tensor.to.0.forward", [x], [x.double()], npu_scale=5.0)
    values = torch.topk(x, 3).values
    c.add(0, "Tensor.topk.0.forward", [x], [values], kwargs={"k": int_leaf(3)}, npu_scale=3.0)
    for r in (0, 1):
        c.add(r, "Distributed.all_reduce.0.forward", [x], [x], kwargs={"group": group([0, 1])})
    c.write({"phase": "before_communication", "first_diff": {"rank_0": "Tensor.topk.0.forward"}})


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    randn = gen()
    before_comm_case(randn)
    graph_case(randn)
    real_case(randn)
    after_comm_case(randn)
    same_case(randn)
    bad_cases(randn)
    ignore_prefix_case(randn)  # last, so the cases above keep their random numbers


if __name__ == "__main__":
    main()
