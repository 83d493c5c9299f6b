#!/usr/bin/python3
"""Builds examples/dump/: an msprobe-format tensor-mode dump (L1) of a tiny bfloat16 transformer
block, forward and backward, with ONE API's recorded device output deliberately broken so that
`probe run_ut` flags it.

Run with Debian's interpreter (it has torch):  /usr/bin/python3 examples/make_example_dump.py [OUT]

The recorder wraps torch functions the way msprobe's hooks do (torch.nn.functional.X -> Functional,
torch.X -> Torch, torch.Tensor.X -> Tensor), counts calls per API, and writes dump.json
(json indent=1), stack.json, construct.json and dump_tensor_data/*.pt (torch.save). The module is
also imported by tests/data/run_ut/make_run_ut_fixtures.py.
"""
import json
import os
import shutil
import sys
import threading
import traceback

import numpy as np
import torch
import torch.nn.functional as F

_state = threading.local()
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _repo_relative(path):
    """Stacks name files inside the repository by their repository path: a dump shipped with the project
    must not carry the generating machine's directories."""
    path = os.path.abspath(path)
    return os.path.relpath(path, _REPO) if path.startswith(_REPO + os.sep) else os.path.basename(path)


def _stats(t):
    """msprobe's statistics of one tensor (low precision mode: fp16/bf16 in their own dtype)."""
    if t.numel() == 0:
        return None, None, None, None
    if t.dtype == torch.bool:
        return bool(t.any()), bool(t.all()), None, None
    if t.dim() == 0:
        v = t.item()
        return v, v, v, v
    d = t.detach()
    if d.dtype == torch.float64 or not d.is_floating_point():
        d = d.float()
    try:
        return (float(d.max().item()), float(d.min().item()), float(d.mean().item()), float(d.norm().item()))
    except RuntimeError:  # CPU torch lacks some float16 reductions: reduce in float32, round like the device
        f = d.float()
        return tuple(float(torch.tensor(v.item()).to(d.dtype).item()) for v in (f.max(), f.min(), f.mean(), f.norm()))


