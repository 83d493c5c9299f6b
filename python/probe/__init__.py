"""probe: libprobe's accuracy checks from Python.

metrics/judge read numpy arrays and CPU torch tensors in place; run_ut, compare, api_precision_compare and
run_overflow_check run the CLI's commands with the GIL released; probe.torch.Dispatch checks every aten op
of a PyTorch step online.
"""

from . import _probe
from ._errors import (Error, FormatError, InternalError, InvalidArgumentError, IoError, RunnerError,
                      SecurityError, UnsupportedError)

__all__ = [
    "metrics", "judge", "Dump", "run_ut", "compare", "api_precision_compare", "run_overflow_check", "runners",
    "register_runner", "Error", "InvalidArgumentError", "IoError", "FormatError", "UnsupportedError", "SecurityError",
    "RunnerError", "InternalError", "Metrics", "Verdict",
]


class Verdict:
    """A judgement: status ("pass", "Warning", "error", "SKIP"), method, standard, criteria (dicts of name,
    value, op, threshold, passed, decides), worst elements (dicts of index, bench, device, abs_err, rel_err,
    ulp, coords, bound) and the CSV message."""

    def __init__(self, d):
        self.status = d["status"]
        self.method = d["method"]
        self.standard = d["standard"]
        self.criteria = d["criteria"]
        self.pass_if_any = d["pass_if_any"]
        self.worst = d["worst"]
        self.message = d["message"]
        self.copied = d.get("copied", False)

    @property
    def passed(self):
        return self.status == "pass"

    def __repr__(self):
        return "Verdict(status=%r, method=%r, message=%r)" % (self.status, self.method, self.message)


class Metrics:
    """What `probe metrics` prints for a pair: `values` (every metric as a number, None when blank), `cells`
    (the CLI's text, key for key), `status`/`message` (the deciding verdict), `verdict` (a Verdict with its
    criteria and worst elements), `rule` ("error_bound" or "run_ut") and `copied` (an input was strided and
    had to be gathered)."""

    def __init__(self, d):
        self.values = d["values"]
        for key, value in self.values.items():
            if isinstance(value, str):  # MindSpore's cells are text; their numbers become numbers
                try:
                    self.values[key] = float(value)
                except ValueError:
                    pass
        self.cells = d["cells"]
        self.verdict = Verdict(d["verdict"]) if d["verdict"] is not None else None
        self.rule = d["rule"]
        self.copied = d["copied"]
        self.status = self.cells["status"]
        self.message = self.cells["message"]

    def __getattr__(self, name):
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    def __repr__(self):
        return "Metrics(status=%r, %s)" % (self.status, ", ".join(
            "%s=%r" % kv for kv in self.values.items() if kv[1] is not None))


def metrics(bench, device, api=None, *, profile="probe", parts="all", magnitude=None, accumulation=0,
            standards="", worst_count=3, verdict=True):
    """Every metric of `device` against `bench` (numpy arrays or CPU torch tensors, read in place) and the
    verdict, as `probe metrics BENCH DEVICE --api API` computes them. parts: "all", or a list of run_ut,
    ulp, dump, mindspore (the CLI's --metrics). The error bound's verdict (probe profile) comes from the
    metrics pass itself; run_ut's rule's criteria and worst elements take a second pass over the data,
    which verdict=False leaves out (Metrics.verdict is then None; status and message stay)."""
    return Metrics(_probe.metrics(bench, device, api, profile, parts, magnitude, accumulation, standards,
                                  worst_count, verdict))


def judge(bench, device, api="benchmark_default", *, rule="default", device_dtype=None, standard=None,
          profile="probe", reference=None, magnitude=None, accumulation=0, worst_count=3, fp8_input=False,
          standards="", exact_scalars=False):
    """probe::judge of one output: rule is "default", "run_ut", "precision_standard" or "error_bound".
    exact_scalars: the call's Python numbers are exact in the output dtype (no rounding term for them)."""
    return Verdict(_probe.judge(bench, device, api, rule=rule, device_dtype=device_dtype, standard=standard,
                                profile=profile, reference=reference, magnitude=magnitude,
                                accumulation=accumulation, worst_count=worst_count, fp8_input=fp8_input,
                                standards=standards, exact_scalars=exact_scalars))


