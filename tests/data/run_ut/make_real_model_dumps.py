#!/usr/bin/python3
"""Real-model dumps for the backward / tie / cast / bf16 checks of run_ut (issue 11).

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/data/run_ut/make_real_model_dumps.py

Each model is small real PyTorch code run under an API recorder that writes msprobe's tensor-mode dump
layout (dump-and-compare.md §1). Forward entries are recorded as msprobe's API hooks record them
(input_args with requires_grad, input_kwargs, is_recompute, output). Backward entries are recorded the
way msprobe HEAD records them: a hook on the autograd node (grad_fn) of the API's first output tensor,
so the dumped backward `input` is the node's grad_outputs and `output` its grad_inputs, one per
next_function, null where an input does not require grad. For composite APIs (3-D linear,
cross_entropy, 4-D matmul, __getitem__ chains) that node is the last operation inside the API, not the
API itself: this is exactly what real dumps look like and what run_ut must not misread.

Directories written next to this script (real_<model>_<dtype>[_<fault>]):
  real_mlp_{fp32,bf16}       frozen first layer (input without grad), constant multiplier, 3-D linear,
                              4-D matmul, gelu, softmax, layer_norm, __getitem__, split/chunk, casts,
                              mse_loss and cross_entropy losses
  real_ties_{bf16,fp16,fp32} topk/sort/max/min/argmax/argmin/kthvalue/median/mode/cummax on inputs full of ties
  real_half_fp16             what CPU torch runs in float16: mul/add/sum/sort/max/split/casts
  real_{llama,gpt}_{fp32,bf16}  a LLaMA-style block (rms-norm, q/k/v 3-D linears from one normalised tensor,
                              4-D attention matmuls, softmax, residuals, SwiGLU MLP) and a GPT-style block
                              (layer_norm, biased projections, masked_fill causal mask, gelu MLP), each
                              with a 3-D linear head and cross_entropy, every API msprobe hooks in them
                              recorded (views and transposes included)
  real_{llama,gpt}_*_gemmfaults  the same blocks with faults *inside* GEMM backwards: an identity autograd
                              function placed on one GEMM input scales the input gradient that GEMM passes
                              back by 1.01 in one tile, as a faulty kernel would; the recorded files are
                              what autograd produced (nothing is patched). faults.json names the GEMM APIs.
  *_faults                   the same model with injected faults in the recorded files: 1% relative
                              noise, one NaN, mantissa truncation (forward) and 1% noise on a mapped
                              input gradient (backward); faults.json lists them.
"""
import json
import os
import shutil
import struct
import sys
import threading

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))
import make_example_dump as mk  # noqa: E402

_state = threading.local()


