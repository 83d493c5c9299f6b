#!/usr/bin/python3
"""Writes NPU/bench dump pairs under tests/data/dump_compare/ for probe's `compare` tests.

Run with Debian's interpreter (it has torch and numpy):  /usr/bin/python3 tests/data/make_dump_compare_fixtures.py

Dumps follow msprobe's writer (shared/spec/dump-and-compare.md §1): json.dump(indent=1), tensor objects in
msprobe's field order, statistics by torch with msprobe's dtype rules, .pt by torch.save, .npy by numpy.save,
md5 = zlib CRC-32 of the raw bytes. The expected compare results (expected.json in each case) are computed here
independently, in numpy float64, following §3.6-§3.8 of the spec - never taken from probe's output.
"""
import json
import os
import shutil
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dump_compare")
EPS = np.finfo(np.float64).eps


def torch_stats(t):
    if t.numel() == 0:
        return None, None, None, None
    if t.dtype == torch.bool:
        return bool(t.any()), bool(t.all()), None, None
    if t.dim() == 0:
        v = t.item()
        return v, v, v, v
    if t.dtype == torch.float64 or not t.is_floating_point():
        t = t.float()
    return t.max().item(), t.min().item(), t.mean().item(), torch.norm(t).item()


def crc(t):
    t = t.contiguous()
    raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
    return "%08x" % (zlib.crc32(raw) & 0xFFFFFFFF)


class Dump:
    """One rank directory written like msprobe's dumper (PyTorch .pt, or MindSpore .npy)."""

    def __init__(self, rank_dir, task, framework="pytorch", md5=False):
        self.dir, self.task, self.framework, self.md5 = rank_dir, task, framework, md5
        self.data = {}
        self.stack = {}
        os.makedirs(rank_dir, exist_ok=True)
        if task == "tensor":
            os.makedirs(os.path.join(rank_dir, "dump_tensor_data"), exist_ok=True)

    def tensor(self, key, where, t, requires_grad=None):
        mx, mn, mean, norm = torch_stats(t)
        if self.framework == "pytorch":
            d = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape)}
        else:
            ms = {torch.float32: "Float32", torch.float16: "Float16", torch.bfloat16: "BFloat16",
                  torch.int64: "Int64", torch.bool: "Bool", torch.float64: "Float64"}[t.dtype]
            d = {"type": "mindspore.Tensor", "dtype": ms, "shape": list(t.shape)}
        d.update({"Max": mx, "Min": mn, "Mean": mean, "Norm": norm})
        if self.framework == "pytorch":
            d["requires_grad"] = bool(requires_grad) if requires_grad is not None else False
        if self.task == "tensor" and t.numel() > 0:
            ext = ".pt" if self.framework == "pytorch" else ".npy"
            name = f"{key}.{where}{ext}"
            path = os.path.join(self.dir, "dump_tensor_data", name)
            if ext == ".pt":
                torch.save(t.clone().contiguous().detach(), path)
            else:
                a = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
                np.save(path, a)
            d["data_name"] = name
        if self.md5:
            d["md5"] = crc(t)
        return d

    def add(self, key, entry, stack=None):
        self.data[key] = entry
        if stack is not None:
            self.stack[key] = stack

    def write(self):
        doc = {"task": self.task, "level": "L1", "framework": self.framework,
               "dump_data_dir": os.path.join(self.dir, "dump_tensor_data") if self.task == "tensor" else None,
               "data": self.data}
        with open(os.path.join(self.dir, "dump.json"), "w") as f:
            json.dump(doc, f, indent=1)
        if self.stack:
            with open(os.path.join(self.dir, "stack.json"), "w") as f:
                json.dump(self.stack, f, indent=1)


# --- expected values, numpy float64, §3.8 ---------------------------------------------------------------------

def r12(v):
    return float(f"{v:.12f}")


