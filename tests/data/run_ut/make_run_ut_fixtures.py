#!/usr/bin/python3
"""Generates the run_ut fixtures in tests/data/run_ut/ with real torch (Debian's /usr/bin/python3).

Each sub-directory is an msprobe-format dump (dump.json, stack.json, construct.json and, in tensor
mode, dump_tensor_data/) recorded by examples/make_example_dump.py's recorder:

  pt_fp32_fwd      tensor mode, float32, forward only; NaN/Inf/zero/0-d/bool/int/empty inputs;
                   Functional.gelu.0 output broken; a Distributed entry (SKIP)
  pt_fp16_fwdbwd   tensor mode, float16, forward + backward
  pt_bf16_stats    statistics mode (random inputs), bfloat16 + float32, forward + backward
  pt_mixed         tensor mode where some tensors have no file (generated from statistics)
  pt_bad_files     tensor mode with one missing and one corrupt (truncated) .pt file
  ms_fp32_tensor   MindSpore naming (Mint/MintFunctional/Tensor), .npy files, forward + backward
  ms_fp16_stats    MindSpore naming, statistics mode
  pt_dup_stats     statistics mode with a repeated call, for -f / --filter_api

expected.json in each tensor-mode fixture holds, per forward output, msprobe's cosine (§2.3) and
max abs error of the dumped output against torch's float64 result on the dumped inputs.
"""
import json
import math
import os
import shutil
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))
import make_example_dump as mk  # noqa: E402


def msprobe_cosine(b, d):
    """§2.3 on float64 arrays; None for the SPACE cases, NaN when NaN/Inf make it NaN."""
    b = b.double().flatten()
    d = d.double().flatten()
    if b.numel() == 1:
        return None
    nmax, bmax = d.abs().max().item(), b.abs().max().item()
    if nmax <= 2.220446049250313e-16 or bmax <= 2.220446049250313e-16:
        return None
    d, b = d / nmax, b / bmax
    c = (d @ b / (d.norm() * b.norm())).item()
    return c if math.isnan(c) else max(-1.0, min(1.0, c))