class NodeHookRecorder(mk.Recorder):
    """msprobe's layout; backward entries from a hook on the first output's grad_fn."""

    def __init__(self, out_dir):
        super().__init__(out_dir, task="tensor")
        self.entries = []  # (key, entry) in the order msprobe inserts them

    def encode(self, v, data_name):
        if isinstance(v, slice):
            return {"type": "slice", "value": [v.start, v.stop, v.step]}
        if v is Ellipsis:
            return {"type": "ellipsis", "value": "..."}
        return super().encode(v, data_name)

    def forward(self, full, args, kwargs, out, orig=None):
        key = full + ".forward"
        # msprobe has no analyzer for a positional torch.dtype/torch.device: it writes {}.
        entry = {"input_args": [{} if isinstance(a, (torch.dtype, torch.device)) else
                                self.encode(a, f"{key}.input.{i}") for i, a in enumerate(args)],
                 "input_kwargs": {k: self.encode(v, f"{key}.kwargs.{k}") for k, v in kwargs.items()},
                 "is_recompute": False}
        outs = out if isinstance(out, (list, tuple)) else (out,)
        entry["output"] = [self.encode(o, f"{key}.output.{i}") for i, o in enumerate(outs)]
        self.entries.append((key, entry))
        first = out
        while isinstance(first, (list, tuple)):
            if not first:
                return
            first = first[0]
        if not (isinstance(first, torch.Tensor) and first.requires_grad and torch.is_grad_enabled()):
            return
        if first.grad_fn is None:
            return
        bkey = full + ".backward"

        if orig is not None:
            self.check_forward(full, args, kwargs, out, orig)

        def hook(grad_inputs, grad_outputs):
            # msprobe swaps them: the file's input = gradients flowing in (grad_outputs).
            _state.inside = True
            try:
                self.record_backward_entry(bkey, grad_inputs, grad_outputs)
                if orig is not None:
                    self.check_backward(full, args, kwargs, orig, grad_inputs, grad_outputs)
            finally:
                _state.inside = False

        first.grad_fn.register_hook(hook)

    # --- device_inexact.json: is CPU torch's bf16 kernel itself within msprobe's bf16 bound? ---------
    inexact = None  # dict when checking

    @staticmethod
    def _off(dev, ref):
        if not (isinstance(dev, torch.Tensor) and isinstance(ref, torch.Tensor)) or dev.dtype != torch.bfloat16 \
                or dev.shape != ref.shape:
            return False
        rel = (dev.double() - ref.double()).abs() / (ref.double().abs() + 2.0 ** -8)
        return (rel < 0.01).double().mean().item() <= 0.99

    @staticmethod
    def _up(v, grad=False):
        if isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16:
            return v.detach().float().requires_grad_(grad and v.requires_grad)
        if isinstance(v, torch.Tensor):
            return v.detach().requires_grad_(grad and v.requires_grad and v.is_floating_point())
        if isinstance(v, (list, tuple)):
            return type(v)(NodeHookRecorder._up(x, grad) for x in v)
        return v

    def check_forward(self, full, args, kwargs, out, orig):
        if self.inexact is None:
            return
        with torch.no_grad():
            ref = orig(*self._up(list(args)), **self._up(dict(kwargs)))
        outs = out if isinstance(out, (list, tuple)) else (out,)
        refs = ref if isinstance(ref, (list, tuple)) else (ref,)
        if any(self._off(o, r) for o, r in zip(outs, refs)):
            self.inexact[full + ".forward"] = True

    def check_backward(self, full, args, kwargs, orig, grad_inputs, grad_outputs):
        if self.inexact is None:
            return
        local = self._up(list(args), grad=True)
        with torch.enable_grad():
            ref = orig(*local, **self._up(dict(kwargs)))
        refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
        first = refs[0] if refs and isinstance(refs[0], torch.Tensor) else None
        if first is None or first.grad_fn is None:
            return
        node = first.grad_fn
        caught = []
        node.register_hook(lambda gi, go: caught.append(gi))
        roots = [r for r in refs if isinstance(r, torch.Tensor) and r.grad_fn is node]
        grads = [g.detach().float() if isinstance(g, torch.Tensor) else None for g in grad_outputs]
        pairs = [(r, g) for r, g in zip(roots, grads) if g is not None and g.shape == r.shape]
        if not pairs:
            return
        torch.autograd.backward([r for r, _ in pairs], [g.to(r.dtype) for r, g in pairs])
        if caught and any(self._off(d, r) for d, r in zip(grad_inputs, caught[0])):
            self.inexact[full + ".backward"] = True

    def record_backward_entry(self, bkey, grad_inputs, grad_outputs):
            self.entries.append((bkey, {
                "input": [self.encode(g, f"{bkey}.input.{i}") for i, g in enumerate(grad_outputs)],
                "output": [self.encode(g, f"{bkey}.output.{i}") for i, g in enumerate(grad_inputs)]}))

    def write(self):
        self.data = dict(self.entries)
        super().write()


