#!/usr/bin/python3
"""Mix-level dumps with module entries, parameters_grad and construct.json (issue 30, DECISIONS D17).

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/data/run_ut/make_param_grad_dumps.py

A small transformer-style model (embedding, layer_norm, 3-D q/k/v/o linears, 4-D attention matmuls, a
hand-written RMSNorm whose weight enters through Tensor.__mul__, an MLP, one Linear and one broadcast
multiplier called twice) runs one training step under a recorder that writes what msprobe's `mix` level
writes (dump-and-compare.md §1.2-§2.2, msprobe's pytorch hook manager):
  * API entries as in make_real_model_dumps.py (backward at the autograd node of the first output);
  * `Module.<path>.<Class>.forward.<k>` when the module finishes, with its direct parameters under
    `parameters` (files `...forward.<k>.parameters.<name>.pt`), and `...backward.<k>` from a full backward hook;
  * `Module.<path>.<Class>.parameters_grad.<g>`: `{name: [tensor]}` written by a hook on each parameter's
    AccumulateGrad node (`param.expand_as(param).grad_fn.next_functions[0][0]`), holding `param.grad` after
    the step's gradients were summed into it; files `...parameters_grad.<g>.<name>.pt`, requires_grad false;
  * construct.json: each module node -> the enclosing module node (null at top level), each API forward
    entry -> the module node executing it, each API backward entry -> that module's backward node.
One parameter (`scale.gamma`) is used through `Tensor.mul`, which the recorder does not hook: its
gradient has no dumped API and must be SKIP, not an error. The head's weight is the embedding's (tied): each
module's parameters_grad entry holds the gradient of both uses, so neither module's own calls account for it.
After the backward, two parameters are read under no_grad (as an optimizer does): those calls add nothing.
`gate.weight` holds the values of `norm2.weight` without being it: equal values, two parameters.

Directories written next to this script: real_params_{fp32,bf16} and real_params_{fp32,bf16}_faults (one
weight gradient with one column scaled by 1.02, one bias gradient 1% off; faults.json lists them).
"""
import json
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_real_model_dumps as real  # noqa: E402
mk = real.mk

