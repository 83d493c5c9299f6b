"""probe.torch.Dispatch: msprobe's PtdbgDispatch (seed 003) as a TorchDispatchMode over libprobe's
OnlineChecker.

Every aten op run inside `with Dispatch(dump_path=...):` is executed by torch as usual; its inputs and
outputs are handed, as views of torch's memory, to the C++ OnlineChecker, which copies them, re-runs the op
with probe's float64 bench runner on worker threads and writes the result/details CSVs (and .npy files per
dump_mode) into dump_path/msprobe_[tag_]rank{N}_{timestamp}/, the files CheckScope (LibTorch) writes. No
CPU copy of the op is run in torch. Ops on the black list (data/online_dispatch.json, msprobe's
aten_ops_blacklist, unless black_list= is given) and ops probe has no runner for are not checked.
"""
import threading

import torch as _torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _probe

__all__ = ["Dispatch"]

_backward_depth = threading.local()


def _in_backward():
    return getattr(_backward_depth, "n", 0) > 0


def _wrap_backward(fn):
    def wrapped(*args, **kwargs):
        _backward_depth.n = getattr(_backward_depth, "n", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _backward_depth.n -= 1

    wrapped._probe_wrapped = fn
    return wrapped


class Dispatch(TorchDispatchMode):
    """Checks every aten op of the block. Parameters as PtdbgDispatch's: dump_mode ("off", "all", "list",
    "auto": which ops get .npy files), api_list (ops saved in "list" mode), dump_path (required, must exist),
    tag (in the directory name), process_num (bench worker threads; 0 = 1); and probe's: rule ("error_bound",
    "run_ut" or "documented", msprobe's Cosine/MaxAbsError rule), profile, rank, black_list (None = the
    shipped list), overflow (only the first op turning finite inputs into inf/NaN is checked), step (leads
    the row names), timestamp. `summary` holds the counts once the block has ended."""

    def __init__(self, dump_path, dump_mode="off", api_list=None, tag="", process_num=0, debug=False, *,
                 rule="error_bound", profile="probe", rank=0, black_list=None, overflow=False, step=None,
                 timestamp="", queue_capacity=64):
        super().__init__()
        self._checker = _probe.OnlineChecker(
            dump_path=str(dump_path), tag=tag or "", rank=rank, dump_mode=dump_mode, api_list=list(api_list or []),
            black_list=None if black_list is None else list(black_list), rule=rule, profile=profile,
            workers=max(1, int(process_num)), queue_capacity=queue_capacity, timestamp=timestamp)
        self._runners = set(_probe.runners("bench"))
        self._skip = set()  # op names the checker refused (black-listed): not converted again
        self._skipped = 0
        self._overflow = overflow
        self.first_overflow = None
        self._step = step
        self.debug = debug
        self.unsupported = {}
        self.not_convertible = {}
        self.summary = None
        self._patched = []

    # -- the mode --

    def __enter__(self):
        for owner, name in ((_torch.autograd, "backward"), (_torch.autograd, "grad")):
            fn = getattr(owner, name)
            setattr(owner, name, _wrap_backward(fn))
            self._patched.append((owner, name, fn))
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            for owner, name, fn in reversed(self._patched):
                setattr(owner, name, fn)
            self._patched.clear()
            self._checker.flush()
            self.summary = self._checker.summary()
            self.summary["calls"] += self._skipped
            self.summary["blacklisted"] += self._skipped
            self.summary["unsupported_ops"] = sorted(set(self.summary["unsupported_ops"]) | set(self.unsupported))
            self.summary["not_convertible"] = dict(self.not_convertible)

    def _execute(self, func, args, kwargs):
        """Runs the op on the device (torch). A hook for tests that emulate a faulty kernel."""
        return func(*args, **kwargs)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = "Aten.%s.%s" % (func.overloadpacket.__name__, func._overloadname)
        if name in self._skip:
            self._skipped += 1
            return self._execute(func, args, kwargs)
        if self._overflow and self.first_overflow is not None:
            return self._execute(func, args, kwargs)
        if name not in self._runners:
            self.unsupported[name] = self.unsupported.get(name, 0) + 1
            return self._execute(func, args, kwargs)
        # An in-place op is judged on the inputs it was given: keep the written arguments' values.
        written = [i for i, a in enumerate(func._schema.arguments)
                   if a.alias_info is not None and a.alias_info.is_write and i < len(args)]
        before = list(args)
        for i in written:
            if isinstance(args[i], _torch.Tensor):
                before[i] = args[i].clone()
        out = self._execute(func, args, kwargs)
        outputs = list(out) if isinstance(out, tuple) else [out]
        if self._overflow:
            if not any(_probe.non_finite(o) for o in _flat(outputs)):
                return out
            if any(_probe.non_finite(a) for a in _flat(list(before) + list(kwargs.values()))):
                return out
            self.first_overflow = {"api": name, "output": next(i for i, o in enumerate(outputs)
                                                               if any(_probe.non_finite(t) for t in _flat([o]))),
                                   "backward": _in_backward(), "step": self._step}
        try:
            queued = self._checker.check(name, before, kwargs, outputs, _in_backward(), self._step)
        except Exception as e:  # an argument probe cannot view: counted, never raised into training
            self.not_convertible[name + " (" + str(e) + ")"] = self.not_convertible.get(name, 0) + 1
            return out
        if not queued:
            self._skip.add(name)
        return out


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        elif isinstance(v, _torch.Tensor):
            yield v