def expected_metrics(n, b):
    """Returns (cosine, euc, max_abs, max_rel, one, five, message) for arrays that both have data files."""
    n = n.float().numpy().astype(np.float64) if n.dtype == torch.bfloat16 else n.numpy().astype(np.float64)
    b = b.float().numpy().astype(np.float64) if b.dtype == torch.bfloat16 else b.numpy().astype(np.float64)
    if n.size == 0:
        return ["unsupported"] * 6 + ["This is empty data, can not compare."]
    if n.shape != b.shape:
        return ["shape unmatched"] * 6 + ["Shape of NPU and bench tensor do not match. Skipped."]
    msg = ""
    bad_n, bad_b = ~np.isfinite(n), ~np.isfinite(b)
    if bad_n.any() or bad_b.any():
        if (np.array_equal(np.isinf(n), np.isinf(b)) and np.array_equal(np.isnan(n), np.isnan(b))
                and np.array_equal(n[np.isinf(n)], b[np.isinf(b)])):
            n = np.where(bad_n, 0.0, n)
            b = np.where(bad_b, 0.0, b)
        else:
            return ["N/A"] * 6 + ["The position of inf or nan in NPU and bench Tensor do not match."]
    zero_d = n.ndim == 0
    nf, bf = n.reshape(-1), b.reshape(-1)
    bb = np.where(bf == 0, bf + EPS, bf)
    nn = np.where(bf == 0, nf + EPS, nf)
    rel = np.abs(nn - bb) / np.abs(bb)
    if zero_d or nf.size == 1:
        cos = "unsupported"
        if not zero_d:
            msg += "This is a 1-d tensor of length 1."
    else:
        nn_, bn_ = np.linalg.norm(nf), np.linalg.norm(bf)
        if nn_ <= EPS and bn_ <= EPS:
            cos = 1.0
        elif nn_ <= EPS:
            cos = "Nan"
            msg += "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data."
        elif bn_ <= EPS:
            cos = "Nan"
            msg += "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data."
        else:
            cos = r12(float(np.dot(nf, bf) / (nn_ * bn_)))
            if cos > 0.9999:
                cos = float(f"{cos:.6f}")
    if zero_d:
        euc = one = five = "unsupported"
        msg += ("This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' "
                "and 'Five Thousandths Err Ratio'. ")
    else:
        euc = float(np.linalg.norm(nf - bf))
        one = r12(float(np.sum(rel < 0.001) / rel.size))
        five = r12(float(np.sum(rel < 0.005) / rel.size))
    max_abs = r12(float(np.max(np.abs(nf - bf))))
    max_rel = r12(float(np.max(rel)))
    return [cos, euc, max_abs, max_rel, one, five, msg]


def accuracy(cos, max_abs):
    if cos == "shape unmatched":
        return "Unmatched"
    if cos == "N/A" or max_abs == "N/A":
        return "No"
    try:
        c, a = float(cos), float(max_abs)
    except (TypeError, ValueError):
        return "None"
    if c < 0.99 and a > 0.001:
        return "No"
    if c < 0.9 or a > 1:
        return "No"
    return "Yes"


# --- cases ----------------------------------------------------------------------------------------------------

def gen():
    g = torch.Generator().manual_seed(1234)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype)

    return randn


