"""Fault-injection cases for the error bound of a convolution (DECISIONS D14, D25), made with real torch.

For each geometry (stride, padding, dilation, groups) and dtype (float32, bfloat16): the inputs as the dtype
holds them, torch's float64 convolution of those inputs (the bench), torch's convolution in the dtype (the
clean device output), the convolution on absolute values (the exact magnitude D14 used before D25), and
faulty device outputs: 1% on a 4x4 tile of the last output channel (a tile-remainder bug), the last
channel 2% off everywhere, and one element's sign flipped. Every fault is far beyond the rounding of the
dtype; the clean outputs are torch's own kernels.

Output: tests/data/conv_faults/cases.json. Run with Debian's /usr/bin/python3 (python3-torch).
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "conv_faults", "cases.json")

GEOMETRIES = [
    dict(name="3x3 pad 1", stride=1, padding=1, dilation=1, groups=1),
    dict(name="3x3 stride 2 dilation 2", stride=2, padding=0, dilation=2, groups=1),
    dict(name="3x3 groups 2 pad 1", stride=1, padding=1, dilation=1, groups=2),
    dict(name="3x3 depthwise pad 1", stride=1, padding=1, dilation=1, groups=8),
]


def nums(t):
    return [float(v) for v in t.double().reshape(-1).tolist()]


def main():
    g = torch.Generator().manual_seed(20261128)
    cases = []
    for geo in GEOMETRIES:
        cin, cout = 8, 8
        x = torch.randn(1, cin, 12, 12, generator=g)
        w = torch.randn(cout, cin // geo["groups"], 3, 3, generator=g)
        b = torch.randn(cout, generator=g)
        kw = {k: geo[k] for k in ("stride", "padding", "dilation", "groups")}
        for dtype in (torch.float32, torch.bfloat16):
            xd, wd, bd = x.to(dtype), w.to(dtype), b.to(dtype)
            bench = torch.nn.functional.conv2d(xd.double(), wd.double(), bd.double(), **kw)
            device = torch.nn.functional.conv2d(xd, wd, bd, **kw)
            exact_m = torch.nn.functional.conv2d(xd.double().abs(), wd.double().abs(), bd.double().abs(), **kw)
            faults = []
            tile = device.clone()
            tile[0, -1, :4, :4] = (tile[0, -1, :4, :4].float() * 1.01).to(dtype)
            faults.append(("1% on a 4x4 tile", tile))
            chan = device.clone()
            chan[0, -1] = (chan[0, -1].float() * 1.02).to(dtype)
            faults.append(("2% on the last channel", chan))
            flip = device.clone()
            i = int(bench.abs().reshape(-1).argmax())
            flip.view(-1)[i] = -flip.view(-1)[i]
            faults.append(("sign flip", flip))
            cases.append({
                "geometry": geo["name"], "dtype": str(dtype).replace("torch.", ""),
                "stride": geo["stride"], "padding": geo["padding"], "dilation": geo["dilation"],
                "groups": geo["groups"],
                "x_shape": list(x.shape), "w_shape": list(w.shape), "out_shape": list(bench.shape),
                "x": nums(xd), "w": nums(wd), "b": nums(bd), "bench": nums(bench), "clean": nums(device),
                "exact_magnitude": nums(exact_m),
                "faults": [{"name": n, "value": nums(t)} for n, t in faults],
            })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "make_conv_fault_fixtures.py", "torch": torch.__version__, "cases": cases}, f)
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
