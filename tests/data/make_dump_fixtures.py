#!/usr/bin/python3
"""Writes small msprobe-format dumps under tests/data/dumps/ for probe's dump-reader tests.

Run with Debian's interpreter (it has torch and numpy):  /usr/bin/python3 tests/data/make_dump_fixtures.py

The writer below follows msprobe's dump writer as described in shared/spec/dump-and-compare.md §1-§2:
json.dump(indent=1) with Python's NaN/Infinity tokens, tensor objects in msprobe's field order,
statistics computed by torch with msprobe's dtype rules, .pt files from torch.save (PyTorch) and .npy
files from numpy.save (MindSpore), md5 = zlib CRC-32 of the raw bytes. Tensors are built from small
hand-picked values so that tests can assert statistics derived by hand (see the comments at each op).
"""
import json
import os
import shutil
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dumps")


def _py(x):
    """A 0-d torch value as the Python scalar msprobe writes (.item())."""
    return x.item()


def torch_stats(t):
    """Max/Min/Mean/Norm the way msprobe's PyTorch dumper computes them (precision "low")."""
    if t.numel() == 0:
        return None, None, None, None
    if t.is_complex():
        a = t.abs().double().numpy()
        return float(a.max()), float(a.min()), float(a.mean()), None
    if t.dtype == torch.bool:
        return bool(t.any()), bool(t.all()), None, None
    if t.dim() == 0:
        v = _py(t)
        return v, v, v, v
    if t.dtype == torch.float64 or not t.is_floating_point():
        t = t.float()
    return _py(t.max()), _py(t.min()), _py(t.mean()), _py(torch.norm(t))


