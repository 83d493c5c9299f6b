#!/usr/bin/python3
"""Dumps for `probe run_overflow_check` and `probe nan_analyze` (issue 32), written by real torch.

Run with Debian's interpreter (torch 1.13 CPU):  /usr/bin/python3 tests/data/make_overflow_fixtures.py

run_overflow_check (tests/data/overflow/):
  overflow_dump/    task overflow_check, msprobe's tensor layout (examples/make_example_dump.py's Recorder).
                    Each API is run by CPU torch; an "abnormal" API has its recorded output altered the way a
                    faulty device would (an inf, or a value saturated to +-65504, where the exact result is
                    finite). expected.json holds, per API with finite inputs and an overflowing output, the
                    verdict and the first reported element, computed here: the exact value is torch's float64
                    result on the dumped inputs, rounded to the output dtype by torch (`.to(dtype)`).
  statistics_dump/  the same kind of calls as statistics only (constant inputs, so that inputs generated from
                    Max/Min equal the real ones).

nan_analyze (tests/data/nan_analyze/<case>/step0/rank{0,1}/{dump,stack,construct}.json, statistics task):
  two ranks of one SPMD program; rank 1's Torch.log meets a negative value and returns NaN, which an
  all_reduce (simulated here as the sum of both ranks' tensors, what torch.distributed computes) carries to
  rank 0 (cases before_comm, during_comm, during_comm_asymmetric, after_comm, clean, data_nan, p2p); the case
  during_comm_3ranks has three rank directories.
  expected.json names the entry msprobe's nan_analyze reports, derived in each case's "why";
  expected_analyze.json is the whole file as msprobe writes it (its save_json: json.dump with indent 2), built
  here from the rank's dump.json, construct.json and stack.json.
"""
import json
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import make_example_dump as mk  # noqa: E402

OVERFLOW = os.path.join(HERE, "overflow")
NAN = os.path.join(HERE, "nan_analyze")
FP16_MAX = torch.finfo(torch.float16).max