APIS = [("Functional", F, "linear"), ("Functional", F, "relu"), ("Functional", F, "gelu"),
        ("Functional", F, "softmax"), ("Functional", F, "layer_norm"), ("Functional", F, "mse_loss"),
        ("Functional", F, "cross_entropy"), ("Functional", F, "l1_loss"), ("Torch", torch, "matmul"), ("Torch", torch, "topk"),
        ("Torch", torch, "sort"), ("Torch", torch, "max"), ("Torch", torch, "min"),
        ("Torch", torch, "argmax"), ("Torch", torch, "argmin"), ("Torch", torch, "kthvalue"),
        ("Torch", torch, "median"), ("Torch", torch, "mode"), ("Torch", torch, "cummax"),
        ("Torch", torch, "argsort"), ("Torch", torch, "chunk"), ("Torch", torch, "sum"),
        ("Tensor", torch.Tensor, "__mul__"), ("Tensor", torch.Tensor, "__add__"),
        ("Tensor", torch.Tensor, "__getitem__"), ("Tensor", torch.Tensor, "split"),
        ("Tensor", torch.Tensor, "float"), ("Tensor", torch.Tensor, "half"),
        ("Tensor", torch.Tensor, "bfloat16"), ("Tensor", torch.Tensor, "to"),
        ("Tensor", torch.Tensor, "type")]


class hooked:
    def __init__(self, rec, apis=None):
        self.rec = rec
        self.apis = apis
        self.saved = []

    def __enter__(self):
        rec = self.rec
        for prefix, owner, name in (APIS if self.apis is None else self.apis):
            orig = getattr(owner, name)

            def make(orig=orig, prefix=prefix, name=name):
                def wrapper(*args, **kwargs):
                    if getattr(_state, "inside", False):
                        return orig(*args, **kwargs)
                    _state.inside = True
                    try:
                        out = orig(*args, **kwargs)
                        rec.forward(rec.next_name(prefix, name), args, kwargs, out, orig)
                    finally:
                        _state.inside = False
                    return out
                return wrapper

            self.saved.append((owner, name, orig))
            setattr(owner, name, make())
        return self

    def __exit__(self, *exc):
        for owner, name, orig in reversed(self.saved):
            setattr(owner, name, orig)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def mlp(dtype, g):
    """A small model with the shapes and frozen parts of real training code."""
    compute = dtype

    def p(*shape, scale=0.3):
        return (torch.randn(*shape, generator=g) * scale).to(dtype).to(compute).requires_grad_(True)
    w1, b1, w2, w3 = p(12, 8), p(12), p(12, 12), p(6, 12)
    ln_w, ln_b = (1 + 0.1 * torch.randn(12, generator=g)).to(dtype).to(compute).requires_grad_(True), p(12)
    scale = (torch.rand(12, generator=g) + 0.5).to(dtype).to(compute)  # a constant multiplier (no grad)
    x = torch.randn(2, 3, 8, generator=g).to(dtype).to(compute)     # the data: no grad (frozen first layer)
    target = torch.randn(2, 3, 6, generator=g)
    labels = torch.randint(0, 6, (6,), generator=g)

    def body():
        h = F.relu(F.linear(x, w1, b1))                             # first layer, 3-D input
        h = h * scale                                               # Tensor.__mul__ by a constant tensor
        h = F.layer_norm(h, (12,), ln_w, ln_b)
        a, b = h.split(6, dim=-1)                                   # multi-output
        h = h + torch.cat([b, a], dim=-1)
        q = h.view(2, 3, 2, 6).transpose(1, 2)                      # 4-D matmul below
        att = F.softmax(torch.matmul(q, q.transpose(-1, -2)), dim=-1)
        h = torch.matmul(att, q).transpose(1, 2).reshape(2, 3, 12)
        h = F.gelu(F.linear(h, w2))
        c0, c1 = torch.chunk(h, 2, dim=0)
        y = F.linear(c0[0], w3)                                     # 2-D linear without bias, __getitem__
        y2 = F.linear(h, w3)                                        # 3-D linear
        loss = F.mse_loss(y2.float(), target)                       # cast + MSE with a target
        loss = loss + F.cross_entropy(y.float(), labels[:3])        # composite loss
        loss = loss + F.l1_loss(y.float(), target[0])               # composite in torch 1.13 (abs, mean)
        side = h.to(torch.float16 if dtype != torch.float16 else torch.bfloat16)  # a real cast (D13)
        return loss + (c1.float() * 0.5).sum() + side.to(torch.float32).mean()
    return body


