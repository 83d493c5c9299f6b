#!/usr/bin/python3
"""Gradient-monitor dumps for `probe grad_compare` and probe::torch::GradMonitor (issue 32), written by torch.

Run with Debian's interpreter (torch 1.13 CPU):
    MSPROBE_ROOT=<checkout>/debug/accuracy_tools /usr/bin/python3 tests/data/make_grad_fixtures.py

A two-layer MLP is trained for 6 optimizer steps (SGD) on two ranks, twice: run "a" is the baseline, run "b"
adds noise to rank 0's input batch at step 3 (a fault on one device), so rank 0's gradients diverge from step
3 on while rank 1's never do. Each run is written in msprobe's grad_probe layout (docs/zh/17.grad_probe.md,
pytorch/grad_probe/grad_monitor.py), level L2, bounds [-1, 0, 1]:
    grad_probe/{a,b}/rank{R}/grad_summary_{step}.csv   one row per parameter, rows built by msprobe's own
                                                         GradStatCsv when MSPROBE_ROOT is set (else the
                                                         same statistics computed here)
    grad_probe/{a,b}/rank{R}/step{step}/{param}.npy     the direction: grad > 0 as a bool array
Expected comparison (grad_probe/expected/rank{R}/similarities.csv): msprobe's own
GradComparator.compare_distributed run on a and b (MSPROBE_ROOT required; tqdm, matplotlib and pandas are
absent from Debian's python and are replaced by stand-ins for the import: a no-op progress bar, a no-op plot,
and read_csv returning the columns of the csv module's reader). Its numbers are checked here against the
hand computation: per parameter (direction_a == direction_b).sum() / size, and the summary weighted by size.
grad_probe/grads/: rank 0's step-0 gradients of run a (float32 .npy) and msprobe's GradStatCsv rows for them
at L0, L1 and L2 with bounds [-0.05, 0, 0.05] (expected_{L0,L1,L2_fine}.csv), the rows GradMonitor must write.
grad_probe/expected/expected.json also holds the first suspicious step by msprobe's documented rule (step 0
below 0.97 or a drop of more than 0.03 from the previous step, for any parameter): 3 on rank 0, none on rank 1.
"""
import csv
import json
import os
import shutil
import sys
import types
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "grad_probe")
STEPS = 6
FAULT_STEP = 3
BOUNDS = [-1, 0, 1]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def install_stubs():
    """Stand-ins for the modules Debian's python lacks, only so that msprobe's modules import."""
    tqdm = types.ModuleType("tqdm")
    tqdm.tqdm = lambda it, desc=None: it
    sys.modules["tqdm"] = tqdm
    mpl = types.ModuleType("matplotlib")
    plt = types.ModuleType("matplotlib.pyplot")
    for name in ("plot", "xlabel", "ylabel", "title", "savefig", "close"):
        setattr(plt, name, lambda *a, **k: None)
    mpl.pyplot = plt
    sys.modules["matplotlib"] = mpl
    sys.modules["matplotlib.pyplot"] = plt
    pd = types.ModuleType("pandas")

    def read_csv(path, header="infer"):
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
        return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}

    pd.read_csv = read_csv
    pd.DataFrame = type("DataFrame", (), {})
    sys.modules["pandas"] = pd


