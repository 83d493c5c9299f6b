#!/usr/bin/python3
"""Writes a LLaMA-style block dump (msprobe tensor mode, L1, forward and backward, .pt files, float32 or
--dtype bfloat16 as mixed-precision training runs it)
large enough to time `probe run_ut` the way the real workload loads it (issue 13: >= 1 GB).

Run with Debian's interpreter (it has torch), into a directory OUTSIDE the repository:
    /usr/bin/python3 benchmarks/make_llama_dump.py /tmp/llama_dump [--layers N] [--hidden H] [--seq S]
                     [--dtype float32|bfloat16]

The model is real PyTorch code (RMSNorm, rotary embedding, causal attention, SwiGLU MLP, residuals) run
under examples/make_example_dump.py's recorder, which wraps torch APIs like msprobe's hooks and writes
dump.json / stack.json / construct.json and dump_tensor_data/*.pt (torch.save) in msprobe's layout.
It also writes floor.json: the tensor bytes and the float64 GEMM FLOPs run_ut has to do on the dump
(matmul/linear forward, and the two products of each backward), the inputs of benchmarks/run_ut_floor.py.
"""
import argparse
import json
import os
import shutil
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import make_example_dump as med  # noqa: E402

# The APIs msprobe's hooks would see in this model (prefix, owner, name).
APIS = [
    ("Functional", F, "linear"), ("Functional", F, "softmax"), ("Functional", F, "silu"),
    ("Torch", torch, "matmul"), ("Torch", torch, "rsqrt"), ("Torch", torch, "cat"),
    ("Tensor", torch.Tensor, "__add__"), ("Tensor", torch.Tensor, "__mul__"),
    ("Tensor", torch.Tensor, "__neg__"), ("Tensor", torch.Tensor, "pow"), ("Tensor", torch.Tensor, "mean"),
    ("Tensor", torch.Tensor, "transpose"), ("Tensor", torch.Tensor, "reshape"),
]


def rms_norm(x, w, eps=1e-6):
    var = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(var + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x.narrow(-1, half, half), x.narrow(-1, 0, half)), dim=-1)


def llama_block(x, p, cos, sin, mask, heads):
    b, s, h = x.shape
    hd = h // heads
    y = rms_norm(x, p["attn_norm"])
    q = F.linear(y, p["wq"]).reshape(b, s, heads, hd).transpose(1, 2)
    k = F.linear(y, p["wk"]).reshape(b, s, heads, hd).transpose(1, 2)
    v = F.linear(y, p["wv"]).reshape(b, s, heads, hd).transpose(1, 2)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / hd ** 0.5) + mask
    attn = F.softmax(scores, dim=-1)
    ctx = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, h)
    x = x + F.linear(ctx, p["wo"])
    y = rms_norm(x, p["mlp_norm"])
    return x + F.linear(F.silu(F.linear(y, p["wg"])) * F.linear(y, p["wu"]), p["wd"])


def make_params(h, ffn, gen, dtype=torch.float32):
    def w(o, i):
        return (torch.randn(o, i, generator=gen) * i ** -0.5).to(dtype).requires_grad_(True)
    return {"attn_norm": (1 + 0.1 * torch.randn(h, generator=gen)).to(dtype).requires_grad_(True),
            "mlp_norm": (1 + 0.1 * torch.randn(h, generator=gen)).to(dtype).requires_grad_(True),
            "wq": w(h, h), "wk": w(h, h), "wv": w(h, h), "wo": w(h, h),
            "wg": w(ffn, h), "wu": w(ffn, h), "wd": w(h, ffn)}


def gemm_flops(data):
    """Float64 multiply-add FLOPs (2 per MAC) run_ut computes for the GEMMs of the dump: each forward
    matmul/linear once, and its backward's two products (grad wrt both operands)."""
    total = 0
    for key, entry in data.items():
        if not key.endswith(".forward"):
            continue
        api = key.rsplit(".", 2)[0]
        shapes = [a["shape"] for a in entry["input_args"] if isinstance(a, dict) and "shape" in a]
        if api.startswith("Functional.linear"):
            x, w = shapes[0], shapes[1]
            macs = 1
            for d in x[:-1]:
                macs *= d
            macs *= w[0] * w[1]
        elif api.startswith("Torch.matmul"):
            a, b = shapes[0], shapes[1]
            batch = 1
            for d in a[:-2]:
                batch *= d
            macs = batch * a[-2] * a[-1] * b[-1]
        else:
            continue
        fwd = 2 * macs
        total += fwd
        if key[:-len(".forward")] + ".backward" in data:
            total += 2 * fwd
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2816)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    repo = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    out = os.path.realpath(args.out)
    if out == repo or out.startswith(repo + os.sep):
        sys.exit("write the dump outside the repository (it is >= 1 GB)")
    if os.path.isdir(out):
        shutil.rmtree(out)
    torch.set_grad_enabled(True)
    gen = torch.Generator().manual_seed(20260113)
    h, hd = args.hidden, args.hidden // args.heads
    layers = [make_params(h, args.ffn, gen, dtype) for _ in range(args.layers)]
    x = torch.randn(args.batch, args.seq, h, generator=gen).to(dtype).requires_grad_(True)
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(args.seq, dtype=torch.float32), inv)
    ang = torch.cat((ang, ang), dim=-1)
    cos, sin = ang.cos()[None, None].to(dtype), ang.sin()[None, None].to(dtype)
    mask = torch.full((args.seq, args.seq), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]
    rec = med.Recorder(out)
    with med.hooked(rec, apis=APIS):
        y = x
        for p in layers:
            y = llama_block(y, p, cos, sin, mask, args.heads)
    loss = y.pow(2).mean()
    loss.backward(retain_graph=True)
    rec.build()
    rec.write()
    tensor_dir = os.path.join(out, "dump_tensor_data")
    nbytes = sum(os.path.getsize(os.path.join(tensor_dir, f)) for f in os.listdir(tensor_dir))
    fwd = sum(1 for k in rec.data if k.endswith(".forward"))
    floor = {"tensor_bytes": nbytes, "tensor_files": len(os.listdir(tensor_dir)), "forward_entries": fwd,
             "backward_entries": len(rec.data) - fwd, "gemm_flops_float64": gemm_flops(rec.data),
             "args": vars(args)}
    with open(os.path.join(out, "floor.json"), "w") as f:
        json.dump(floor, f, indent=1)
    print(json.dumps(floor))


if __name__ == "__main__":
    main()