def ties(dtype, g):
    # Quarter steps in a small range: many equal values in every row, also after bf16/fp16 rounding.
    x = (torch.randint(-6, 7, (4, 70), generator=g).float() / 4).to(dtype)
    x[1, 3] = x[1, 40]
    small = (torch.randint(-2, 3, (3, 9), generator=g).float() / 2).to(dtype)

    calls = [lambda: torch.topk(x, 5, dim=1),                      # partial sort path (k*64 <= n)
             lambda: torch.topk(small, 4, dim=1),                  # nth_element path
             lambda: torch.topk(small, 3, dim=1, largest=False),
             lambda: torch.sort(x, dim=1),
             lambda: torch.sort(small, dim=1, descending=True),
             lambda: torch.sort(small, dim=0, stable=True),
             lambda: torch.argsort(small, dim=1),
             lambda: torch.max(x, dim=1),
             lambda: torch.min(small, dim=0),
             lambda: torch.argmax(x, dim=1),
             lambda: torch.argmin(small, dim=1),
             lambda: torch.argmax(small),
             lambda: torch.kthvalue(small, 3, dim=1),
             lambda: torch.median(small, dim=1),
             lambda: torch.mode(small, dim=1),
             lambda: torch.cummax(small, dim=1)]

    def body():
        for call in calls:
            try:
                call()
            except RuntimeError as e:  # CPU torch lacks some float16 kernels: such calls are not dumped
                if "not implemented" not in str(e):
                    raise
        return None
    return body


def half_model(g):
    x = (torch.randn(4, 8, generator=g)).half().requires_grad_(True)
    c = (torch.rand(4, 8, generator=g) + 0.5).half()

    def body():
        y = x * c
        z = y + x
        s = torch.sort(z, dim=1)
        parts = z.split(4, dim=1)
        m = torch.max(parts[0], dim=1)
        return (s[0].float().sum() + m[0].float().sum() + torch.sum(parts[1]).float() + z.float().sum())
    return body


BLOCK_APIS = [("Functional", F, "linear"), ("Functional", F, "softmax"), ("Functional", F, "silu"),
              ("Functional", F, "gelu"), ("Functional", F, "layer_norm"), ("Functional", F, "cross_entropy"),
              ("Torch", torch, "matmul"), ("Torch", torch, "rsqrt"),
              ("Tensor", torch.Tensor, "__add__"), ("Tensor", torch.Tensor, "__mul__"),
              ("Tensor", torch.Tensor, "__truediv__"), ("Tensor", torch.Tensor, "pow"),
              ("Tensor", torch.Tensor, "mean"), ("Tensor", torch.Tensor, "view"),
              ("Tensor", torch.Tensor, "transpose"), ("Tensor", torch.Tensor, "reshape"),
              ("Tensor", torch.Tensor, "contiguous"), ("Tensor", torch.Tensor, "masked_fill")]


class TileFault(torch.autograd.Function):
    """Identity forward; backward scales one tile of the incoming gradient by 1 + rel: placed on a GEMM's
    input, the GEMM's input gradient is off in that tile as a faulty kernel's would be."""

    @staticmethod
    def forward(ctx, x, rel):
        ctx.rel = rel
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        tile = g[0, ..., :2, :4] if g.dim() == 4 else g[0, :2, :4]
        tile.mul_(1 + ctx.rel)
        return g, None


def faulty(on, rel=0.01):
    """`fault(name, t)`: t itself, or t behind a TileFault when name is one of `on`."""
    def fault(name, t):
        return TileFault.apply(t, rel) if name in on else t
    return fault


def block_params(dtype, g, d, ffn, vocab, bias):
    def w(o, i):
        return (torch.randn(o, i, generator=g) * i ** -0.5).to(dtype).requires_grad_(True)

    def b(n):
        return (0.1 * torch.randn(n, generator=g)).to(dtype).requires_grad_(True) if bias else None
    p = {"n1": (1 + 0.1 * torch.randn(d, generator=g)).to(dtype).requires_grad_(True),
         "n2": (1 + 0.1 * torch.randn(d, generator=g)).to(dtype).requires_grad_(True),
         "nf": (1 + 0.1 * torch.randn(d, generator=g)).to(dtype).requires_grad_(True),
         "nb1": b(d), "nb2": b(d), "nbf": b(d),
         "wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d), "w1": w(ffn, d), "w3": w(ffn, d),
         "w2": w(d, ffn), "head": w(vocab, d),
         "bq": b(d), "bk": b(d), "bv": b(d), "bo": b(d), "b1": b(ffn), "b2": b(d)}
    return p