def py(v):
    """A float as json writes it (inf and nan as strings, so expected.json stays strict JSON)."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


class OverflowCase:
    def __init__(self, rec):
        self.rec = rec
        self.expected = {}

    def add(self, full, fn, args, kwargs=None, device_out=None, saturate=False, exact_fn=None):
        """Records `fn(*args)` (CPU torch, in the inputs' dtype or float32 rounded back, as a device with
        float32 internals does); `device_out` replaces the recorded output (a faulty device)."""
        kwargs = kwargs or {}
        low = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype in (torch.float16, torch.bfloat16)]
        if low:
            out = fn(*[a.float() if isinstance(a, torch.Tensor) else a for a in args], **kwargs).to(low[0])
        else:
            out = fn(*args, **kwargs)
        if saturate:  # an NPU in saturation mode clamps an overflow to the dtype's extreme values
            fmax = torch.finfo(out.dtype).max
            out = torch.nan_to_num(out, posinf=fmax, neginf=-fmax)
        if device_out is not None:
            out = device_out(out)
        self.rec.encode_forward(full, args, kwargs, out)
        self.rec.stacks.append((full + ".forward", [f"File make_overflow_fixtures.py, line 1, in {full}"]))
        exact = (exact_fn or fn)(*[a.double() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
        self.judge(full, args, out, exact)

    def judge(self, full, args, out, exact):
        inputs_finite = all(bool(torch.isfinite(a).all()) for a in args if isinstance(a, torch.Tensor))
        fmax = torch.finfo(out.dtype).max
        dev = out.double().flatten()
        nonfinite = ~torch.isfinite(dev)
        saturated = dev.abs() == fmax
        if not inputs_finite or not bool((nonfinite | saturated).any()):
            return  # not a candidate: inputs overflowed, or the output holds no overflow
        rounded = exact.to(out.dtype).double().flatten()  # torch's rounding of the exact value
        ex = exact.flatten()
        explained_nf = ~torch.isfinite(rounded)
        # A non-finite device element is explained when the exact value rounds to a non-finite one; a
        # saturated one (+-max) when the exact value overflows the dtype, and is no overflow at all when the
        # exact value itself rounds to +-max.
        flagged = nonfinite | (saturated & explained_nf)
        unexplained = (nonfinite & ~explained_nf) | (saturated & torch.isfinite(rounded) & (rounded.abs() != fmax))
        if bool(unexplained.any()):
            verdict, idx = "abnormal", int(unexplained.nonzero()[0])
        elif bool(flagged.any()):
            verdict, idx = "normal", int(flagged.nonzero()[0])
        else:
            return
        kind = "inf_nan" if bool(nonfinite.any()) else "saturation"
        self.expected[full] = {"verdict": verdict, "output_index": 0, "element_index": idx,
                               "device": py(dev[idx]), "bench": py(ex[idx]), "kind": kind}


def overflow_dump():
    out = os.path.join(OVERFLOW, "overflow_dump")
    shutil.rmtree(out, ignore_errors=True)
    rec = mk.Recorder(out, task="tensor")
    c = OverflowCase(rec)
    f16, bf16 = torch.float16, torch.bfloat16
    # exp(12) = 162754.8 is beyond float16's 65504: a real overflow of the exact value -> normal.
    x = torch.linspace(6.0, 12.0, 16).to(f16).reshape(4, 4)
    c.add("Torch.exp.0", torch.exp, [x])
    # A product well inside float16's range, with an inf injected into element 5 -> abnormal.
    a = torch.linspace(-3.0, 3.0, 12).to(f16).reshape(3, 4)
    b = torch.linspace(0.5, 2.0, 12).to(f16).reshape(3, 4)

    def inject_inf(o):
        o = o.clone()
        o.view(-1)[5] = float("inf")
        return o
    c.add("Tensor.__mul__.0", torch.Tensor.__mul__, [a, b], device_out=inject_inf)
    # Saturation mode: 60000 + 60000 overflows float16 and the device clamps it to 65504 -> normal.
    p = torch.tensor([60000.0, 1.0, -60000.0, 2.0], dtype=f16)
    q = torch.tensor([60000.0, 2.0, -60000.0, 3.0], dtype=f16)
    c.add("Tensor.__add__.0", torch.Tensor.__add__, [p, q], saturate=True)
    # Saturation mode, faulty: element 2 reads 65504 where the exact product is 0.75 -> abnormal.

    def saturate_one(o):
        o = o.clone()
        o.view(-1)[2] = FP16_MAX
        return o
    c.add("Torch.mul.0", torch.mul, [a, b], device_out=saturate_one)
    # sqrt of a negative number is NaN exactly as well -> normal.
    s = torch.tensor([4.0, -1.0, 9.0, 0.25], dtype=torch.float32)
    c.add("Torch.sqrt.0", torch.sqrt, [s])
    # bfloat16: 1e38 * 1e38 overflows bfloat16's 3.39e38 -> normal.
    u = torch.tensor([1e38, 2.0, -1e38], dtype=bf16)
    c.add("Tensor.__mul__.1", torch.Tensor.__mul__, [u, u])
    # An input that already holds inf: msprobe's analysis covers only inputs without overflow -> not judged.
    r = torch.tensor([1.0, float("inf"), -2.0], dtype=torch.float32)
    c.add("Functional.relu.0", torch.nn.functional.relu, [r])
    # A finite output: nothing to analyse.
    c.add("Torch.sum.0", torch.sum, [a])
    # An attention mask at float16's lowest value (-65504) is finite, so the add is judged: -100 + -65504 =
    # -65604 is beyond float16's range exactly as well -> normal.
    scores = torch.tensor([[-100.0, 2.0], [0.5, 1.0]], dtype=f16)
    mask = torch.tensor([[torch.finfo(f16).min, 0.0], [0.0, 0.0]], dtype=f16)
    c.add("Tensor.__add__.1", torch.Tensor.__add__, [scores, mask])
    # Casts, the commonest overflow: 70000 in float32 has no float16 value; the exact cast (torch's, from
    # float64) is inf as well -> normal. msprobe writes a positional torch.dtype as {}.
    w32 = torch.tensor([70000.0, 1.5, -1e5], dtype=torch.float32)
    c.add("Tensor.to.0", lambda t, d: t.to(d), [w32, torch.float16])
    rec.data["Tensor.to.0.forward"]["input_args"][1] = {}
    c.add("Tensor.half.0", torch.Tensor.half, [w32])
    # A communication op whose output overflowed: its result came from other ranks, nothing to re-run here.
    key = "Distributed.all_reduce.0.forward"
    t = torch.tensor([1.0, 2.0], dtype=f16)
    rec.data[key] = {"input_args": [rec.encode(t, key + ".input.0")], "input_kwargs": {"group": None},
                     "output": [rec.encode(torch.tensor([float("inf"), 4.0], dtype=f16), key + ".output.0"), None]}
    rec.write()
    path = os.path.join(out, "dump.json")
    with open(path) as f:
        doc = json.load(f)
    doc["task"] = "overflow_check"  # what msprobe's overflow_check task writes; tensors saved as in tensor mode
    doc["dump_data_dir"] = "dump_tensor_data"
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(c.expected, f, indent=1, sort_keys=True)


def statistics_dump():
    out = os.path.join(OVERFLOW, "statistics_dump")
    shutil.rmtree(out, ignore_errors=True)
    rec = mk.Recorder(out, task="statistics")
    c = OverflowCase(rec)
    # Constant inputs: inputs generated from Max == Min are the dumped ones.
    x = torch.full((2, 3), 12.0, dtype=torch.float16)
    c.add("Torch.exp.0", torch.exp, [x])
    a = torch.full((2, 3), 2.0, dtype=torch.float16)
    c.add("Tensor.__mul__.0", torch.Tensor.__mul__, [a, a], device_out=lambda o: o.fill_(float("inf")))
    rec.write()
    expected = {k: {"verdict": v["verdict"]} for k, v in c.expected.items()}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


# --- nan_analyze ------------------------------------------------------------------------------------------

class Rank:
    def __init__(self, step_dir, rank):
        self.rec = mk.Recorder(os.path.join(step_dir, f"rank{rank}"), task="statistics")
        self.rank = rank
        self.construct = {}

    def call(self, full, fn, args, kwargs=None, module=None):
        kwargs = kwargs or {}
        out = fn(*args, **kwargs)
        self.rec.encode_forward(full, args, kwargs, out)
        self.rec.stacks.append((full + ".forward", [f"File train.py, line {10 + len(self.rec.stacks)}, in step",
                                                     f"  rank {self.rank}: {full}"]))
        self.construct[full + ".forward"] = module
        return out

    def all_reduce(self, full, tensor, total):
        """dist.all_reduce(tensor): msprobe records the arguments after the call as the output (in place)."""
        key = full + ".forward"
        self.rec.data[key] = {"input_args": [self.rec.encode(tensor, f"{key}.input.0")],
                              "input_kwargs": {"group": None}}
        tensor.copy_(total)
        self.rec.data[key]["output"] = [self.rec.encode(tensor, f"{key}.output.0"), None]
        self.rec.stacks.append((key, [f"File train.py, line 99, in step", f"  rank {self.rank}: all_reduce"]))
        self.construct[key] = None

    def write(self):
        self.rec.write()
        with open(os.path.join(self.rec.out_dir, "construct.json"), "w") as f:
            json.dump(self.construct, f, indent=1)


def nan_case(name, program, expected, why, n_ranks=2):
    root = os.path.join(NAN, name)
    shutil.rmtree(root, ignore_errors=True)
    step = os.path.join(root, "step0")
    ranks = [Rank(step, r) for r in range(n_ranks)]
    program(ranks)
    for r in ranks:
        r.write()
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump({"anomalies": expected, "why": why}, f, indent=1)
    plain = expected.get("msprobe", expected)
    if plain:
        # The whole analyze file as msprobe's save_json writes it (json.dump, indent 2) for these anomalies.
        content = {rank: [node_info(os.path.join(step, "rank" + rank[len("rank_"):]), op) for op in ops]
                   for rank, ops in plain.items()}
        with open(os.path.join(root, "expected_analyze.json"), "w") as f:
            json.dump(content, f, indent=2)


def node_info(rank_dir, op_name):
    """One reported entry: the dump.json sections of the entry, its chain of parents in construct.json (outermost
    first), and the frames of the stack.json group whose name list holds it."""
    with open(os.path.join(rank_dir, "dump.json")) as f:
        entry = json.load(f)["data"][op_name]
    with open(os.path.join(rank_dir, "construct.json")) as f:
        construct = json.load(f)
    with open(os.path.join(rank_dir, "stack.json")) as f:
        stack = json.load(f)
    data_info = {"input_args": entry.get("input_args", []), "input_kwargs": entry.get("input_kwargs", {}),
                 "output": entry.get("output", {})}
    chain, node = [op_name], construct.get(op_name)
    while node and node not in chain:
        chain.insert(0, node)
        node = construct.get(node)
    frames = next((v[1] for v in stack.values() if len(v) >= 2 and op_name in v[0]), {})
    return {"op_name": op_name, "data_info": data_info, "construct_info": chain, "stack_info": frames}


def data(rank, base):
    """Each rank's batch: rank 1's holds a negative value, which Torch.log turns into NaN."""
    x = torch.linspace(0.5, 2.0, 8).reshape(2, 4) + base
    if rank == 1:
        x[1, 2] = -0.5
    return x


def synced_all_reduce(ranks, full, tensors):
    total = sum(t.clone() for t in tensors)
    for r, t in zip(ranks, tensors):
        r.all_reduce(full, t, total)


def before_comm(ranks):
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    grads = []
    for r in ranks:
        x = data(r.rank, 0.0)
        h = r.call("Functional.linear.0", torch.nn.functional.linear, [x.abs(), w], module="Module.fc.Linear.forward.0")
        y = r.call("Torch.log.0", torch.log, [x], module="Module.head.Head.forward.0")
        grads.append(r.call("Tensor.__mul__.0", torch.Tensor.__mul__, [y, h]))
    synced_all_reduce(ranks, "Distributed.all_reduce.0", grads)
    for r, g in zip(ranks, grads):
        r.call("Tensor.__add__.0", torch.Tensor.__add__, [g, 1.0])
    for r in ranks:
        r.construct["Module.fc.Linear.forward.0"] = "Module.model.Model.forward.0"
        r.construct["Module.head.Head.forward.0"] = "Module.model.Model.forward.0"
        r.construct["Module.model.Model.forward.0"] = None


def during_comm(ranks, rank0_ops_between=2):
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    first = []
    for r in ranks:
        first.append(r.call("Functional.linear.0", torch.nn.functional.linear, [data(0, r.rank).abs(), w]))
    synced_all_reduce(ranks, "Distributed.all_reduce.0", first)
    grads = []
    for r, h in zip(ranks, first):
        if r.rank == 0 and rank0_ops_between == 0:
            grads.append(h.clone())
            continue
        h2 = r.call("Tensor.__mul__.0", torch.Tensor.__mul__, [h, 0.5])
        y = r.call("Torch.log.0", torch.log, [data(r.rank, 0.0)])
        grads.append(y + h2)
    synced_all_reduce(ranks, "Distributed.all_reduce.1", grads)
    for r, g in zip(ranks, grads):
        r.call("Tensor.__add__.0", torch.Tensor.__add__, [g, 1.0])


def after_comm(ranks):
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    first = [r.call("Functional.linear.0", torch.nn.functional.linear, [data(0, r.rank).abs(), w]) for r in ranks]
    synced_all_reduce(ranks, "Distributed.all_reduce.0", first)
    for r in ranks:
        r.call("Tensor.__mul__.0", torch.Tensor.__mul__, [first[r.rank], 2.0])
        r.call("Torch.log.0", torch.log, [data(r.rank, 0.0)])


def data_nan(ranks):
    """Rank 0's batch already holds NaN (from its data): its linear has NaN in its input, so NaN did not appear
    there; rank 1's log makes its own."""
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    outs = []
    for r in ranks:
        x = data(r.rank, 0.0)
        if r.rank == 0:
            x[0, 1] = float("nan")
        h = r.call("Functional.linear.0", torch.nn.functional.linear, [x, w])
        y = r.call("Torch.log.0", torch.log, [data(r.rank, 0.0)])
        outs.append(r.call("Tensor.__add__.0", torch.Tensor.__add__, [h, y]))
    synced_all_reduce(ranks, "Distributed.all_reduce.0", outs)


