#!/usr/bin/python3
"""Expected values for probe::DumpWriter (tests/dump_writer): msprobe's per-tensor statistics and "md5" (CRC-32)
computed by torch/numpy/zlib, and a dump.json written by Python's json.dump(indent=1) that the C++ writer must
reproduce byte for byte.

Statistics follow dump-and-compare §1.4.4: PyTorch computes max/min/mean/norm in the tensor's own dtype for
float16/bfloat16/float32 (torch's own kernels, as msprobe calls them) and in float32 otherwise; 0-d tensors give
the value itself, bool tensors any/all, empty tensors null. MindSpore widens bfloat16 to float32 first and keeps
the norm of complex tensors. md5 = zlib.crc32 of the tensor's bytes (MindSpore: bf16 as float32).

Run with Debian's /usr/bin/python3 (torch 1.13): /usr/bin/python3 tests/data/make_dump_writer_fixtures.py
"""
import json
import math
import os
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dump_writer")

DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "int8": torch.int8, "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
    "complex64": torch.complex64,
}


def raw_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def num(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v
    return float(v)


def torch_stats(t, mindspore=False):
    if t.numel() == 0:
        return [None] * 4
    if t.is_complex():
        a = np.abs(t.numpy()).astype(np.float64)
        norm = float(np.linalg.norm(a)) if mindspore else None
        return [float(a.max()), float(a.min()), float(a.mean()), norm]
    if t.dtype == torch.bool:
        return [bool(t.any()), bool(t.all()), None, None]
    if t.dim() == 0:
        v = t.item()
        return [v] * 4
    own = (torch.float16, torch.float32) + (() if mindspore else (torch.bfloat16,))
    d = t if t.dtype in own else t.float()
    # fp16/bf16 mean and norm: accumulated in float32 and rounded once to the dtype, as device kernels do.
    # (torch 1.13's CPU half norm accumulates in half and overflows to inf for a norm of 2560; an NPU does not.)
    acc = d.float()
    return [num(d.max().item()), num(d.min().item()), num(acc.mean().to(d.dtype).item()),
            num(torch.linalg.vector_norm(acc).to(d.dtype).item())]


def crc(t, mindspore=False):
    if mindspore and t.dtype == torch.bfloat16:
        t = t.float()
    return "%08x" % (zlib.crc32(raw_bytes(t)) & 0xFFFFFFFF)


def cases():
    g = torch.Generator().manual_seed(15)
    out = []

    def add(name, t):
        out.append((name, t))

    for dt in ("float16", "bfloat16", "float32", "float64"):
        add(dt + "_matrix", (torch.randn(7, 13, generator=g, dtype=torch.float64) * 3).to(DTYPES[dt]))
    add("float16_large", (torch.randn(4096, generator=g, dtype=torch.float64) * 40).to(torch.float16))
    add("bfloat16_large", (torch.randn(4096, generator=g, dtype=torch.float64) * 40).to(torch.bfloat16))
    add("float32_with_nan", torch.tensor([1.0, float("nan"), -2.0]))
    add("float32_with_inf", torch.tensor([1.0, float("inf"), -2.0]))
    add("float16_overflowing_norm", torch.full((8,), 60000.0, dtype=torch.float16))
    add("int32_vector", torch.randint(-1000, 1000, (17,), generator=g, dtype=torch.int32))
    add("int64_matrix", torch.randint(-100000, 100000, (3, 5), generator=g, dtype=torch.int64))
    add("uint8_vector", torch.randint(0, 255, (9,), generator=g, dtype=torch.uint8))
    add("int8_vector", torch.randint(-128, 127, (9,), generator=g, dtype=torch.int8))
    add("bool_mixed", torch.tensor([True, False, True]))
    add("bool_all_true", torch.tensor([[True, True], [True, True]]))
    add("bool_all_false", torch.zeros(3, dtype=torch.bool))
    add("int64_0d", torch.tensor(423, dtype=torch.int64))
    add("int64_0d_beyond_2p53", torch.tensor(2 ** 60 + 1, dtype=torch.int64))
    add("float32_0d", torch.tensor(0.1, dtype=torch.float32))
    add("float16_0d", torch.tensor(-2.5, dtype=torch.float16))
    add("bool_0d", torch.tensor(True))
    add("float32_empty", torch.zeros(0, 3))
    add("bfloat16_empty", torch.zeros(0, dtype=torch.bfloat16))
    add("complex64_vector", torch.complex(torch.randn(5, generator=g), torch.randn(5, generator=g)))
    return out


def values_of(t):
    if t.is_complex():
        return [[float(z.real), float(z.imag)] for z in t.flatten().tolist()]
    if t.dtype == torch.bool:
        return [bool(v) for v in t.flatten().tolist()]
    if t.dtype.is_floating_point:
        # Exact decimal spelling of each element: repr of the value widened to float64.
        return [float(v) for v in t.double().flatten().tolist()]
    return [int(v) for v in t.flatten().tolist()]


def write_stats():
    rows = []
    for name, t in cases():
        rows.append({
            "name": name,
            "dtype": str(t.dtype).replace("torch.", ""),
            "shape": list(t.shape),
            "values": values_of(t),
            "pytorch": {"stats": torch_stats(t), "md5": crc(t)},
            "mindspore": {"stats": torch_stats(t, mindspore=True), "md5": crc(t, mindspore=True)},
        })
    with open(os.path.join(OUT, "statistics.json"), "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


def tensor_obj(t, md5=True):
    s = torch_stats(t)
    o = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape),
         "Max": s[0], "Min": s[1], "Mean": s[2], "Norm": s[3], "requires_grad": False}
    if md5:
        o["md5"] = crc(t)
    return o


def write_golden():
    """A statistics+md5 L1 dump of three calls, the way msprobe's json.dump writes it."""
    x = torch.tensor([[0.5, -1.25, 2.0], [3.0, 0.0, -0.75]], dtype=torch.float16)
    relu = torch.relu(x.float()).half()  # torch 1.13 has no CPU half relu; exact either way
    idx = torch.tensor([2, 0], dtype=torch.int64)
    data = {
        "Functional.relu.0.forward": {
            "input_args": [tensor_obj(x)],
            "input_kwargs": {"inplace": {"type": "bool", "value": False}},
            "output": [tensor_obj(relu)],
        },
        "Tensor.__getitem__.0.forward": {
            "input_args": [tensor_obj(x), [{"type": "slice", "value": [None, 1, None]},
                                           {"type": "ellipsis", "value": "..."}]],
            "input_kwargs": {},
            "output": [tensor_obj(x[:1, ...])],
        },
        "Torch.index_select.0.forward": {
            "input_args": [tensor_obj(x), {"type": "int", "value": 1}, tensor_obj(idx)],
            "input_kwargs": {"dtype": {"type": "torch.dtype", "value": "torch.float16"},
                             "note": {"type": "str", "value": "caf\u00e9 \"q\"\n"},
                             "scale": {"type": "float", "value": 1e-05}},
            "output": [tensor_obj(torch.index_select(x.float(), 1, idx).half()), None],
        },
        "Functional.relu.0.backward": {
            "input": [tensor_obj(torch.ones_like(relu))],
            "output": [tensor_obj((x > 0).to(torch.float16))],
        },
    }
    dump = {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": data}
    with open(os.path.join(OUT, "golden_dump.json"), "w") as f:
        json.dump(dump, f, indent=1)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write_stats()
    write_golden()
    print("wrote", OUT)