def llama(dtype, g, fault=faulty(())):
    """A LLaMA-style block: rms-norm, q/k/v from one normalised tensor, attention, SwiGLU MLP, residuals."""
    bsz, seq, d, heads, ffn, vocab = 2, 4, 16, 2, 32, 12
    hd = d // heads
    p = block_params(dtype, g, d, ffn, vocab, bias=False)
    x = torch.randn(bsz, seq, d, generator=g).to(dtype).requires_grad_(True)  # an embedding's output
    mask = torch.full((seq, seq), -1e4).triu(1).to(dtype)
    labels = torch.randint(0, vocab, (bsz * seq,), generator=g)

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def body():
        y = rms(x, p["n1"])
        q = F.linear(fault("Functional.linear.0", y), p["wq"]).view(bsz, seq, heads, hd).transpose(1, 2)
        k = F.linear(y, p["wk"]).view(bsz, seq, heads, hd).transpose(1, 2)
        v = F.linear(y, p["wv"]).view(bsz, seq, heads, hd).transpose(1, 2)
        scores = torch.matmul(q, fault("Torch.matmul.0", k.transpose(2, 3))) / hd ** 0.5 + mask
        att = F.softmax(scores, dim=-1)
        o = torch.matmul(att, v).transpose(1, 2).reshape(bsz, seq, d)
        h = x + F.linear(o, p["wo"])
        y2 = rms(h, p["n2"])
        up = F.silu(F.linear(y2, p["w1"])) * F.linear(y2, p["w3"])
        h = h + F.linear(fault("Functional.linear.6", up), p["w2"])
        logits = F.linear(rms(h, p["nf"]), p["head"])
        return F.cross_entropy(logits.view(-1, vocab), labels)
    return body


def gpt(dtype, g, fault=faulty(())):
    """A GPT-style block: layer_norm, biased q/k/v, masked_fill causal mask, gelu MLP, residuals."""
    bsz, seq, d, heads, ffn, vocab = 2, 4, 16, 2, 64, 12
    hd = d // heads
    p = block_params(dtype, g, d, ffn, vocab, bias=True)
    x = torch.randn(bsz, seq, d, generator=g).to(dtype).requires_grad_(True)
    causal = torch.ones(seq, seq, dtype=torch.bool).triu(1)
    labels = torch.randint(0, vocab, (bsz * seq,), generator=g)

    def body():
        h = F.layer_norm(x, (d,), p["n1"], p["nb1"])
        q = F.linear(h, p["wq"], p["bq"]).view(bsz, seq, heads, hd).transpose(1, 2)
        k = F.linear(fault("Functional.linear.1", h), p["wk"], p["bk"]).view(bsz, seq, heads, hd).transpose(1, 2)
        v = F.linear(h, p["wv"], p["bv"]).view(bsz, seq, heads, hd).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / hd ** 0.5
        att = F.softmax(att.masked_fill(causal, -1e9), dim=-1)
        y = torch.matmul(fault("Torch.matmul.1", att), v).transpose(1, 2).contiguous().view(bsz, seq, d)
        xa = x + F.linear(y, p["wo"], p["bo"])
        h2 = F.layer_norm(xa, (d,), p["n2"], p["nb2"])
        xb = xa + F.linear(fault("Functional.linear.5", F.gelu(F.linear(h2, p["w1"], p["b1"]))), p["w2"], p["b2"])
        logits = F.linear(F.layer_norm(xb, (d,), p["nf"], p["nbf"]), p["head"])
        return F.cross_entropy(logits.view(-1, vocab), labels)
    return body