def crc(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        raw = t.view(torch.int16).numpy().tobytes()
    else:
        raw = t.numpy().tobytes()
    return "%08x" % (zlib.crc32(raw) & 0xFFFFFFFF)


class TorchDump:
    """One rank directory written like msprobe's PyTorch dumper."""

    def __init__(self, rank_dir, task, level, summary_mode="statistics", framework=True):
        self.dir = rank_dir
        self.task = task
        self.level = level
        self.md5 = summary_mode == "md5"
        self.framework = framework
        self.data = {}
        self.stack = {}
        self.construct = {}
        self.tensor_dir = os.path.join(rank_dir, "dump_tensor_data")
        if task == "tensor":
            os.makedirs(self.tensor_dir, exist_ok=True)

    # --- value encoding (§1.4.3 - §1.4.6) ---
    def tensor(self, t, name):
        mx, mn, mean, norm = torch_stats(t)
        obj = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape),
               "Max": mx, "Min": mn, "Mean": mean, "Norm": norm, "requires_grad": t.requires_grad}
        if self.task == "tensor" and t.numel() > 0:
            obj["data_name"] = name + ".pt"
            torch.save(t.clone().contiguous().detach(), os.path.join(self.tensor_dir, name + ".pt"))
        if self.md5:
            obj["md5"] = crc(t.detach())
        return obj

    def value(self, v, name, kwarg=None):
        if isinstance(v, torch.Tensor):
            return self.tensor(v, name)
        if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
            return [self.value(x, "%s.%d" % (name, i)) for i, x in enumerate(v)]
        if isinstance(v, dict):
            return {k: self.value(x, "%s.%s" % (name, k)) for k, x in v.items()}
        if v is None:
            return None
        if isinstance(v, torch.Size):
            return {"type": "torch.Size", "value": list(v)}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": v}
        if isinstance(v, float):
            return {"type": "float", "value": v}
        if isinstance(v, str):
            return {"type": "str", "value": v}
        if isinstance(v, slice):
            return {"type": "slice", "value": [v.start, v.stop, v.step]}
        if v is Ellipsis:
            return {"type": "ellipsis", "value": "..."}
        if isinstance(v, torch.dtype):
            # only a kwarg named dtype has an analyzer; elsewhere msprobe writes {}
            return {"type": "torch.dtype", "value": str(v)} if kwarg == "dtype" else {}
        if isinstance(v, torch.device):
            if kwarg != "device":
                return {}
            return {"type": "torch.device", "value": "%s:%s" % (v.type, v.index)}
        if isinstance(v, torch.memory_format):
            return {"type": "torch.memory_format", "format": str(v).replace("torch.", "")}
        if isinstance(v, np.generic):
            return {"type": type(v).__name__, "value": v.item()}
        if isinstance(v, np.ndarray):
            mx, mn, mean, norm = (None,) * 4 if v.size == 0 else (
                v.max().item(), v.min().item(), v.mean().item(), float(np.linalg.norm(v)))
            obj = {"type": "numpy.ndarray", "dtype": str(v.dtype), "shape": list(v.shape),
                   "Max": mx, "Min": mn, "Mean": mean, "Norm": norm}
            if self.task == "tensor" and v.size:
                obj["data_name"] = name + ".pt"
                torch.save(torch.tensor(v), os.path.join(self.tensor_dir, name + ".pt"))
            return obj
        return None

    def args(self, base, args, kwargs):
        return ([self.value(a, "%s.input.%d" % (base, i)) for i, a in enumerate(args)],
                {k: self.value(v, "%s.kwargs.%s" % (base, k), kwarg=k) for k, v in kwargs.items()})

    # --- records (§1.2, §1.4.2) ---
    def api(self, key, fn, args, kwargs=None, stack=None, parent=None, recompute=None, extra=None):
        """Runs fn(*args, **kwargs) and records the forward entry key=...forward. Returns the output."""
        kwargs = kwargs or {}
        base = key + ".forward"
        ia, ik = self.args(base, args, kwargs)
        out = fn(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        entry = {"input_args": ia, "input_kwargs": ik}
        if recompute is not None:
            entry["is_recompute"] = recompute
        entry["output"] = [self.value(o, "%s.output.%d" % (base, i)) for i, o in enumerate(outs)]
        if extra:
            entry["output"].extend(extra)
        self.data[base] = entry
        if stack is not None:
            self.stack[base] = stack
        if self.level in ("mix", "L0") and parent is not False:
            self.construct[base] = parent
        return out

    def backward(self, key, grads_in, grads_out, parent=None):
        base = key + ".backward"
        self.data[base] = {
            "input": [self.value(g, "%s.input.%d" % (base, i)) for i, g in enumerate(grads_in)],
            "output": [self.value(g, "%s.output.%d" % (base, i)) for i, g in enumerate(grads_out)]}
        if self.level in ("mix", "L0"):
            self.construct[base] = parent

    def module(self, path, cls, k, args, output, params, parent=None, stack=None):
        base = "Module.%s.%s.forward.%d" % (path, cls, k)
        ia, ik = self.args(base, args, {})
        outs = output if isinstance(output, tuple) else (output,)
        self.data[base] = {
            "input_args": ia, "input_kwargs": ik,
            "output": [self.value(o, "%s.output.%d" % (base, i)) for i, o in enumerate(outs)],
            "parameters": {n: self.value(p, "%s.parameters.%s" % (base, n)) for n, p in params.items()},
            "is_recompute": False}
        if stack is not None:
            self.stack[base] = stack
        self.construct[base] = parent

    def params_grad(self, path, cls, g, grads):
        base = "Module.%s.%s.parameters_grad.%d" % (path, cls, g)
        self.data[base] = {n: [self.value(t, "%s.%s" % (base, n))] for n, t in grads.items()}

    def write(self, legacy_stack=False, empty_parent=None):
        os.makedirs(self.dir, exist_ok=True)
        top = {"task": self.task, "level": self.level}
        if self.framework:
            top["framework"] = "pytorch"
        top["dump_data_dir"] = self.tensor_dir if self.task == "tensor" else None
        top["data"] = self.data
        with open(os.path.join(self.dir, "dump.json"), "w") as f:
            json.dump(top, f, indent=1)
        if legacy_stack:
            stack = self.stack
        else:  # de-duplicated format: identical stacks share one group
            stack, groups = {}, {}
            for key, frames in self.stack.items():
                sig = json.dumps(frames)
                if sig not in groups:
                    groups[sig] = str(len(groups))
                    stack[groups[sig]] = [[], frames]
                stack[groups[sig]][0].append(key)
        with open(os.path.join(self.dir, "stack.json"), "w") as f:
            json.dump(stack, f, indent=1)
        construct = {} if self.level == "L1" else {
            k: (empty_parent if v is None and empty_parent is not None else v) for k, v in self.construct.items()}
        with open(os.path.join(self.dir, "construct.json"), "w") as f:
            json.dump(construct, f, indent=1)


def frames(line, code):
    return ["File /work/model/train.py, line %d, in forward, \n %s" % (line, code),
            "File /work/model/train.py, line 120, in <module>, \n main()"]


def pytorch_tensor_dump(rank_dir, rank):
    """Level mix, task tensor: module + APIs + backward + parameter gradients, real .pt files."""
    torch.manual_seed(rank)
    d = TorchDump(rank_dir, "tensor", "mix")
    lin = torch.nn.Linear(4, 3)
    with torch.no_grad():
        lin.weight.copy_(torch.arange(12, dtype=torch.float32).reshape(3, 4) / 10 - 0.5)
        lin.bias.copy_(torch.tensor([0.25, -0.5, 1.0]))
    # x = [[1, -2, 3, -4], [0.5, 0, -0.5, 8]]: Max 8, Min -4, Mean 0.75, Norm sqrt(1+4+9+16+0.25+0+0.25+64)=sqrt(94.5)
    x = torch.tensor([[1.0, -2.0, 3.0, -4.0], [0.5, 0.0, -0.5, 8.0]], requires_grad=True)
    parent = "Module.fc.Linear.forward.0"
    y = d.api("Functional.linear.0", torch.nn.functional.linear, (x, lin.weight, lin.bias),
              stack=frames(52, "x = self.fc(x)"), parent=parent)
    d.module("fc", "Linear", 0, (x,), y, {"weight": lin.weight, "bias": lin.bias},
             stack=frames(52, "x = self.fc(x)"))
    # relu of [[-1, 0.5], [2, -3]] -> [[0, 0.5], [2, 0]]
    r_in = torch.tensor([[-1.0, 0.5], [2.0, -3.0]])
    d.api("Functional.relu.0", torch.relu, (r_in,), stack=frames(60, "x = F.relu(x)"))
    # nested list argument, dim kwarg
    a = torch.ones(2, 3, dtype=torch.float16)
    b = torch.full((1, 3), -2.0, dtype=torch.float16)
    d.api("Torch.cat.0", torch.cat, ([a, b],), {"dim": 0}, stack=frames(61, "z = torch.cat([a, b])"))
    # 0-d int64 tensor plus an int: statistics are the value itself, as JSON int (423)
    d.api("Tensor.__add__.0", torch.Tensor.__add__, (torch.tensor(423), 1))
    # NaN and Inf statistics: max over [1, inf, -inf, nan] is nan in torch
    s = torch.tensor([1.0, float("inf"), float("-inf"), float("nan")])
    d.api("Torch.abs.0", torch.abs, (s,))
    # without NaN: [-inf, 1, 2] gives Max 2.0, Min -Infinity, Mean -Infinity, Norm Infinity
    d.api("Torch.neg.0", torch.neg, (torch.tensor([float("-inf"), 1.0, 2.0]),))
    # bf16 and bool tensors; dtype kwarg; empty tensor (stats null, no file)
    bf = torch.tensor([[1.5, -2.25], [0.0, 3.0]], dtype=torch.bfloat16)
    d.api("Torch.sum.0", torch.sum, (bf,), {"dtype": torch.float32})
    mask = torch.tensor([True, False, True])
    d.api("Tensor.__or__.0", torch.Tensor.__or__, (mask, torch.tensor([False, False, True])))
    d.api("Torch.flatten.0", torch.flatten, (torch.zeros(0, 3),))
    # slice / ellipsis / torch.Size / memory_format leaves
    t = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    d.api("Tensor.__getitem__.0", torch.Tensor.__getitem__, (t, (Ellipsis, slice(1, None, 2))))
    d.api("Tensor.reshape.0", torch.Tensor.reshape, (t, torch.Size([4, 6])))
    d.api("Tensor.contiguous.0", torch.Tensor.contiguous, (t,), {"memory_format": torch.contiguous_format})
    # backward of relu: incoming grad of the output, produced grad of the input
    g_out = torch.tensor([[1.0, -1.0], [0.5, 2.0]])
    d.backward("Functional.relu.0", [g_out], [g_out * (r_in > 0)])
    # autograd through the linear module, parameter gradients
    y.sum().backward()
    d.backward("Functional.linear.0", [torch.ones(2, 3)], [x.grad, lin.weight.grad, lin.bias.grad],
               parent="Module.fc.Linear.backward.0")
    d.data["Module.fc.Linear.backward.0"] = {
        "input": [d.value(torch.ones(2, 3), "Module.fc.Linear.backward.0.input.0")],
        "output": [d.value(x.grad, "Module.fc.Linear.backward.0.output.0")]}
    d.construct["Module.fc.Linear.backward.0"] = None
    d.params_grad("fc", "Linear", 0, {"weight": lin.weight.grad, "bias": lin.bias.grad})
    if rank == 1:
        d.api("Functional.gelu.0", torch.nn.functional.gelu, (torch.linspace(-2, 2, 5),))
    d.write()


def pytorch_statistics_dump(rank_dir):
    """Statistics mode, L1, no "framework" key (pre-2025), legacy stack, kwargs and odd leaves."""
    d = TorchDump(rank_dir, "statistics", "L1", framework=False)
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float16)
    d.api("Functional.dropout.0", torch.nn.functional.dropout, (x,), {"p": 0.0, "training": False, "inplace": False},
          stack=frames(70, "x = F.dropout(x)"))
    d.api("Torch.matmul.0", torch.matmul, (torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])),
          stack=frames(71, "y = x @ w"))
    d.api("Tensor.to.0", torch.Tensor.to, (torch.zeros(2),), {"device": torch.device("cpu"), "dtype": torch.float64},
          recompute=False)
    d.api("Aten.add.Tensor.0", torch.ops.aten.add.Tensor, (torch.ones(3), torch.ones(3)), {"alpha": 2})
    d.api("Torch.linalg.vector_norm.0", torch.linalg.vector_norm, (torch.tensor([3.0, 4.0]),), {"ord": 2})
    d.api("NPU.npu_rms_norm.0", lambda t, g, epsilon: t * g, (torch.ones(2), torch.ones(2)), {"epsilon": 1e-06})
    d.api("Torch.tensor.0", torch.tensor, ([1, 2],), {"dtype": torch.int64})
    d.api("Torch.full.0", torch.full, ((2,), np.float32(1.5)))
    # communication op: output holds post-call args followed by kwargs values (group=None → null)
    ar = torch.tensor([1.0, -1.0], dtype=torch.bfloat16)
    d.api("Distributed.all_reduce.0", lambda t, group=None: t, (ar,), {"group": None}, extra=[None])
    # legacy *_except_inf_nan fields
    d.data["Torch.max.0.forward"] = {
        "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": float("inf"),
                        "Min": 1.0, "Mean": float("inf"), "Norm": float("inf"), "requires_grad": False,
                        "Max_except_inf_nan": 2.0, "Min_except_inf_nan": 1.0}],
        "input_kwargs": {}, "output": [None]}
    # ProcessGroup and P2POp leaves as msprobe writes them
    d.data["Distributed.barrier.0.forward"] = {
        "input_args": [], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1],
                                                     "group_id": "%08x" % (zlib.crc32(b"[0, 1]") & 0xFFFFFFFF)}},
        "output": [None]}
    d.backward("Torch.matmul.0", [torch.ones(2, 2)], [torch.ones(2, 2), None])
    d.write(legacy_stack=True)


