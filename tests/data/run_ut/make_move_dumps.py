#!/usr/bin/python3
"""Real-model dumps of moves, identity casts and reshape nodes for run_ut's exact checks (DECISIONS D15).

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/data/run_ut/make_move_dumps.py

The recorder is make_real_model_dumps.py's (msprobe's layout, backward entries from a hook on the node of
each API's first output), with `clone`, `contiguous` and `detach` hooked as well. The model moves data
and activations (`to("cpu")`, `to(dtype)` of the same dtype, `to(copy=True)`, `contiguous` on a
transposed tensor, `clone`, `detach`, `.float()`), and runs a 3-D linear (with and without bias) and a
3-D x 2-D matmul, whose recorded backward is the reshape inside them.

Directories written next to this script:
  real_moves_{fp32,bf16}         the clean model
  real_moves_{fp32,bf16}_faults  the same with one element of a recorded file changed by one unit in the
                                 last place: a move's output (clone, to), a copy's recorded gradient
                                 (clone, to with copy=True) and a reshape node's recorded gradient (linear,
                                 matmul). faults.json names each file with the flat and multi-dimensional
                                 index of the changed element.
"""
import json
import os
import shutil
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_real_model_dumps as real  # noqa: E402

mk = real.mk
real.APIS = real.APIS + [("Tensor", torch.Tensor, "clone"), ("Tensor", torch.Tensor, "contiguous"),
                         ("Tensor", torch.Tensor, "detach"), ("Tensor", torch.Tensor, "transpose")]


def moves(dtype, g):
    def p(*shape, scale=0.3):
        return (torch.randn(*shape, generator=g) * scale).to(dtype).requires_grad_(True)
    w1, w2, b2, w3 = p(8, 6), p(5, 8), p(5), p(8, 4)
    x = torch.randn(2, 3, 6, generator=g).to(dtype)  # data: no grad

    def body():
        xd = x.to("cpu")                       # a device move of data (no node: no backward entry)
        h = F.linear(xd, w1)                   # 3-D linear without bias: recorded at the reshape
        h = h.to("cpu")                        # returns h itself: the node is linear's reshape
        hc = h.clone()                         # CloneBackward0: the gradient passes through
        t = hc.transpose(1, 2).contiguous()    # a real copy (CloneBackward0)
        t = t.to(dtype)                        # returns t itself: the node is contiguous's copy
        u = F.gelu(t)
        v = u.float()                          # fp32: returns u itself (gelu's node); bf16: a cast
        side = u.detach()                      # no gradient
        m = torch.matmul(h, w3)                # [2, 3, 8] @ [8, 4]: recorded at the reshape
        c = F.linear(h, w2, b2)                # 3-D contiguous input with bias: addmm + view
        k = c.to(c.dtype, copy=True)           # ToCopyBackward0 of the same dtype: a copy
        return m.float().sum() + v.sum() + k.float().sum() + side.float().sum() * 0
    return body


def one_ulp(t, flat_index):
    f = t.detach().clone().contiguous()
    iv = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}[f.dtype]
    f.view(-1).view(iv)[flat_index] ^= 1
    return f


def record(name, body, faults=None):
    out = os.path.join(HERE, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    rec = real.NodeHookRecorder(out)
    with real.hooked(rec):
        loss = body()
    loss.backward()
    if faults:
        tensors = {}
        for key, entry in rec.entries:
            for o in entry.get("output", []):
                if isinstance(o, dict) and "data_name" in o:
                    tensors[o["data_name"][:-3]] = o
        written = {}
        for data_name in faults:
            path = os.path.join(rec.tensor_dir, data_name + ".pt")
            t = torch.load(path)
            flat = t.numel() // 2 + 1
            bad = one_ulp(t, flat)
            assert not torch.equal(bad, t)
            torch.save(bad, path)
            mx, mn, mean, norm = mk._stats(bad)
            tensors[data_name].update({"Max": mx, "Min": mn, "Mean": mean, "Norm": norm})
            index = list(torch.unravel_index(torch.tensor(flat), t.shape)) if hasattr(torch, "unravel_index") \
                else [int(i) for i in __import__("numpy").unravel_index(flat, tuple(t.shape))]
            written[data_name] = {"kind": "one_ulp", "flat_index": flat, "index": [int(i) for i in index]}
        with open(os.path.join(out, "faults.json"), "w") as f:
            json.dump(written, f, indent=1)
    rec.write()
    return rec


def main():
    for dtype, tag in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        record(f"real_moves_{tag}", moves(dtype, real.gen(41)))
        record(f"real_moves_{tag}_faults", moves(dtype, real.gen(41)), faults=[
            "Tensor.clone.0.forward.output.0", "Tensor.to.0.forward.output.0",
            "Tensor.clone.0.backward.output.0", "Tensor.to.3.backward.output.0",
            "Functional.linear.0.backward.output.0", "Torch.matmul.0.backward.output.0"])


if __name__ == "__main__":
    main()