def real_data_case():
    """PyTorch tensor-mode pair with known differences; expected metrics from numpy float64."""
    randn = gen()
    root = os.path.join(OUT, "real")
    npu = Dump(os.path.join(root, "npu", "step0", "rank0"), "tensor")
    bench = Dump(os.path.join(root, "bench", "step0", "rank0"), "tensor")
    expected = {}

    def pair(key, inputs, outputs, kwargs=None, stack=None, npu_only=False, rg=None):
        """inputs/outputs: lists of (npu_tensor, bench_tensor) or ('leaf', dict)."""
        for side, d in ((0, npu), (1, bench)):
            if npu_only and side == 1:
                continue
            def enc(items, cat):
                out = []
                for i, it in enumerate(items):
                    if it[0] == "leaf":
                        out.append(it[1])
                    else:
                        r = rg[side] if rg else None
                        out.append(d.tensor(key, f"{cat}.{i}", it[side], requires_grad=r))
                return out
            entry = {"input_args": enc(inputs, "input"), "input_kwargs": kwargs or {}, "output": enc(outputs, "output")}
            d.add(key, entry, stack if side == 0 else None)
        for cat, items in (("input", inputs), ("output", outputs)):
            for i, it in enumerate(items):
                if it[0] == "leaf":
                    continue
                name = f"{key}.{cat}.{i}"
                if npu_only:
                    expected[name] = {"bench_missing": True}
                    continue
                n, b = it
                if n.numel() == 0:
                    expected[name] = {"no_file": True}
                    continue
                m = expected_metrics(n, b)
                expected[name] = {"metrics": m[:6], "message": m[6], "accuracy": accuracy(m[0], m[2])}

    x = randn(4, 8)
    w = randn(8, 8)
    y = x @ w
    noise = randn(4, 8) * 1e-3
    pair("Functional.linear.0.forward", [(x, x.clone()), (w, w.clone())], [(y + noise, y)],
         stack=["File /work/model.py, line 12, in forward, \n y = F.linear(x, w)",
                "File /work/train.py, line 3, in <module>, \n main()"])
    a = randn(16, dtype=torch.float16)
    pair("Tensor.__add__.0.forward", [(a, a.clone()), ("leaf", {"type": "int", "value": 1})],
         [((a + 1).to(torch.float16), (a.float() + 1).to(torch.float16))])
    s = randn(5)
    pair("Torch.sum.0.forward", [(s, s.clone())], [(s.sum() + 0.5, s.sum())])
    r = randn(3, 4)
    rn = r.clone()
    rn[0, 1] = float("nan")
    rn[2, 2] = float("inf")
    rb = r.clone() * 1.01
    rb[0, 1] = float("nan")
    rb[2, 2] = float("inf")
    pair("Functional.relu.0.forward", [(rn, rb)], [(rn.clamp(min=0), rb.clamp(min=0))])
    m = randn(6)
    mn, mb = m.clone(), m.clone()
    mn[1] = float("inf")
    pair("Torch.mul.0.forward", [(m, m.clone())], [(mn, mb)])
    bf = randn(4, 4, dtype=torch.bfloat16)
    pair("Tensor.to.0.forward", [(bf, bf.clone())], [(bf.float() * 3, (bf.float() * 3).to(torch.bfloat16).float())])
    z = randn(10)
    pair("Torch.zeros_like.0.forward", [(z, z.clone())], [(torch.zeros(10), torch.ones(10))])
    one = randn(1)
    pair("Torch.max.0.forward", [(one, one.clone())], [(one * 2, one * 2 + 1e-3)])
    pair("Torch.matmul.0.forward", [(x, None)], [(y, None)], npu_only=True)
    e = torch.zeros(0)
    pair("Torch.cat.0.forward", [(e, e.clone())], [(e, e.clone())])
    ints = torch.arange(12, dtype=torch.int64)
    pair("Torch.argsort.0.forward", [(ints, ints.clone())], [(ints.flip(0), ints.flip(0))])
    t = randn(3)
    pair("Torch.exp.0.forward", [(t, t.clone())], [(t.exp(), t.exp())], rg=(True, False))
    big = randn(50)
    pair("Torch.tanh.0.forward", [(big, big.clone())], [(big * 50, big)])
    npu.write()
    bench.write()
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


def stats_expected(nv, bv):
    """One statistic per §3.6: (diff, relative text, warning) or None when not numeric."""
    numeric = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if not (numeric(nv) and numeric(bv)):
        return None
    diff = nv - bv
    if diff != diff:
        return ["Nan", "Nan", False]
    rel = "N/A" if bv == 0 else f"{abs(diff / bv * 100)}%"
    warn = abs(diff) / (abs(max(nv, bv)) + 1e-10) > 0.5
    return [diff, rel, bool(warn)]