class Recorder:
    """Records API calls into msprobe's dump.json structure."""

    def __init__(self, out_dir, task="tensor", framework="pytorch", save_npy=False):
        self.out_dir = out_dir
        self.task = task
        self.framework = framework
        self.save_npy = save_npy  # MindSpore dumps store .npy files
        self.data = {}
        self.counters = {}
        self.stacks = []  # (key, stack lines)
        self.calls = []  # (full name, args, kwargs, outputs, stack) for backward recording
        self.compute = {}  # full name -> the function the call ran (to recompute local gradients)
        self.tensor_dir = os.path.join(out_dir, "dump_tensor_data")
        self.overrides = {}  # data_name -> tensor to save instead (the "device" result)
        self.save_filter = None  # callable(data_name) -> bool: which tensors get files (mixed dumps)

    # --- value encoding (dump-and-compare.md 1.4.3) -------------------------------------------
    def tensor_type(self):
        return "mindspore.Tensor" if self.framework == "mindspore" else "torch.Tensor"

    def dtype_name(self, dt):
        if self.framework != "mindspore":
            return str(dt)
        return {torch.float32: "Float32", torch.float16: "Float16", torch.bfloat16: "BFloat16",
                torch.float64: "Float64", torch.int64: "Int64", torch.int32: "Int32",
                torch.bool: "Bool", torch.uint8: "UInt8", torch.int8: "Int8"}[dt]

    def encode(self, v, data_name):
        if isinstance(v, torch.Tensor):
            mx, mn, mean, norm = _stats(v)
            obj = {"type": self.tensor_type(), "dtype": self.dtype_name(v.dtype), "shape": list(v.shape),
                   "Max": mx, "Min": mn, "Mean": mean, "Norm": norm}
            if self.framework != "mindspore":
                obj["requires_grad"] = bool(v.requires_grad)
            if self.task == "tensor" and v.numel() > 0 and (self.save_filter is None or self.save_filter(data_name)):
                name = data_name + (".npy" if self.save_npy else ".pt")
                self.save_tensor(name, self.overrides.pop(data_name, v))
                obj["data_name"] = name
            return obj
        if isinstance(v, (list, tuple)):
            return [self.encode(x, f"{data_name}.{i}") for i, x in enumerate(v)]
        if v is None:
            return None
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": v}
        if isinstance(v, float):
            return {"type": "float", "value": v}
        if isinstance(v, str):
            return {"type": "str", "value": v}
        if isinstance(v, torch.dtype):
            return {"type": "torch.dtype", "value": str(v)}
        return None

    def save_tensor(self, name, t):
        os.makedirs(self.tensor_dir, exist_ok=True)
        path = os.path.join(self.tensor_dir, name)
        t = t.detach().clone().contiguous()
        if self.save_npy:
            arr = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
            with open(path, "wb") as f:
                np.save(f, arr)
        else:
            torch.save(t, path)

    # --- recording ------------------------------------------------------------------------------
    def next_name(self, prefix, api):
        k = f"{prefix}.{api}"
        n = self.counters.get(k, 0)
        self.counters[k] = n + 1
        return f"{k}.{n}"

    def record_forward(self, full, args, kwargs, out):
        frames = [f for f in traceback.extract_stack()[:-2] if f.name not in ("wrapper", "record_forward")]
        lines = [f"File {_repo_relative(f.filename)}, line {f.lineno}, in {f.name}, \n {(f.line or '').strip()}"
                 for f in reversed(frames) if f.line]
        self.calls.append((full, args, kwargs, out, lines))

    def encode_forward(self, full, args, kwargs, out):
        key = full + ".forward"
        entry = {"input_args": [self.encode(a, f"{key}.input.{i}") for i, a in enumerate(args)],
                 "input_kwargs": {k: self.encode(v, f"{key}.kwargs.{k}") for k, v in kwargs.items()}}
        if self.framework != "mindspore":
            entry["is_recompute"] = False
        outs = out if isinstance(out, (list, tuple)) else (out,)
        entry["output"] = [self.encode(o, f"{key}.output.{i}") for i, o in enumerate(outs)]
        self.data[key] = entry

    def build(self, backward=True):
        """Encodes every recorded call (forward entries in call order, then backward entries in
        the order autograd reaches them) and saves the tensor files."""
        self.data = {}
        self.stacks = []
        for full, args, kwargs, out, lines in self.calls:
            self.encode_forward(full, args, kwargs, out)
            self.stacks.append((full + ".forward", lines))
        if backward:
            self.record_backward()

    def record_backward(self):
        """Per API, the vector-Jacobian product of its own outputs' gradients onto its tensor
        inputs, as msprobe's backward hooks see it: input = grads of outputs, output = grads of inputs."""
        # retain_grad hooks also fire inside torch.autograd.grad, which would inflate .grad of the
        # tensors visited later: take every gradient of the real backward pass first.
        if not hasattr(self, "_grads"):
            self._grads = {}
            for full, _, _, out, _ in self.calls:
                outs = out if isinstance(out, (list, tuple)) else (out,)
                self._grads[full] = [o.grad.detach().clone() if isinstance(o, torch.Tensor) and o.grad is not None
                                     else None for o in outs]
        for full, args, kwargs, out, _ in reversed(self.calls):
            outs = out if isinstance(out, (list, tuple)) else (out,)
            pairs = [(o, g) for o, g in zip(outs, self._grads[full]) if g is not None and o.requires_grad]
            outs = [o for o, _ in pairs]
            ograds = [g for _, g in pairs]
            if not outs:
                continue
            tins = [a for a in args if isinstance(a, torch.Tensor)]
            if not any(a.requires_grad for a in tins):
                continue
            # The API's own vector-Jacobian product: recompute it on detached inputs, so that paths
            # from one input to another through earlier APIs do not leak in (a hook sees only this call).
            local = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
            with torch.enable_grad():
                rout = self.compute[full](*local, **kwargs)
            routs = rout if isinstance(rout, (list, tuple)) else (rout,)
            routs = [ro for ro, o in zip(routs, out if isinstance(out, (list, tuple)) else (out,)) if any(o is x for x in outs)]
            need = [a for a in local if isinstance(a, torch.Tensor) and a.requires_grad]
            grads = torch.autograd.grad(routs, need, grad_outputs=ograds, allow_unused=True)
            it = iter(grads)
            gin = [next(it) if a.requires_grad else None for a in local if isinstance(a, torch.Tensor)]
            key = full + ".backward"
            self.data[key] = {"input": [self.encode(g, f"{key}.input.{i}") for i, g in enumerate(ograds)],
                              "output": [self.encode(g, f"{key}.output.{i}") for i, g in enumerate(gin)]}

    def write(self):
        os.makedirs(self.out_dir, exist_ok=True)
        dump = {"task": self.task, "level": "L1", "framework": self.framework,
                # msprobe writes the absolute path; its readers never use it and run_ut only needs it
                # non-empty, so a dump meant to travel names its tensor folder relative to dump.json.
                "dump_data_dir": "dump_tensor_data" if self.task == "tensor" else None,
                "data": self.data}
        with open(os.path.join(self.out_dir, "dump.json"), "w") as f:
            json.dump(dump, f, indent=1)
        groups = {}
        for key, lines in self.stacks:
            groups.setdefault(tuple(lines), []).append(key)
        stack = {str(i): [keys, list(lines)] for i, (lines, keys) in enumerate(groups.items())}
        with open(os.path.join(self.out_dir, "stack.json"), "w") as f:
            json.dump(stack, f, indent=1)
        with open(os.path.join(self.out_dir, "construct.json"), "w") as f:
            json.dump({}, f, indent=1)