def truncate_mantissa(t, keep_bits):
    """Zeroes all but the top `keep_bits` mantissa bits (an accuracy fault a wrong kernel makes)."""
    f = t.detach().float().clone()
    drop = 23 - keep_bits
    bits = f.view(torch.int32)
    bits &= ~((1 << drop) - 1)
    return f.to(t.dtype)


def noisy(t, g, rel=0.01):
    f = t.detach().double()
    return (f * (1 + rel * torch.randn(f.shape, generator=g, dtype=torch.float64))).to(t.dtype)


def with_nan(t):
    f = t.detach().clone()
    f.view(-1)[f.numel() // 2] = float("nan")
    return f


def run(name, body, backward=True, faults=None, fault_seed=99, apis=None, gemm_faults=None):
    out = os.path.join(HERE, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    rec = NodeHookRecorder(out)
    rec.inexact = {}
    with hooked(rec, apis):
        loss = body()
    if backward and loss is not None:
        loss.backward()
    if faults:
        g = gen(fault_seed)
        tensors = {}
        # Faults replace what the recorded file holds: the model itself ran clean.
        for key, entry in rec.entries:
            for sec in ("output",):
                for i, o in enumerate(entry.get(sec, [])):
                    if isinstance(o, dict) and "data_name" in o:
                        tensors[o["data_name"][:-3]] = o
        for data_name, kind in faults.items():
            path = os.path.join(rec.tensor_dir, data_name + ".pt")
            t = torch.load(path)
            bad = {"noise": lambda: noisy(t, g), "nan": lambda: with_nan(t),
                   "truncate": lambda: truncate_mantissa(t, {torch.float32: 7, torch.bfloat16: 3,
                                                             torch.float16: 4}[t.dtype])}[kind]()
            torch.save(bad, path)
            obj = tensors[data_name]
            mx, mn, mean, norm = mk._stats(bad)
            obj.update({"Max": mx, "Min": mn, "Mean": mean, "Norm": norm})
        with open(os.path.join(out, "faults.json"), "w") as f:
            json.dump(faults, f, indent=1)
    rec.write()
    if gemm_faults:
        with open(os.path.join(out, "faults.json"), "w") as f:
            json.dump(sorted(gemm_faults), f, indent=1)
    if rec.inexact:
        with open(os.path.join(out, "device_inexact.json"), "w") as f:
            json.dump(sorted(rec.inexact), f, indent=1)
    return rec


def main():
    for dtype, tag in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        run(f"real_mlp_{tag}", mlp(dtype, gen(11)))
        run(f"real_mlp_{tag}_faults", mlp(dtype, gen(11)), faults={
            "Functional.relu.0.forward.output.0": "noise",
            "Functional.gelu.0.forward.output.0": "nan",
            "Functional.softmax.0.forward.output.0": "truncate",
            "Functional.layer_norm.0.forward.output.0": "truncate",
            # A gradient probe maps onto an API input: __mul__'s first input.
            "Tensor.__mul__.0.backward.output.0": "noise"})
    for dtype, tag in ((torch.bfloat16, "bf16"), (torch.float16, "fp16"), (torch.float32, "fp32")):
        run(f"real_ties_{tag}", ties(dtype, gen(21)), backward=False)
    for dtype, tag in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        for model, name, at in ((llama, "llama", ("Functional.linear.0", "Torch.matmul.0", "Functional.linear.6")),
                                (gpt, "gpt", ("Functional.linear.1", "Torch.matmul.1", "Functional.linear.5"))):
            run(f"real_{name}_{tag}", model(dtype, gen(41)), apis=BLOCK_APIS)
            run(f"real_{name}_{tag}_gemmfaults", model(dtype, gen(41), faulty(at)), apis=BLOCK_APIS,
                gemm_faults=at)
    run("real_half_fp16", half_model(gen(31)))
    run("real_half_fp16_faults", half_model(gen(31)), faults={
        "Tensor.__mul__.0.forward.output.0": "noise", "Tensor.__add__.0.forward.output.0": "truncate",
        "Tensor.__mul__.0.backward.output.0": "noise"})


if __name__ == "__main__":
    main()