def statistics_case(md5=False):
    randn = gen()
    name = "md5" if md5 else "stats"
    root = os.path.join(OUT, name)
    npu = Dump(os.path.join(root, "npu", "step0", "rank0"), "statistics", md5=md5)
    bench = Dump(os.path.join(root, "bench", "step0", "rank0"), "statistics", md5=md5)
    expected = {}

    def pair(key, ins, outs, kwargs=None, npu_only=False):
        for side, d in ((0, npu), (1, bench)):
            if npu_only and side == 1:
                continue
            entry = {"input_args": [d.tensor(key, f"input.{i}", t[side], requires_grad=True) if isinstance(t, tuple)
                                    else t for i, t in enumerate(ins)],
                     "input_kwargs": kwargs or {},
                     "output": [d.tensor(key, f"output.{i}", t[side], requires_grad=True) for i, t in enumerate(outs)]}
            d.add(key, entry)
        for cat, items in (("input", ins), ("output", outs)):
            for i, t in enumerate(items):
                rn = f"{key}.{cat}.{i}"
                if not isinstance(t, tuple):
                    leaf = t
                    expected[rn] = {"leaf": True, "md5": "%08x" % (zlib.crc32(str(leaf.get("value", "")).encode())
                                                                   & 0xFFFFFFFF)}
                    continue
                if npu_only:
                    expected[rn] = {"bench_missing": True}
                    continue
                ns, bs = torch_stats(t[0]), torch_stats(t[1])
                per = [stats_expected(a, b) for a, b in zip(ns, bs)]
                warn = any(p and p[2] for p in per)
                expected[rn] = {"stats": per, "result": "Warning" if warn else "",
                                "md5": [crc(t[0]), crc(t[1])]}

    x = randn(4, 8)
    pair("Functional.linear.0.forward", [(x, x.clone()), {"type": "int", "value": 3}], [(x * 2, x * 2 + 0.001)])
    y = randn(10)
    pair("Torch.add.0.forward", [(y, y.clone())], [(y * 5, y)])
    z = randn(3)
    zn = z.clone()
    zn[0] = float("inf")
    pair("Torch.log.0.forward", [(z, z.clone())], [(zn, z)])
    b16 = randn(8, dtype=torch.bfloat16)
    pair("Tensor.mul.0.forward", [(b16, b16.clone())], [(b16, b16.clone())])
    pair("Torch.matmul.0.forward", [(x, None)], [(x, None)], npu_only=True)
    npu.write()
    bench.write()
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


def fuzzy_case():
    """The NPU run calls conv2d once more before the compared call: counters differ by one."""
    randn = gen()
    root = os.path.join(OUT, "fuzzy")
    npu = Dump(os.path.join(root, "npu", "step0", "rank0"), "statistics")
    bench = Dump(os.path.join(root, "bench", "step0", "rank0"), "statistics")
    a, b = randn(2, 3), randn(5)
    npu.add("Functional.conv2d.1.forward", {"input_args": [npu.tensor("", "", a)], "input_kwargs": {},
                                             "output": [npu.tensor("", "", a * 2)]})
    npu.add("Torch.relu.0.forward", {"input_args": [npu.tensor("", "", b)], "input_kwargs": {},
                                     "output": [npu.tensor("", "", b.clamp(min=0))]})
    bench.add("Functional.conv2d.0.forward", {"input_args": [bench.tensor("", "", a)], "input_kwargs": {},
                                               "output": [bench.tensor("", "", a * 2)]})
    bench.add("Torch.relu.0.forward", {"input_args": [bench.tensor("", "", b)], "input_kwargs": {},
                                       "output": [bench.tensor("", "", b.clamp(min=0))]})
    npu.write()
    bench.write()
    with open(os.path.join(root, "map.yaml"), "w") as f:
        f.write("# NPU row name: bench row name\n"
                "Functional.conv2d.1.forward.input.0: Functional.conv2d.0.forward.input.0\n"
                "'Functional.conv2d.1.forward.output.0': \"Functional.conv2d.0.forward.output.0\"\n")
    with open(os.path.join(root, "bad_map.yaml"), "w") as f:
        f.write("Functional.conv2d.1.forward.input.0:\n  - nested\n")


