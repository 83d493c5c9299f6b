#!/usr/bin/python3
"""Checks dumps written by probe::DumpWriter the way a Python user reads them: json.load of every dump.json,
torch.load(weights_only=True) of each .pt and numpy.load(allow_pickle=False) of each .npy; every tensor file
must have the dtype, shape and CRC-32 ("md5") its descriptor states, and statistics must agree with torch's.

Usage: /usr/bin/python3 tests/data/check_written_dump.py DUMP_ROOT...   (exit 0 only when every file checks out)
"""
import json
import math
import os
import sys
import zlib

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("cannot check without numpy and torch: " + str(e))
    sys.exit(1)

MS_DTYPES = {"Float16": np.float16, "Float32": np.float32, "Float64": np.float64, "BFloat16": np.float32,
             "Int8": np.int8, "Int16": np.int16, "Int32": np.int32, "Int64": np.int64, "UInt8": np.uint8,
             "Bool": np.bool_}

problems = []
checked = 0


def close(a, b, rel):
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def check_tensor(rank_dir, framework, desc, where):
    global checked
    name = desc.get("data_name")
    if not name:
        return
    path = os.path.join(rank_dir, "dump_tensor_data", name)
    if framework == "pytorch":
        t = torch.load(path, weights_only=True) if "weights_only" in torch.load.__code__.co_varnames \
            else torch.load(path)
        if not isinstance(t, torch.Tensor):
            problems.append(f"{where}: {name} holds {type(t)}")
            return
        if str(t.dtype) != desc["dtype"]:
            problems.append(f"{where}: {name} dtype {t.dtype} != {desc['dtype']}")
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).contiguous().numpy().tobytes()
        stats_t = t
    else:
        a = np.load(path, allow_pickle=False)
        if a.dtype != MS_DTYPES[desc["dtype"]]:
            problems.append(f"{where}: {name} numpy dtype {a.dtype} for {desc['dtype']}")
        raw = a.tobytes()
        stats_t = torch.from_numpy(a.copy())
    if list(stats_t.shape) != desc["shape"]:
        problems.append(f"{where}: {name} shape {list(stats_t.shape)} != {desc['shape']}")
    if "md5" in desc and desc["md5"] != "%08x" % (zlib.crc32(raw) & 0xFFFFFFFF):
        problems.append(f"{where}: {name} CRC-32 differs from md5 {desc['md5']}")
    if stats_t.dtype != torch.bool and stats_t.dim() > 0 and not stats_t.is_complex():
        f = stats_t.double()
        rel = {torch.float16: 2 ** -10, torch.bfloat16: 2 ** -7}.get(stats_t.dtype, 2 ** -22)
        for key, want in (("Max", f.max().item()), ("Min", f.min().item()), ("Mean", f.mean().item()),
                          ("Norm", torch.linalg.vector_norm(f).item())):
            if not close(desc[key], want, rel):
                problems.append(f"{where}: {name} {key} {desc[key]} vs torch {want}")
    checked += 1


def walk(node, rank_dir, framework, where):
    if isinstance(node, list):
        for i, v in enumerate(node):
            walk(v, rank_dir, framework, f"{where}.{i}")
    elif isinstance(node, dict):
        if node.get("type") in ("torch.Tensor", "mindspore.Tensor"):
            check_tensor(rank_dir, framework, node, where)
        else:
            for k, v in node.items():
                walk(v, rank_dir, framework, f"{where}.{k}")


def main(roots):
    dumps = 0
    for root in roots:
        for dirpath, _, files in os.walk(root):
            if "dump.json" not in files:
                continue
            with open(os.path.join(dirpath, "dump.json")) as f:
                dump = json.load(f)
            for side in ("stack.json", "construct.json"):
                if side in files:
                    with open(os.path.join(dirpath, side)) as f:
                        json.load(f)
            dumps += 1
            for key, entry in dump["data"].items():
                walk(entry, dirpath, dump["framework"], key)
    for p in problems:
        print("FAIL", p)
    print(f"{dumps} dump.json files, {checked} tensor files checked, {len(problems)} problems")
    return 1 if problems or dumps == 0 or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