class hooked:
    """Context manager replacing torch APIs by recording wrappers (like msprobe's api registry)."""

    def __init__(self, rec, apis=None, upcast_half=False):
        self.rec = rec
        # CPU torch lacks many float16 kernels and accumulates bfloat16 matmuls in bfloat16: compute
        # low-precision calls in float32 and round the result, as a device with float32 accumulation does.
        self.upcast_half = upcast_half
        self.apis = apis or [
            ("Functional", F, "linear"), ("Functional", F, "layer_norm"), ("Functional", F, "softmax"),
            ("Functional", F, "gelu"), ("Functional", F, "silu"), ("Functional", F, "relu"),
            ("Torch", torch, "matmul"), ("Torch", torch, "rsqrt"), ("Torch", torch, "sum"),
            ("Tensor", torch.Tensor, "__add__"), ("Tensor", torch.Tensor, "__mul__"),
            ("Tensor", torch.Tensor, "__sub__"), ("Torch", torch, "cat"), ("Torch", torch, "argmax"),
        ]
        self.saved = []

    def __enter__(self):
        rec = self.rec
        for prefix, owner, name in self.apis:
            orig = getattr(owner, name)

            def make(orig=orig, prefix=prefix, name=name, self=self):
                def wrapper(*args, **kwargs):
                    if getattr(_state, "inside", False):
                        return orig(*args, **kwargs)
                    def compute(*args, **kwargs):
                        low = [a.dtype for a in args if isinstance(a, torch.Tensor) and
                               a.dtype in (torch.float16, torch.bfloat16)]
                        if self.upcast_half and low:
                            cargs = [a.float() if isinstance(a, torch.Tensor) and a.dtype in (torch.float16, torch.bfloat16)
                                     else a for a in args]
                            out = orig(*cargs, **kwargs)
                            if isinstance(out, torch.Tensor) and out.dtype == torch.float32:
                                out = out.to(low[0])
                            return out
                        return orig(*args, **kwargs)

                    _state.inside = True
                    try:
                        out = compute(*args, **kwargs)
                    finally:
                        _state.inside = False
                    outs = out if isinstance(out, (list, tuple)) else (out,)
                    for o in outs:
                        if isinstance(o, torch.Tensor) and o.requires_grad:
                            o.retain_grad()
                    full = rec.next_name(prefix, name)
                    rec.compute[full] = compute
                    rec.record_forward(full, args, kwargs, out)
                    return out
                return wrapper

            self.saved.append((owner, name, orig))
            setattr(owner, name, make())
        return self

    def __exit__(self, *exc):
        for owner, name, orig in reversed(self.saved):
            setattr(owner, name, orig)


