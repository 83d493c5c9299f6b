#!/usr/bin/python3
"""Dumps that put one element of a dataflow-checked gradient (DECISIONS D16) just inside and just outside
its bound, and inside the reduced-precision band.

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/data/run_ut/make_dataflow_edge_dumps.py

The model h = x * c; y = F.linear(h, W) with a 3-D h, recorded at msprobe's hook point
(make_real_model_dumps.NodeHookRecorder). The linear's recorded node is its reshape, so the gradient it
passes to h is known only through h's producer: Tensor.__mul__.0's dumped backward input.0. Element
[0, 0, 0] of that file is replaced by v + f B, where v is torch's float64 gradient g @ W at that element
(g: the linear's dumped backward input, W: its dumped weight) and B the D16 bound computed here from its
documented formula (one unknown consumer, a GEMM: c_f = 1, K = the output features, m by Cauchy-Schwarz
||g_row|| ||W_col||, no summation term); __mul__'s dumped backward output is recomputed from the changed
gradient so that __mul__'s own row stays consistent. edge.json lists each dump with the status D16 must
give the linear's backward row.

dataflow_latest_fp32: h = x * c with x, c > 0, r = relu(h) (the same bytes as h), y = linear(r, W) with a
3-D r, and h also consumed by a second __mul__ before the relu: the linear's input has the bytes of two
outputs, and the latest, relu's, computed them from a tensor with those bytes, so it is the one linked.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_real_model_dumps as real  # noqa: E402

APIS = [("Functional", F, "linear"), ("Functional", F, "relu"), ("Tensor", torch.Tensor, "__mul__")]
SLACK = 1 + 2.0 ** -10


def gamma(k, u):
    worst = k * u / (1 - k * u) if k * u < 1 else math.inf
    return min(worst, 8 * math.sqrt(k) * u)


def model(dtype):
    g = torch.Generator().manual_seed(61)
    x = torch.randn(2, 3, 8, generator=g).to(dtype).requires_grad_(True)
    c = (torch.rand(2, 3, 8, generator=g) + 0.5).to(dtype)
    w = (torch.randn(16, 8, generator=g) * 0.3).to(dtype).requires_grad_(True)

    def body():
        return F.linear(x * c, w).sum()
    return body, c


def make(name, dtype, where):
    body, c = model(dtype)
    rec = real.run(name, body, apis=APIS)
    tdir = os.path.join(HERE, name, "dump_tensor_data")
    load = lambda n: torch.load(os.path.join(tdir, n + ".pt"))  # noqa: E731
    gout = load("Functional.linear.0.backward.input.0").double()   # [2, 3, 16]
    wt = load("Functional.linear.0.forward.input.1").double()       # [16, 8]
    v = (gout[0, 0] @ wt)[0].item()
    m = gout[0, 0].norm().item() * wt[:, 0].norm().item()
    k = wt.shape[0]
    f64 = dtype == torch.float64
    u = {torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53}[dtype]
    u_acc = 2.0 ** -53 if f64 else 2.0 ** -24
    share = 2 if f64 else 1
    tiny = {torch.float32: 2.0 ** -149, torch.float64: 2.0 ** -1074}[dtype]
    bound = SLACK * (u * abs(v) + share * (1 * u_acc + gamma(k, u_acc)) * m) + tiny
    band = SLACK * (u * abs(v) + max(share * (u_acc + gamma(k, u_acc)), u_acc + 4 * 2.0 ** -11) * m) + tiny
    target = {"inside": v + 0.5 * bound, "outside": v + 1.5 * bound, "band": v + 0.5 * (bound + band),
              "beyond_band": v + 1.5 * band}[where]
    gin = load("Tensor.__mul__.0.backward.input.0")
    gin[0, 0, 0] = target
    got = gin[0, 0, 0].item()
    err = abs(got - v)
    status = "pass" if err <= bound else "Warning" if err <= band and not f64 else "error"
    torch.save(gin, os.path.join(tdir, "Tensor.__mul__.0.backward.input.0.pt"))
    torch.save((gin * c).to(dtype), os.path.join(tdir, "Tensor.__mul__.0.backward.output.0.pt"))
    # The statistics of the changed files, as msprobe would have written them.
    dump_path = os.path.join(HERE, name, "dump.json")
    dump = json.load(open(dump_path))
    for key, t in (("input", gin), ("output", (gin * c).to(dtype))):
        obj = dump["data"]["Tensor.__mul__.0.backward"][key][0]
        mx, mn, mean, norm = real.mk._stats(t)
        obj.update({"Max": mx, "Min": mn, "Mean": mean, "Norm": norm})
    with open(dump_path, "w") as fh:
        json.dump(dump, fh, indent=1)
    return {"status": status, "error_over_bound": err / bound, "bound": bound, "band": band}


def latest():
    g = torch.Generator().manual_seed(62)
    x = (torch.rand(2, 3, 8, generator=g) + 0.1).requires_grad_(True)
    c = torch.rand(2, 3, 8, generator=g) + 0.5
    w = (torch.randn(16, 8, generator=g) * 0.3).requires_grad_(True)

    def body():
        h = x * c
        side = h * 2.0
        r = F.relu(h)
        return F.linear(r, w).sum() + side.sum()
    real.run("dataflow_latest_fp32", body, apis=APIS)


def main():
    latest()
    edge = {}
    for dtype, tag in ((torch.float64, "fp64"), (torch.float32, "fp32")):
        for where in ("inside", "outside") + (("band", "beyond_band") if dtype == torch.float32 else ()):
            name = f"dataflow_edge_{tag}_{where}"
            edge[name] = make(name, dtype, where)
    with open(os.path.join(HERE, "dataflow_edge.json"), "w") as fh:
        json.dump(edge, fh, indent=1)
    print(json.dumps(edge, indent=1))


if __name__ == "__main__":
    main()