def msprobe_modules():
    root = os.environ.get("MSPROBE_ROOT")
    if not root:
        return None, None
    install_stubs()
    sys.path.insert(0, root)
    from msprobe.core.grad_probe.constant import level_adp
    from msprobe.core.grad_probe.grad_compare import GradComparator
    # msprobe.pytorch's package __init__ pulls in its whole compare stack (openpyxl, ...): the module alone.
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "grad_stat_csv", os.path.join(root, "msprobe", "pytorch", "grad_probe", "grad_stat_csv.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    GradStatCsv = module.GradStatCsv
    return (GradStatCsv, level_adp["L2"]), GradComparator


def own_header():
    return (["param_name", f"(-inf, {BOUNDS[0]}]"] + [f"({BOUNDS[i-1]}, {BOUNDS[i]}]" for i in range(1, len(BOUNDS))]
            + [f"({BOUNDS[-1]}, inf)", "=0", "max", "min", "norm", "shape"])


def own_line(name, grad):
    g = grad.detach().float()
    n = g.numel()
    buckets = torch.bucketize(g, torch.tensor(BOUNDS, dtype=torch.float32))
    shares = [(buckets == i).sum().item() / n for i in range(len(BOUNDS) + 1)] + [(g == 0).sum().item() / n]
    return [name] + shares + [g.max().item(), g.min().item(), torch.norm(g).item(), list(g.shape)]


def write_csv(rows, path):
    # msprobe's file_utils.write_csv: csv.writer on a file opened with encoding utf-8-sig.
    with open(path, "w", encoding="utf-8-sig", newline="") as f:
        csv.writer(f).writerows(rows)


def train(run, rank, writer):
    torch.manual_seed(100 + rank)
    model = Mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    gen = torch.Generator().manual_seed(200 + rank)
    noise = torch.Generator().manual_seed(300 + rank)
    base = os.path.join(OUT, run, f"rank{rank}")
    os.makedirs(os.path.join(OUT, "grads"), exist_ok=True)
    os.makedirs(base)
    for step in range(STEPS):
        x = torch.randn(32, 6, generator=gen)
        y = torch.randn(32, 4, generator=gen)
        if run == "b" and rank == 0 and step >= FAULT_STEP:
            x = x + 1.5 * torch.randn(32, 6, generator=noise)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        # What msprobe's optimizer pre-step hook writes, before opt.step().
        rows = []
        os.makedirs(os.path.join(base, f"step{step}"))
        for name, p in model.named_parameters():
            if writer:
                stat, level = writer
                rows.append(stat.generate_csv_line(name, level, p.grad, BOUNDS))
            else:
                rows.append(own_line(name, p.grad))
            np.save(os.path.join(base, f"step{step}", f"{name}.npy"), (p.grad.clone().detach() > 0).numpy())
            if run == "a" and rank == 0 and step == 0:
                np.save(os.path.join(OUT, "grads", f"{name}.npy"), p.grad.detach().numpy())
        header = writer[0].generate_csv_header(writer[1], BOUNDS) if writer else own_header()
        write_csv([header] + rows, os.path.join(base, f"grad_summary_{step}.csv"))
        opt.step()


def hand_similarities(rank):
    """(direction_a == direction_b) share per parameter and weighted by element count, per step."""
    params = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    out = {p: [] for p in params + ["summary"]}
    for step in range(STEPS):
        same = total = 0
        for p in params:
            a = np.load(os.path.join(OUT, "a", f"rank{rank}", f"step{step}", f"{p}.npy"))
            b = np.load(os.path.join(OUT, "b", f"rank{rank}", f"step{step}", f"{p}.npy"))
            s = int((a == b).sum())
            out[p].append(s / a.size)
            same += s
            total += a.size
        out["summary"].append(same / total)
    return out


def first_suspicious(sims):
    for i in range(STEPS):
        for v in sims.values():
            if (i == 0 and v[0] < 0.97) or (i > 0 and v[i - 1] - v[i] > 0.03):
                return i
    return None


def summaries_by_msprobe(stat):
    """msprobe's GradStatCsv rows, at each level, for rank 0's step-0 gradients of run a (grads/*.npy)."""
    from msprobe.core.grad_probe.constant import level_adp
    cases = {"L0": (level_adp["L0"], BOUNDS), "L1": (level_adp["L1"], BOUNDS),
             "L2_fine": (level_adp["L2"], [-0.05, 0, 0.05])}
    names = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    for case, (level, bounds) in cases.items():
        rows = [stat.generate_csv_header(level, bounds)]
        for name in names:
            grad = torch.from_numpy(np.load(os.path.join(OUT, "grads", f"{name}.npy")))
            rows.append(stat.generate_csv_line(name, level, grad, bounds))
        write_csv(rows, os.path.join(OUT, "grads", f"expected_{case}.csv"))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    writer, comparator = msprobe_modules()
    for run in ("a", "b"):
        for rank in (0, 1):
            train(run, rank, writer)
    expected_dir = os.path.join(OUT, "expected")
    if writer:
        summaries_by_msprobe(writer[0])
    if comparator is None:
        sys.exit("MSPROBE_ROOT is required for the expected similarities (msprobe's GradComparator)")
    comparator.compare_distributed(os.path.join(OUT, "a"), os.path.join(OUT, "b"), expected_dir)
    expected = {}
    for rank in (0, 1):
        sims = hand_similarities(rank)
        with open(os.path.join(expected_dir, f"rank{rank}", "similarities.csv"), encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
        assert rows[0] == ["step"] + [str(s) for s in range(STEPS)], rows[0]
        assert [r[0] for r in rows[1:]] == list(sims.keys()), rows
        for r in rows[1:]:
            assert [float(v) for v in r[1:]] == sims[r[0]], (r, sims[r[0]])
        expected[f"rank{rank}"] = {"first_suspicious_step": first_suspicious(sims), "similarities": sims}
    assert expected["rank0"]["first_suspicious_step"] == FAULT_STEP
    assert expected["rank1"]["first_suspicious_step"] is None
    with open(os.path.join(expected_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
