#!/usr/bin/python3
"""Writes online pre-check frames (include/probe/precheck_frame.h, DECISIONS D9) with an encoder written
independently of probe (numpy/torch for the tensor bytes, zlib for the CRC), plus expected.txt listing every
blob's dtype, shape and element values as Python prints them, for tests/online/PrecheckFrameTest.cpp.

Run: /usr/bin/python3 tests/data/precheck_frame/make_frames.py   (writes next to this script)
"""
import json
import os
import struct
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "run_ut", "pt_fp32_fwd")


def descriptor(t, index):
    return {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape),
            "Max": None, "Min": None, "Mean": None, "Norm": None,
            "requires_grad": False, "data_name": str(index)}


def blob_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: its 16 bits are int16's
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    a = t.numpy()
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def frame(header, tensors):
    header_bytes = json.dumps(header, allow_nan=True).encode()
    blobs = [blob_bytes(t) for t in tensors]
    body_len = 24 + 8 * len(blobs) + len(header_bytes) + sum(len(b) for b in blobs)
    total = body_len + 4
    out = b"PRBF" + struct.pack("<HHQII", 1, 0, total, len(header_bytes), len(blobs))
    out += b"".join(struct.pack("<Q", len(b)) for b in blobs) + header_bytes + b"".join(blobs)
    return out + struct.pack("<I", zlib.crc32(out) & 0xFFFFFFFF)


def document(key, body):
    return {"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "frame",
            "data": {key: body}}


def expected_lines(name, tensors):
    lines = []
    for i, t in enumerate(tensors):
        values = t.to(torch.float64).reshape(-1).tolist()
        shape = ",".join(str(d) for d in t.shape)
        lines.append(f"{name} {i} {t.dtype} [{shape}] " + " ".join(repr(v) for v in values))
    return lines


def all_dtypes():
    g = torch.Generator().manual_seed(17)
    tensors = [
        torch.tensor([[1.0, -0.0, float("nan")], [float("inf"), 65504.0, 6.1e-5]], dtype=torch.float16),
        torch.tensor([1.0, -3.140625, 3.3895e38, float("-inf")], dtype=torch.bfloat16),
        torch.randn(2, 2, generator=g, dtype=torch.float32),
        torch.tensor([1e-300, -2.5, float("nan")], dtype=torch.float64),
        torch.tensor([-128, 127], dtype=torch.int8),
        torch.tensor([0, 255], dtype=torch.uint8),
        torch.tensor([-32768, 32767], dtype=torch.int16),
        torch.tensor([-2**31, 2**31 - 1], dtype=torch.int32),
        torch.tensor([-2**53, 2**53], dtype=torch.int64),
        torch.tensor([True, False, True, True, False]),
        torch.tensor(2.5, dtype=torch.float32),  # 0-d
        torch.zeros(0, 3, dtype=torch.float32),  # empty
    ]
    output = [torch.randn(2, 3, generator=g, dtype=torch.float32)]
    args = [descriptor(t, i) for i, t in enumerate(tensors)]
    # A nested list argument and a statistics-only descriptor (no data_name, hence no blob).
    stats_only = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0,
                  "Mean": 0.5, "Norm": 1.0, "requires_grad": False}
    body = {"input_args": [args[0], [args[1], {"type": "int", "value": 3}], *args[2:], stats_only],
            "input_kwargs": {"alpha": {"type": "float", "value": 0.5}, "dim": {"type": "int", "value": -1}},
            "output": [descriptor(output[0], len(tensors))]}
    all_t = tensors + output
    return frame(document("Torch.mixed.0.forward", body), all_t), expected_lines("all_dtypes.frame", all_t)


def relu_from_fixture():
    """The first API of tests/data/run_ut/pt_fp32_fwd, its tensors renamed to blob indices."""
    with open(os.path.join(FIXTURE, "dump.json")) as f:
        dump = json.load(f)
    body = dump["data"]["Functional.relu.0.forward"]
    tensors = []

    def rename(node):
        if isinstance(node, dict) and "data_name" in node:
            t = torch.load(os.path.join(FIXTURE, "dump_tensor_data", node["data_name"]))
            node = dict(node, data_name=str(len(tensors)))
            tensors.append(t)
            return node
        if isinstance(node, dict):
            return {k: rename(v) for k, v in node.items()}
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    body = rename(body)
    return frame(document("Functional.relu.0.forward", body), tensors), expected_lines("relu.frame", tensors)


def main():
    lines = []
    for name, make in (("all_dtypes.frame", all_dtypes), ("relu.frame", relu_from_fixture)):
        data, expected = make()
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        lines += expected
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