def expected_for(rec, overrides_applied):
    """float64 bench of every recorded float forward output vs the dumped output."""
    exp = {}
    for full, args, kwargs, out, _ in rec.calls:
        fn = rec.fns[full]
        a64 = [a.detach().double() if isinstance(a, torch.Tensor) and a.is_floating_point() else
               (a.detach() if isinstance(a, torch.Tensor) else a) for a in args]
        k64 = {k: (v.detach().double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
               for k, v in kwargs.items()}
        with torch.no_grad():
            bench = fn(*a64, **k64)
        outs = out if isinstance(out, (list, tuple)) else (out,)
        benches = bench if isinstance(bench, (list, tuple)) else (bench,)
        for i, (o, bo) in enumerate(zip(outs, benches)):
            if not isinstance(o, torch.Tensor) or not o.is_floating_point() or o.numel() == 0:
                continue
            name = f"{full}.forward.output.{i}"
            dev = overrides_applied.get(name, o).detach()
            exp[name] = {"cosine": msprobe_cosine(bo, dev),
                         "max_abs": (bo.double() - dev.double()).abs().max().item(),
                         "device_dtype": str(o.dtype)}
    return exp


class FnRecorder(mk.Recorder):
    """Also remembers which torch function each call ran (for the expected values)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.fns = {}


def record(out_dir, body, *, task="tensor", framework="pytorch", npy=False, backward=True, apis=None,
           upcast_half=False, broken=None, save_filter=None):
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    rec = FnRecorder(out_dir, task=task, framework=framework, save_npy=npy)
    rec.save_filter = save_filter
    h = mk.hooked(rec, apis=apis, upcast_half=upcast_half)
    with h:
        originals = {f"{p}.{n}": s[2] for (p, _, n), s in zip(h.apis, h.saved)}
        loss = body()
    if backward and loss is not None:
        loss.backward(retain_graph=True)
    for full, *_ in rec.calls:
        prefix, name = full.split(".")[0], full.split(".")[1]
        rec.fns[full] = originals[f"{prefix}.{name}"]
    applied = {}
    for name, fn in (broken or {}).items():
        full = name.split(".forward")[0]
        out = next(c[3] for c in rec.calls if c[0] == full)
        applied[name] = fn(out.detach())
        rec.overrides[name] = applied[name]
    rec.build(backward=backward)
    rec.write()
    if task == "tensor":
        with open(os.path.join(out_dir, "expected.json"), "w") as f:
            json.dump(expected_for(rec, applied), f, indent=1)
    return rec


def gen(seed):
    return torch.Generator().manual_seed(seed)


def pt_fp32_fwd():
    g = gen(1)

    def body():
        x = torch.randn(4, 6, generator=g)
        x[0, 0], x[0, 1], x[1, 2] = float("nan"), float("inf"), float("-inf")
        F.relu(x)                                      # NaN/Inf propagate identically
        w = torch.randn(6, 5, generator=g)
        torch.matmul(torch.randn(3, 6, generator=g), w)
        F.softmax(torch.randn(2, 7, generator=g), dim=-1)
        torch.zeros(3, 3) + 1                          # Tensor.__add__ with an int scalar
        torch.sum(torch.randn(5, 4, generator=g), dim=1)
        torch.argmax(torch.randn(4, 9, generator=g), dim=1)   # int64 output
        F.gelu(torch.randn(8, 16, generator=g))        # broken below
        torch.tensor(2.5) * torch.tensor(4.0)          # 0-d tensors
        torch.rsqrt(torch.rand(10, generator=g) + 0.5)
        F.relu(torch.zeros(5))                          # all zeros
        F.relu(torch.empty(0, 3))                       # empty: no file, generated from stats
        (torch.rand(6, generator=g) > 0.5) * (torch.rand(6, generator=g) > 0.3)   # bool
        return None

    apis = [("Functional", F, "relu"), ("Torch", torch, "matmul"), ("Functional", F, "softmax"),
            ("Tensor", torch.Tensor, "__add__"), ("Torch", torch, "sum"), ("Torch", torch, "argmax"),
            ("Functional", F, "gelu"), ("Tensor", torch.Tensor, "__mul__"), ("Torch", torch, "rsqrt")]
    out = os.path.join(HERE, "pt_fp32_fwd")
    rec = record(out, body, apis=apis, backward=False,
                 broken={"Functional.gelu.0.forward.output.0": lambda t: t * 1.1 + 0.05})
    # A communication API run_ut never executes, and an API no runner knows.
    path = os.path.join(out, "dump.json")
    d = json.load(open(path))
    t = d["data"]["Functional.relu.0.forward"]["input_args"][0]
    d["data"]["Distributed.all_reduce.0.forward"] = {"input_args": [dict(t)], "input_kwargs": {"group": None},
                                                     "output": [dict(t), None]}
    d["data"]["Torch.made_up_op.0.forward"] = {"input_args": [dict(t)], "input_kwargs": {},
                                               "output": [dict(t)]}
    json.dump(d, open(path, "w"), indent=1)
    return rec


def block_body(dtype, seed):
    g = gen(seed)
    p = mk.make_params(16, 32, dtype, g)
    x = torch.randn(2, 4, 16, generator=g).to(dtype).requires_grad_(True)
    return lambda: mk.transformer_block(x, p).float().pow(2).mean()


def main():
    pt_fp32_fwd()
    record(os.path.join(HERE, "pt_fp16_fwdbwd"), block_body(torch.float16, 2), upcast_half=True)
    record(os.path.join(HERE, "pt_bf16_stats"), block_body(torch.bfloat16, 3), task="statistics", upcast_half=True)
    # Mixed: every input_args tensor of the linears keeps its file, outputs of some APIs do not.
    record(os.path.join(HERE, "pt_mixed"), block_body(torch.float32, 4), backward=False,
           save_filter=lambda n: not (n.startswith("Functional.softmax") or ".input.1" in n))
    bad = os.path.join(HERE, "pt_bad_files")
    record(bad, block_body(torch.float32, 5), backward=False)
    os.remove(os.path.join(bad, "dump_tensor_data", "Functional.softmax.0.forward.input.0.pt"))
    corrupt = os.path.join(bad, "dump_tensor_data", "Functional.gelu.0.forward.input.0.pt")
    data = open(corrupt, "rb").read()
    open(corrupt, "wb").write(data[: len(data) // 2])
    ms_apis = [("Mint", torch, "matmul"), ("MintFunctional", F, "relu"), ("MintFunctional", F, "softmax"),
               ("Tensor", torch.Tensor, "add"), ("Functional", F, "gelu")]

    def ms_body(dtype, seed):
        g = gen(seed)

        def body():
            x = torch.randn(4, 8, generator=g).to(dtype).requires_grad_(True)
            w = torch.randn(8, 8, generator=g).to(dtype).requires_grad_(True)
            y = torch.matmul(x, w)
            y = F.relu(y).add(torch.randn(4, 8, generator=g).to(dtype))
            z = F.gelu(F.softmax(y, dim=-1))
            return z.float().sum()
        return body

    record(os.path.join(HERE, "ms_fp32_tensor"), ms_body(torch.float32, 6), framework="mindspore", npy=True,
           apis=ms_apis)
    record(os.path.join(HERE, "ms_fp16_stats"), ms_body(torch.float16, 7), framework="mindspore",
           task="statistics", apis=ms_apis, upcast_half=True)
    # -f / --filter_api: relu.1 repeats relu.0 exactly; relu.2 has other data; gelu.1 other kwargs.
    g = gen(8)

    def dup_body():
        x = torch.randn(4, 5, generator=g)
        F.relu(x)
        F.relu(x)
        F.relu(torch.randn(4, 5, generator=g))
        F.gelu(x)
        F.gelu(x, approximate="tanh")
        return None

    record(os.path.join(HERE, "pt_dup_stats"), dup_body, task="statistics", backward=False,
           apis=[("Functional", F, "relu"), ("Functional", F, "gelu")])
    print("fixtures written to", HERE)


if __name__ == "__main__":
    main()