def pytorch_md5_dump(rank_dir):
    d = TorchDump(rank_dir, "statistics", "L1", summary_mode="md5")
    d.api("Functional.relu.0", torch.relu, (torch.tensor([-1.0, 0.0, 1.0]),))
    d.api("Torch.mul.0", torch.mul, (torch.tensor([1.0, 2.0], dtype=torch.bfloat16), 2))
    d.api("Torch.flatten.0", torch.flatten, (torch.zeros(0),))
    d.write()


def ms_tensor(t, name, task, tensor_dir, md5=False):
    """A MindSpore tensor object: numpy stats in float32, .npy file (bf16 saved as float32)."""
    dtype_names = {torch.float32: "Float32", torch.float16: "Float16", torch.bfloat16: "BFloat16",
                   torch.int64: "Int64", torch.int32: "Int32", torch.bool: "Bool"}
    if t.numel() == 0:
        stats = (None,) * 4
    elif t.dtype == torch.bool:
        a = t.numpy()
        stats = (bool(a.max()), bool(a.min()), None, None)
    elif t.dim() == 0:
        v = t.item()
        stats = (v, v, v, v)
    else:
        f = t.float()
        stats = (f.max().item(), f.min().item(), f.mean().item(), torch.norm(f).item())
    obj = {"type": "mindspore.Tensor", "dtype": dtype_names[t.dtype], "shape": list(t.shape),
           "Max": stats[0], "Min": stats[1], "Mean": stats[2], "Norm": stats[3]}
    if task == "tensor" and t.numel() > 0:
        obj["data_name"] = name + ".npy"
        arr = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
        np.save(os.path.join(tensor_dir, name + ".npy"), arr)
    if md5:
        obj["md5"] = "%08x" % (zlib.crc32((t.float() if t.dtype == torch.bfloat16 else t).numpy().tobytes()) & 0xFFFFFFFF)
    return obj