def cross_framework_case():
    """MindSpore NPU (.npy) against PyTorch bench (.pt), names mapped by -am (Mint.* -> Torch.*)."""
    randn = gen()
    root = os.path.join(OUT, "cross")
    npu = Dump(os.path.join(root, "npu", "step0", "rank0"), "tensor", framework="mindspore")
    bench = Dump(os.path.join(root, "bench", "step0", "rank0"), "tensor", framework="pytorch")
    a, b = randn(3, 5), randn(3, 5)
    out_n, out_b = a + b + 1e-4, a + b
    npu.add("Mint.add.0.forward", {"input_args": [npu.tensor("Mint.add.0.forward", "input.0", a),
                                                  npu.tensor("Mint.add.0.forward", "input.1", b)],
                                   "input_kwargs": {},
                                   "output": [npu.tensor("Mint.add.0.forward", "output.0", out_n)]})
    bench.add("Torch.add.0.forward", {"input_args": [bench.tensor("Torch.add.0.forward", "input.0", a),
                                                     bench.tensor("Torch.add.0.forward", "input.1", b)],
                                      "input_kwargs": {},
                                      "output": [bench.tensor("Torch.add.0.forward", "output.0", out_b)]})
    npu.write()
    bench.write()
    m = expected_metrics(out_n, out_b)
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump({"Mint.add.0.forward.output.0": {"metrics": m[:6], "message": m[6],
                                                   "accuracy": accuracy(m[0], m[2])}}, f, indent=1)


def multi_rank_case():
    randn = gen()
    root = os.path.join(OUT, "multi")
    for rank in (0, 1):
        x = randn(4)
        for side, scale in (("npu", 1.0 + 2 * rank), ("bench", 1.0)):
            d = Dump(os.path.join(root, side, "step0", f"rank{rank}"), "statistics")
            d.add("Distributed.all_reduce.0.forward",
                  {"input_args": [d.tensor("", "", x)], "input_kwargs": {"group": None},
                   "output": [d.tensor("", "", x * scale), None]})
            d.write()


def write_compare_json(case, extra=None):
    root = os.path.join(OUT, case)
    doc = {"npu_path": "npu/step0/rank0/dump.json", "bench_path": "bench/step0/rank0/dump.json",
           "is_print_compare_log": True}
    doc.update(extra or {})
    with open(os.path.join(root, "compare.json"), "w") as f:
        json.dump(doc, f, indent=1)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    real_data_case()
    statistics_case(md5=False)
    statistics_case(md5=True)
    fuzzy_case()
    cross_framework_case()
    multi_rank_case()
    for case in ("real", "stats", "md5", "fuzzy", "cross"):
        write_compare_json(case)
    # Bad inputs.
    bad = os.path.join(OUT, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "missing_bench.json"), "w") as f:
        json.dump({"npu_path": "../stats/npu/step0/rank0/dump.json"}, f)
    with open(os.path.join(bad, "not_json.json"), "w") as f:
        f.write('{"npu_path": "a", ')
    with open(os.path.join(bad, "missing_file.json"), "w") as f:
        json.dump({"npu_path": "../stats/npu/step0/rank0/dump.json", "bench_path": "../nowhere/dump.json"}, f)
    with open(os.path.join(bad, "task_mismatch.json"), "w") as f:
        json.dump({"npu_path": "../stats/npu/step0/rank0/dump.json", "bench_path": "../real/bench/step0/rank0/dump.json"}, f)
    with open(os.path.join(bad, "md5_one_side.json"), "w") as f:
        json.dump({"npu_path": "../stats/npu/step0/rank0/dump.json", "bench_path": "../md5/bench/step0/rank0/dump.json"}, f)
    with open(os.path.join(bad, "file_and_dir.json"), "w") as f:
        json.dump({"npu_path": "../stats/npu/step0/rank0/dump.json", "bench_path": "../stats/bench/step0"}, f)
    with open(os.path.join(OUT, "multi", "compare.json"), "w") as f:
        json.dump({"npu_path": "npu/step0", "bench_path": "bench/step0"}, f)


if __name__ == "__main__":
    main()