APIS = [("Functional", F, "linear"), ("Functional", F, "layer_norm"), ("Functional", F, "embedding"),
        ("Functional", F, "softmax"), ("Functional", F, "gelu"), ("Functional", F, "cross_entropy"),
        ("Torch", torch, "matmul"), ("Torch", torch, "rsqrt"), ("Tensor", torch.Tensor, "__mul__"),
        ("Tensor", torch.Tensor, "__add__"), ("Tensor", torch.Tensor, "pow"), ("Tensor", torch.Tensor, "mean"),
        ("Tensor", torch.Tensor, "transpose"), ("Tensor", torch.Tensor, "view"),
        ("Tensor", torch.Tensor, "float")]


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = 1e-6

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Gate(nn.Module):
    """A weight broadcast over the rows through Tensor.__mul__; the block calls it twice."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * self.weight


class Scale(nn.Module):
    """A parameter used by an API the dump does not hook (Tensor.mul)."""

    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x.mul(self.gamma)


class Block(nn.Module):
    def __init__(self, vocab=16, dim=12, heads=2, hidden=24):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.norm2 = RMSNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.proj = nn.Linear(dim, dim)  # called twice in the step
        self.scale = Scale(dim)
        self.gate = Gate(dim)
        self.head = nn.Linear(dim, vocab)
        self.head.weight = self.embed.weight  # tied: one parameter, used by the embedding and by the head

    def forward(self, ids):
        b, s = ids.shape
        x = self.embed(ids)
        h = self.ln1(x)
        d = h.shape[-1] // self.heads

        def split(t):
            return t.view(b, s, self.heads, d).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        att = F.softmax(torch.matmul(q, k.transpose(-1, -2)) * (d ** -0.5), dim=-1)
        a = torch.matmul(att, v).transpose(1, 2).reshape(b, s, -1)
        x = x + self.o(a)
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        x = self.proj(x) + self.proj(self.scale(x))
        x = self.gate(x) + self.gate(h)
        return self.head(x)


class MixRecorder(real.NodeHookRecorder):
    """NodeHookRecorder plus msprobe's module entries, parameters_grad and mix-level construct.json."""

    def __init__(self, out_dir):
        super().__init__(out_dir)
        self.construct = {}
        self.stack = []          # forward nodes of the modules running
        self.module_calls = {}   # "Module.path.Class" -> calls so far
        self.grad_calls = {}     # "Module.path.Class" -> [index, first param name] (msprobe's counter)
        self.api_parent = {}     # API full name -> forward node of the module running it
        self.param_uses = []     # (parameter, API full name, function, args, kwargs, index of the parameter)
        self.grad_outputs = {}   # API full name -> the gradients its backward node received

    def forward(self, full, args, kwargs, out, orig=None):
        parent = self.stack[-1] if self.stack else None
        self.construct[full + ".forward"] = parent
        self.api_parent[full] = parent
        for i, a in enumerate(args):
            if isinstance(a, nn.Parameter):
                self.param_uses.append((a, full, orig, args, kwargs, i))
        super().forward(full, args, kwargs, out, orig)

    def record_backward_entry(self, bkey, grad_inputs, grad_outputs):
        parent = self.api_parent.get(bkey[:-len(".backward")])
        self.construct[bkey] = parent.replace(".forward.", ".backward.") if parent else None
        self.grad_outputs[bkey[:-len(".backward")]] = grad_outputs
        super().record_backward_entry(bkey, grad_inputs, grad_outputs)

    def attach(self, model):
        for path, module in model.named_modules():
            if not path:
                continue  # msprobe does not hook the root model itself
            base = f"Module.{path}.{type(module).__name__}"
            module.register_forward_pre_hook(self._pre(base))
            module.register_forward_hook(self._post(base, module))
            module.register_full_backward_hook(self._backward(base))

    def _pre(self, base):
        def hook(module, args):
            k = self.module_calls.get(base, 0)
            self.module_calls[base] = k + 1
            node = f"{base}.forward.{k}"
            self.construct[node] = self.stack[-1] if self.stack else None
            self.stack.append(node)
            module._probe_nodes = getattr(module, "_probe_nodes", []) + [node]
        return hook

    def _post(self, base, module):
        def hook(mod, args, out):
            node = self.stack.pop()
            real._state.inside = True
            try:
                entry = {"input_args": [self.encode(a, f"{node}.input.{i}") for i, a in enumerate(args)],
                         "input_kwargs": {},
                         "output": [self.encode(o, f"{node}.output.{i}")
                                    for i, o in enumerate(out if isinstance(out, tuple) else (out,))],
                         "parameters": {n: self.encode(p, f"{node}.parameters.{n}")
                                        for n, p in mod.named_parameters(recurse=False)},
                         "is_recompute": False}
            finally:
                real._state.inside = False
            self.entries.append((node, entry))
            for n, p in mod.named_parameters(recurse=False):
                if p.requires_grad:
                    self._param_hook(base, n, p)
        return hook

    def _param_hook(self, base, name, param):
        # One hook per parameter, replaced at every call, as msprobe's hook_handle_dict does.
        handles = self.__dict__.setdefault("handles", {})
        key = base + "." + name
        if key in handles:
            handles[key].remove()
        acc = param.expand_as(param).grad_fn.next_functions[0][0]

        def hook(*_):
            state = self.grad_calls.setdefault(base, [-1, name])
            if state[1] == name:
                state[0] += 1
            gkey = f"{base}.parameters_grad.{state[0]}"
            real._state.inside = True
            try:
                obj = self.encode(param.grad, f"{gkey}.{name}")
            finally:
                real._state.inside = False
            obj["requires_grad"] = False
            entry = dict(self.entries).get(gkey)
            if entry is None:
                entry = {}
                self.entries.append((gkey, entry))
            entry[name] = [obj]
        handles[key] = acc.register_hook(hook)

    def _backward(self, base):
        calls = {"n": 0}

        def hook(module, grad_input, grad_output):
            k = calls["n"]
            calls["n"] += 1
            node = f"{base}.backward.{k}"
            self.construct[node] = None
            real._state.inside = True
            try:
                self.entries.append((node, {
                    "input": [self.encode(g, f"{node}.input.{i}") for i, g in enumerate(grad_output)],
                    "output": [self.encode(g, f"{node}.output.{i}") for i, g in enumerate(grad_input)]}))
            finally:
                real._state.inside = False
        return hook

    def write(self):
        super().write()
        path = os.path.join(self.out_dir, "dump.json")
        with open(path) as f:
            dump = json.load(f)
        dump["level"] = "mix"
        with open(path, "w") as f:
            json.dump(dump, f, indent=1)
        with open(os.path.join(self.out_dir, "construct.json"), "w") as f:
            json.dump(self.construct, f, indent=1)


class hooked(real.hooked):
    def __enter__(self):
        saved = real.APIS[:]
        real.APIS[:] = APIS
        try:
            return super().__enter__()
        finally:
            real.APIS[:] = saved