def mindspore_dump(rank_dir):
    """MindSpore tensor mode: Mint/MintFunctional/Primitive/Cell/Jit records, .npy files, md5 too."""
    tdir = os.path.join(rank_dir, "dump_tensor_data")
    os.makedirs(tdir, exist_ok=True)
    data = {}

    def t(v, name):
        return ms_tensor(v, name, "tensor", tdir, md5=True)

    x = torch.tensor([[0.5, -1.0, 2.0], [4.0, 0.0, -8.0]])
    k = "Mint.add.0.forward"
    data[k] = {"input_args": [t(x, k + ".input.0"), t(x, k + ".input.1")], "input_kwargs": {"alpha": {"type": "int", "value": 1}},
               "output": [t(x + x, k + ".output.0")]}
    k = "MintFunctional.relu.0.forward"
    data[k] = {"input_args": [t(x, k + ".input.0")], "input_kwargs": {}, "output": [t(torch.relu(x), k + ".output.0")]}
    k = "Tensor.to.0.forward"
    bf = x.to(torch.bfloat16)
    data[k] = {"input_args": [t(x, k + ".input.0"), {"type": "mindspore.dtype", "value": "BFloat16"}],
               "input_kwargs": {}, "output": [t(bf, k + ".output.0")]}
    k = "Primitive.norm.RmsNorm.0.forward"
    data[k] = {"input": [t(x, k + ".input.0")], "output": [t(x, k + ".output.0"), t(torch.tensor(True), k + ".output.1")]}
    k = "Functional.flash_attention_score.0.forward"
    q = torch.ones(1, 2, 4)
    data[k] = {"input_args": [t(q, k + ".input.0"), t(q, k + ".input.1"), t(q, k + ".input.2"), {"type": "int", "value": 1}],
               "input_kwargs": {"input_layout": {"type": "str", "value": "SBH"}, "scalar_value": {"type": "float", "value": 0.5}},
               "output": [t(q, k + ".output.0")]}
    k = "Mint.add.0.backward"
    data[k] = {"input": [t(torch.ones(2, 3), k + ".input.0")],
               "output": [t(torch.ones(2, 3), k + ".output.0"), t(torch.ones(2, 3), k + ".output.1")]}
    k = "Cell.dense.Dense.forward.0"
    data[k] = {"input_args": [t(x, k + ".input.0")], "input_kwargs": {}, "output": [t(x, k + ".output.0")],
               "parameters": {}}
    k = "Jit.Net.0.forward"
    data[k] = {"input_args": [t(x, k + ".input.0")], "input_kwargs": {}, "output": [t(x, k + ".output.0")]}
    top = {"task": "tensor", "level": "mix", "framework": "mindspore", "dump_data_dir": tdir, "data": data}
    with open(os.path.join(rank_dir, "dump.json"), "w") as f:
        json.dump(top, f, indent=1)
    with open(os.path.join(rank_dir, "stack.json"), "w") as f:
        json.dump({"0": [["Mint.add.0.forward", "MintFunctional.relu.0.forward"], frames(10, "y = mint.add(x, x)")],
                   "1": [["Cell.dense.Dense.forward.0"], ["The call stack retrieval failed."]]}, f, indent=1)
    with open(os.path.join(rank_dir, "construct.json"), "w") as f:
        json.dump({"Mint.add.0.forward": "Cell.dense.Dense.forward.0", "Cell.dense.Dense.forward.0": "",
                   "Mint.add.0.backward": ["Cell.dense.Dense.backward.0", 0], "Cell.dense.Dense.backward.0": [None, 1],
                   "megatron_micro_step_number": 2}, f, indent=1)


