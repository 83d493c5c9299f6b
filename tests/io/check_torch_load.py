#!/usr/bin/python3
"""Reads .pt files written by probe's save_pt with Python's own torch.load and checks every value.

    /usr/bin/python3 check_torch_load.py MANIFEST

MANIFEST lines: `file|dtype|d0,d1,...|v0 v1 ...` (values as Python float/int literals, `nan`, `inf`).
Exit 0 and "checked N files" when torch reads each file as a tensor of that dtype, shape and values
(bit-exact: NaN meets NaN, -0.0 keeps its sign); exit 1 with the differences otherwise.
Run by tests/io/TorchLoadTest.cpp (CTest), with Debian's python3-torch that tools/bootstrap.sh installs.
"""
import math
import sys

import torch


def same(want, got):
    if isinstance(want, float):
        if math.isnan(want):
            return math.isnan(got)
        return want == got and math.copysign(1.0, want) == math.copysign(1.0, got)
    return want == got


def main(manifest):
    problems, files = [], 0
    for line in open(manifest):
        line = line.rstrip("\n")
        if not line:
            continue
        path, dtype, shape, values = line.split("|")
        files += 1
        try:
            t = torch.load(path, weights_only=True)
        except Exception as e:  # an unreadable file is the failure this test looks for
            problems.append(f"{path}: torch.load failed: {e!r}")
            continue
        if not isinstance(t, torch.Tensor):
            problems.append(f"{path}: loaded a {type(t).__name__}, not a tensor")
            continue
        want_shape = [int(d) for d in shape.split(",") if d]
        if str(t.dtype) != "torch." + dtype or list(t.shape) != want_shape:
            problems.append(f"{path}: {t.dtype} {list(t.shape)}, want torch.{dtype} {want_shape}")
            continue
        if t.dtype.is_floating_point:
            want = [float(v) for v in values.split()]
            got = t.double().flatten().tolist()
        elif t.dtype == torch.bool:
            want = [v == "1" for v in values.split()]
            got = t.flatten().tolist()
        else:
            want = [int(v) for v in values.split()]
            got = t.flatten().tolist()
        bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if not same(w, g)]
        if len(want) != len(got) or bad:
            problems.append(f"{path}: {len(got)} values, want {len(want)}; first differences {bad[:3]}")
    for p in problems:
        print(p)
    print(f"checked {files} files, {len(problems)} problems")
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