def p2p(ranks):
    """Pipeline style: after a clean all_reduce, rank 1 computes (a mul, then a log that makes NaN) and sends
    the result to rank 0, which waits in recv without computing anything in between."""
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    first = [r.call("Functional.linear.0", torch.nn.functional.linear, [data(0, r.rank).abs(), w]) for r in ranks]
    synced_all_reduce(ranks, "Distributed.all_reduce.0", first)
    r0, r1 = ranks
    h = r1.call("Tensor.__mul__.0", torch.Tensor.__mul__, [first[1], 0.5])
    y = r1.call("Torch.log.0", torch.log, [data(1, 0.0)])
    sent = y + h
    # dist.send(tensor, 1 -> 0) and dist.recv(buffer, src=1) as msprobe records them: positional peer rank, the
    # arguments after the call as the output.
    key = "Distributed.send.0.forward"
    r1.rec.data[key] = {"input_args": [r1.rec.encode(sent, key + ".input.0"), {"type": "int", "value": 0}],
                        "input_kwargs": {},
                        "output": [r1.rec.encode(sent, key + ".output.0"), {"type": "int", "value": 0}]}
    r1.rec.stacks.append((key, ["File train.py, line 120, in send_forward"]))
    r1.construct[key] = None
    buf = torch.zeros(2, 4)
    key = "Distributed.recv.0.forward"
    r0.rec.data[key] = {"input_args": [r0.rec.encode(buf, key + ".input.0"), {"type": "int", "value": 1}],
                        "input_kwargs": {}}
    buf.copy_(sent)
    r0.rec.data[key]["output"] = [r0.rec.encode(buf, key + ".output.0"), {"type": "int", "value": 1}]
    r0.rec.stacks.append((key, ["File train.py, line 130, in recv_forward"]))
    r0.construct[key] = None
    r0.call("Tensor.__add__.0", torch.Tensor.__add__, [buf, 1.0])