class Dump:
    """A dump.json: `keys()`, `entry(key)` (its name parts and tensor descriptors) and `load(key, field)`,
    a read-only numpy view of the tensor's mapped file (bfloat16 as a torch tensor when torch=True, else
    its uint16 bits)."""

    def __init__(self, path):
        self._dump = _probe.Dump(str(path))

    path = property(lambda self: self._dump.path)
    task = property(lambda self: self._dump.task)
    level = property(lambda self: self._dump.level)
    framework = property(lambda self: self._dump.framework)

    def keys(self):
        return self._dump.keys()

    def entry(self, key):
        return self._dump.entry(key)

    @property
    def entries(self):
        return [self._dump.entry(k) for k in self._dump.keys()]

    def load(self, key, field, torch=False):
        array, dtype = self._dump.load(key, field)
        if dtype == "bfloat16" and torch:
            import torch as _torch
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch warns about read-only arrays it will not write
                return _torch.from_numpy(array).view(_torch.bfloat16)
        return array


def _paths(**kwargs):
    return {k: (str(v) if hasattr(v, "__fspath__") else v) for k, v in kwargs.items()}


def run_ut(api_info, out_path="./", **options):
    """`probe run_ut`: options are the CLI's long flags as keywords (csv_path, config, save_error_data,
    filter_api, framework, threads, seed, profile, timestamp, device_runner, max_api_elements,
    max_api_flops) plus progress=callable(dict(done, total, tensor_bytes)). Ctrl-C (KeyboardInterrupt) or
    an exception from progress stops the run after the API being written; the files resume with
    csv_path=summary["result_csv"], and the exception carries the summary as `.summary`."""
    return _probe.run_ut(**_paths(api_info=api_info, out_path=out_path, **options))


def compare(input_path, output_path="./output", **options):
    """`probe compare -i compare.json`: stack_mode, compare_only, fuzzy_match, highlight, data_mapping,
    api_mapping, cell_mapping, layer_mapping (file or "" for the built-in map), xlsx, framework, profile,
    timestamp, progress."""
    return _probe.compare(**_paths(input_path=input_path, output_path=output_path, **options))


def api_precision_compare(npu_csv_path, gpu_csv_path, out_path=".", **options):
    """`probe api_precision_compare -npu ... -gpu ...`: profile, timestamp, thresholds, progress."""
    return _probe.api_precision_compare(
        **_paths(npu_csv_path=npu_csv_path, gpu_csv_path=gpu_csv_path, out_path=out_path, **options))


def run_overflow_check(api_info, out_path=".", **options):
    """`probe run_overflow_check -api_info dump.json`: timestamp, seed, max_api_elements."""
    return _probe.run_overflow_check(**_paths(api_info=api_info, out_path=out_path, **options))


def __getattr__(name):
    # probe.torch imports torch: only when asked for.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'probe' has no attribute %r" % name)


def register_runner(name, schema, forward, backward=None, role="bench", new_api=False):
    """Adds (or replaces) the PyTorch runner of `name` ("Functional.my_gelu", "Aten.mm.default") for role
    "bench" (float64 reference) or "device" (the side under test), used by run_ut, run_overflow_check and
    probe.torch.Dispatch started afterwards. `schema` is a PyTorch-style signature
    ("my_gelu(Tensor input, str approximate='none') -> Tensor"); forward(args) gets a dict of the bound
    arguments (tensors as read-only numpy arrays, bfloat16 widened to float32) and returns an array or
    tensor, or a list of them, optionally with the device dtypes: (outputs, ["torch.float16"]). Bench
    outputs are converted to float64. backward(args, grad_outputs) returns one gradient (or None) per
    schema parameter. A Python exception becomes that API's row with the exception's message. A name no
    built-in runner knows ("Functional.gleu") raises InvalidArgumentError naming the closest known one,
    unless new_api=True (a genuinely new operator of your own library)."""
    _probe.register_runner(name, schema, forward, backward, role, new_api)


def runners(role="bench"):
    """Sorted PyTorch API keys with a bench (or device) runner, including those registered from Python."""
    return _probe.runners(role)