def malformed(root):
    """Broken inputs: each must give a probe::Error naming the file and field, never a crash."""
    os.makedirs(root, exist_ok=True)
    good = {"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "/x/dump_tensor_data",
            "data": {"Functional.relu.0.forward": {
                "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0,
                                "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": False,
                                "data_name": "Functional.relu.0.forward.input.0.pt"}],
                "input_kwargs": {}, "output": [None]}}}
    text = json.dumps(good, indent=1)

    def put(name, content, mode="w"):
        with open(os.path.join(root, name), mode) as f:
            f.write(content)

    put("truncated.json", text[: len(text) * 2 // 3])
    raw = text.encode().replace(b'"torch.float32"', b'"torch.\xff\xfeloat32"')
    put("invalid_utf8.json", raw, "wb")
    put("deep.json", '{"task": "tensor", "data": {"Torch.x.0.forward": {"input_args": ' + "[" * 100000)
    put("deep_closed.json", '{"data": {"Torch.x.0.forward": {"input_args": ' + "[" * 600 + "]" * 600 + "}}}")
    # wrong types, one file per field
    def variant(name, mutate):
        g = json.loads(text)
        mutate(g)
        put(name, json.dumps(g, indent=1))
    variant("wrong_data.json", lambda g: g.__setitem__("data", []))
    variant("wrong_task.json", lambda g: g.__setitem__("task", 3))
    variant("wrong_shape.json", lambda g: g["data"]["Functional.relu.0.forward"]["input_args"][0].__setitem__("shape", "2"))
    variant("wrong_dtype.json", lambda g: g["data"]["Functional.relu.0.forward"]["input_args"][0].__setitem__("dtype", 32))
    variant("wrong_max.json", lambda g: g["data"]["Functional.relu.0.forward"]["input_args"][0].__setitem__("Max", "big"))
    variant("wrong_input_args.json", lambda g: g["data"]["Functional.relu.0.forward"].__setitem__("input_args", 5))
    variant("wrong_entry.json", lambda g: g["data"].__setitem__("Functional.relu.0.forward", [1, 2]))
    variant("missing_shape.json", lambda g: g["data"]["Functional.relu.0.forward"]["input_args"][0].pop("shape"))
    variant("not_object.json", lambda g: None)
    put("not_object.json", "[1, 2, 3]")
    put("empty.json", "")


def escapes(rank_dir):
    """data_name values that try to leave dump_tensor_data/; plus a legitimate file next to them."""
    tdir = os.path.join(rank_dir, "dump_tensor_data")
    os.makedirs(tdir, exist_ok=True)
    torch.save(torch.tensor([1.0, 2.0]), os.path.join(tdir, "ok.pt"))
    torch.save(torch.tensor([6.0]), os.path.join(rank_dir, "outside.pt"))
    link = os.path.join(tdir, "link_out.pt")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../outside.pt", link)

    def tensor(name):
        return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 2.0, "Min": 1.0, "Mean": 1.5,
                "Norm": 2.23606797749979, "requires_grad": False, "data_name": name}
    with open(os.path.join(tdir, "corrupt.pt"), "wb") as f:  # a zip signature and nothing else
        f.write(b"PK\x03\x04" + b"\0" * 26)
    torch.save(torch.zeros(3), os.path.join(tdir, "wrong_shape.pt"))
    data = {"Functional.relu.0.forward": {"input_args": [tensor("ok.pt")], "input_kwargs": {},
                                          "output": [tensor("missing.pt")]},
            "Functional.relu.1.forward": {"input_args": [tensor("../outside.pt")], "input_kwargs": {}, "output": []},
            "Functional.relu.2.forward": {"input_args": [tensor("/etc/passwd")], "input_kwargs": {}, "output": []},
            "Functional.relu.3.forward": {"input_args": [tensor("link_out.pt")], "input_kwargs": {}, "output": []},
            "Functional.relu.4.forward": {"input_args": [tensor("sub/../../outside.pt")], "input_kwargs": {},
                                          "output": []},
            "Functional.relu.5.forward": {"input_args": [tensor("corrupt.pt"), tensor("wrong_shape.pt")],
                                          "input_kwargs": {}, "output": []}}
    with open(os.path.join(rank_dir, "dump.json"), "w") as f:
        json.dump({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": tdir, "data": data},
                  f, indent=1)


def relativize_dump_data_dir(root):
    """msprobe writes the absolute dump_tensor_data path; keep the fixtures machine-independent."""
    for dirpath, _, files in os.walk(root):
        if "dump.json" in files:
            p = os.path.join(dirpath, "dump.json")
            with open(p) as f:
                text = f.read()
            text = text.replace(OUT, "/dump/path")
            with open(p, "w") as f:
                f.write(text)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    pytorch_tensor_dump(os.path.join(OUT, "pytorch_tensor", "step0", "rank0"), 0)
    pytorch_tensor_dump(os.path.join(OUT, "pytorch_tensor", "step0", "rank1"), 1)
    pytorch_statistics_dump(os.path.join(OUT, "pytorch_statistics"))
    pytorch_md5_dump(os.path.join(OUT, "pytorch_md5"))
    mindspore_dump(os.path.join(OUT, "mindspore_tensor", "step0", "rank"))
    malformed(os.path.join(OUT, "malformed"))
    escapes(os.path.join(OUT, "escapes"))
    relativize_dump_data_dir(OUT)


if __name__ == "__main__":
    main()