def during_comm_3ranks(ranks):
    during_comm(ranks)
    r2 = ranks[2]
    x = torch.linspace(1.0, 2.0, 64).reshape(8, 8)
    for i in range(12):
        x = r2.call(f"Tensor.__mul__.{i + 1}", torch.Tensor.__mul__, [x, 1.0])


def clean(ranks):
    w = torch.linspace(-1.0, 1.0, 16).reshape(4, 4)
    first = [r.call("Functional.linear.0", torch.nn.functional.linear, [data(0, r.rank).abs(), w]) for r in ranks]
    synced_all_reduce(ranks, "Distributed.all_reduce.0", first)
    for r in ranks:
        r.call("Torch.log.0", torch.log, [first[r.rank].abs() + 1.0])


def main():
    torch.manual_seed(0)
    os.makedirs(OVERFLOW, exist_ok=True)
    overflow_dump()
    statistics_dump()
    nan_case("before_comm", before_comm, {"rank_1": ["Torch.log.0.forward"]},
             "rank 1's log is the first entry with finite inputs and a NaN output before any communication op; "
             "rank 0 holds no such entry before its all_reduce (whose input is finite and output NaN)")
    nan_case("during_comm", during_comm, {"rank_1": ["Torch.log.0.forward"]},
             "all_reduce.0 is clean; between all_reduce.0 and all_reduce.1 rank 1's log (the second compute op "
             "there, sub_layer 1) makes NaN; rank 0's all_reduce.1 has finite input and NaN output but comes "
             "after two compute ops (sub_layer 2), so the log is the earliest anomaly of layer 1")
    nan_case("during_comm_asymmetric", lambda rs: during_comm(rs, 0),
             {"msprobe": {"rank_0": ["Distributed.all_reduce.1.forward"]},
              "probe": {"rank_1": ["Torch.log.0.forward"]}},
             "rank 0 runs no compute op between the two all_reduces (its all_reduce.1 has sub_layer 0), rank 1's "
             "log is its second (sub_layer 1): msprobe's (layer, sub_layer) order names rank 0's all_reduce.1, "
             "whose NaN came from rank 1's input; the probe profile puts a group's compute ops first")
    nan_case("after_comm", after_comm, {"rank_1": ["Torch.log.0.forward"]},
             "every communication op is clean; after the last one rank 1's log makes NaN")
    nan_case("data_nan", data_nan, {"rank_1": ["Torch.log.0.forward"]},
             "rank 0's first non-finite output (its linear) has NaN in its input; rank 1's log is the first entry "
             "with finite inputs and a NaN output")
    nan_case("p2p", p2p, {"msprobe": {"rank_0": ["Distributed.recv.0.forward"]},
                          "probe": {"rank_1": ["Torch.log.0.forward"]}},
             "send.0 (rank 1, src) links to recv.0 (rank 0, dst) in layer 1; send's input holds NaN, so rank 1's "
             "compute anomaly before it (the log, sub_layer 1) is a candidate, and recv's output is NaN from a clean "
             "buffer (sub_layer 0: rank 0 ran nothing since the all_reduce). msprobe's least (layer, sub_layer) "
             "names the recv; the probe profile the log that fed it")
    nan_case("clean", clean, {}, "no entry holds inf or NaN")
    # Three ranks (the split of nan_analyze across ranks, tests/mpi): rank 2's dump is the largest, so the
    # heaviest-first order differs from the rank order.
    nan_case("during_comm_3ranks", during_comm_3ranks, {"rank_1": ["Torch.log.0.forward"]},
             "as during_comm on three ranks: rank 1's log (sub_layer 1 of layer 1) makes NaN; the all_reduce.1 of "
             "ranks 0 and 2 have finite inputs and NaN outputs at sub_layer 2 (rank 2's extra ops come after "
             "all_reduce.1)", n_ranks=3)


if __name__ == "__main__":
    main()