def transformer_block(x, p):
    """A pre-norm block: attention with 2 heads, then a SwiGLU MLP, with residuals."""
    b, s, h = x.shape
    nh, hd = 2, h // 2
    y = F.layer_norm(x, (h,), p["ln1_w"], p["ln1_b"], 1e-5)
    q = F.linear(y, p["wq"], p["bq"]).view(b, s, nh, hd).transpose(1, 2)
    k = F.linear(y, p["wk"], p["bk"]).view(b, s, nh, hd).transpose(1, 2)
    v = F.linear(y, p["wv"], p["bv"]).view(b, s, nh, hd).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / hd ** 0.5)
    attn = F.softmax(scores, dim=-1)
    ctx = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, h)
    x1 = x + F.linear(ctx, p["wo"])
    y2 = F.layer_norm(x1, (h,), p["ln2_w"], p["ln2_b"], 1e-5)
    gate = F.silu(F.linear(y2, p["wg"]))
    up = F.gelu(F.linear(y2, p["wu"]))
    return x1 + F.linear(gate * up, p["wd"])


def make_params(h, ffn, dtype, gen):
    def r(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen) * scale).to(dtype).requires_grad_(True)
    return {"ln1_w": (1 + 0.1 * torch.randn(h, generator=gen)).to(dtype).requires_grad_(True),
            "ln1_b": r(h, scale=0.1), "wq": r(h, h, scale=h ** -0.5), "bq": r(h, scale=0.1),
            "wk": r(h, h, scale=h ** -0.5), "bk": r(h, scale=0.1), "wv": r(h, h, scale=h ** -0.5),
            "bv": r(h, scale=0.1), "wo": r(h, h, scale=h ** -0.5),
            "ln2_w": (1 + 0.1 * torch.randn(h, generator=gen)).to(dtype).requires_grad_(True),
            "ln2_b": r(h, scale=0.1), "wg": r(ffn, h, scale=h ** -0.5), "wu": r(ffn, h, scale=h ** -0.5),
            "wd": r(h, ffn, scale=ffn ** -0.5)}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "dump")
    if os.path.isdir(out):
        shutil.rmtree(out)
    gen = torch.Generator().manual_seed(20260101)
    dtype = torch.bfloat16
    params = make_params(32, 64, dtype, gen)
    x = torch.randn(2, 8, 32, generator=gen).to(dtype).requires_grad_(True)
    rec = Recorder(out)
    # The broken API: the device result of the gelu in the MLP is off by a visible error.
    # (Only the recorded file changes; the model itself keeps running on the correct value.)
    broken = "Functional.gelu.0.forward.output.0"
    with hooked(rec, upcast_half=True):
        y = transformer_block(x, params)
    loss = y.float().pow(2).mean()
    loss.backward(retain_graph=True)
    gelu_out = next(c[3] for c in rec.calls if c[0] == "Functional.gelu.0")
    bad = gelu_out.detach().float()
    bad[..., ::4] += 0.25  # every 4th feature shifted: a visible error no bf16 rounding explains
    rec.overrides[broken] = bad.to(dtype)
    rec.build()
    rec.write()
    print(f"wrote {out}: {len(rec.data)} entries; broken: {broken}")


if __name__ == "__main__":
    main()