def fp32_oracle(rec, model):
    """The parameter gradients a device accumulating in float32 computes from the dumped values.

    Each use of a parameter (the API call that took it) is run again by torch in float32 on the call's
    inputs and the gradient its node received; the float32 gradient is rounded to the parameter's dtype, and
    the uses are added in that dtype, as autograd adds them. Returns the rows "<parameters_grad key>.<name>"
    whose dumped gradient differs from that: there the recording CPU kernel itself is not float32-accumulated
    (torch 1.13's bfloat16 mm and sums), and D14's reduced-precision Warning is its honest verdict.
    """
    sums = {}
    for param, full, orig, args, kwargs, index in rec.param_uses:
        if full not in rec.grad_outputs:
            continue  # read under no_grad: no gradient
        gout = rec.grad_outputs[full][0].float()
        local = [a.detach().float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        local[index].requires_grad_(True)
        if orig is torch.Tensor.__mul__ and args[1 - index].shape != param.shape:
            # autograd's mul backward materialises grad * other in the tensors' dtype, then sums it over
            # the broadcast rows (sum_to_size): only that sum is accumulated in float32.
            prod = (rec.grad_outputs[full][0] * args[1 - index].detach()).float()
            grad = prod.sum(tuple(range(prod.dim() - param.dim()))).to(param.dtype)
        else:
            with torch.enable_grad():
                out = orig(*local, **kwargs)
            (grad,) = torch.autograd.grad(out, local[index], gout)
            grad = grad.to(param.dtype)
        sums[id(param)] = grad if id(param) not in sums else sums[id(param)] + grad
    differs = []
    for path, module in model.named_modules():  # a tied parameter is listed under each module holding it
        for name, p in module.named_parameters(recurse=False):
            if path and id(p) in sums and not torch.equal(sums[id(p)], p.grad):
                differs.append(f"Module.{path}.{type(module).__name__}.parameters_grad.0.{name}")
    return sorted(differs)


def scale_column(t, col, factor):
    f = t.detach().double().clone()
    f[:, col] *= factor
    return f.to(t.dtype)


def run(name, dtype, faults=None):
    out = os.path.join(HERE, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    torch.manual_seed(7)
    model = Block().to(dtype)
    with torch.no_grad():  # non-trivial norm weights (not all ones, each its own), as after some training
        noise = real.gen(3)
        for mod in (model.ln1, model.norm2, model.scale, model.gate):
            for p in mod.parameters():
                p.add_(0.1 * torch.randn(p.shape, generator=noise).to(dtype))
        model.gate.weight.copy_(model.norm2.weight)  # two parameters with equal values, not tied
    g = real.gen(5)
    ids = torch.randint(0, 16, (2, 5), generator=g)
    labels = torch.randint(0, 16, (10,), generator=g)
    rec = MixRecorder(out)
    rec.attach(model)
    model.zero_grad(set_to_none=True)
    with hooked(rec):
        logits = model(ids)
        loss = F.cross_entropy(logits.float().view(-1, 16), labels)
        loss.backward()
        with torch.no_grad():  # an optimizer-style read of parameters after the backward: no gradient
            for p in (model.norm2.weight, model.fc1.bias):
                p * 0.5
    differs = fp32_oracle(rec, model)
    if faults:
        descriptors = {}
        for _, entry in rec.entries:
            for v in entry.values():
                if isinstance(v, list) and v and isinstance(v[0], dict) and "data_name" in v[0]:
                    descriptors[v[0]["data_name"][:-3]] = v[0]
        for data_name, (kind, arg) in faults.items():
            path = os.path.join(rec.tensor_dir, data_name + ".pt")
            t = torch.load(path)
            bad = scale_column(t, arg, 1.02) if kind == "column" else (t.double() * arg).to(t.dtype)
            torch.save(bad, path)
            mx, mn, mean, norm = mk._stats(bad)
            descriptors[data_name].update({"Max": mx, "Min": mn, "Mean": mean, "Norm": norm})
        with open(os.path.join(out, "faults.json"), "w") as f:
            json.dump(faults, f, indent=1)
    rec.write()
    with open(os.path.join(out, "fp32_kernel_differs.json"), "w") as f:
        json.dump(differs, f, indent=1)
    return rec


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 6)

    def forward(self, a, b):
        return self.lin(a), self.lin(b)


def twice(seed):
    """One bfloat16 Linear called twice, on data where adding the two calls' rounded bias gradients errs by
    more than one rounding of the exact sum (double_rounding.json: the elements, from torch's values)."""
    out = os.path.join(HERE, "real_params_twice_bf16")
    if os.path.isdir(out):
        shutil.rmtree(out)
    torch.manual_seed(seed)
    model = Twice().to(torch.bfloat16)
    g = real.gen(seed)
    a, b = (torch.randn(3, 4, 8, generator=g).bfloat16() for _ in range(2))
    targets = [torch.randn(3, 4, 6, generator=g) for _ in range(2)]
    rec = MixRecorder(out)
    rec.attach(model)
    with hooked(rec):
        ys = model(a, b)
        loss = sum((y.float() * t).sum() for y, t in zip(ys, targets))
        loss.backward()
    exact = sum(rec.grad_outputs[f"Functional.linear.{i}"][0].double().sum((0, 1)) for i in range(2))
    err = (model.lin.bias.grad.double() - exact).abs()
    beyond = [i for i in range(6) if err[i] > 2.0 ** -8 * abs(exact[i]) * (1 + 2.0 ** -10) + 1e-6 * 2.0 ** -24]
    rec.write()
    with open(os.path.join(out, "fp32_kernel_differs.json"), "w") as f:
        json.dump(fp32_oracle(rec, model), f, indent=1)
    with open(os.path.join(out, "double_rounding.json"), "w") as f:
        json.dump(beyond, f)
    return beyond


def main():
    for seed in range(1, 200):  # the first seed whose data shows the double rounding
        if twice(seed):
            break
    for dtype, tag in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        run(f"real_params_{tag}", dtype)
        run(f"real_params_{tag}_faults", dtype, faults={
            "Module.fc1.Linear.parameters_grad.0.weight": ("column", 3),
            "Module.q.Linear.parameters_grad.0.bias": ("scale", 1.01)})


if __name__ == "__main__":
    main()
