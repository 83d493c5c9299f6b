"""probe.metrics / probe.judge on numpy arrays and torch tensors: read in place, equal to the CLI."""
import json
import subprocess

import numpy as np
import pytest
import torch

import probe
from probe import _probe


def test_numpy_contiguous_is_read_in_place():
    a = np.arange(1000, dtype=np.float32)
    address, copied = _probe.tensor_address(a)
    assert address == a.ctypes.data and not copied
    view = a[10:500]  # an offset view is still contiguous
    assert _probe.tensor_address(view) == (view.ctypes.data, False)
    f16 = np.ones((4, 5), dtype=np.float16)
    assert _probe.tensor_address(f16) == (f16.ctypes.data, False)


def test_strided_arrays_are_gathered_once():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    assert _probe.tensor_address(a[:, ::2])[1]
    assert _probe.tensor_address(a.T)[1]
    # The gathered copy holds the strided elements in row-major order.
    bench = a.T.copy()
    assert probe.metrics(bench, a.T.astype(np.float32), "relu").values["max_abs_err"] == 0.0
    m = probe.metrics(a[:, ::-2], np.ascontiguousarray(a[:, ::-2]).astype(np.float32), "relu")
    assert m.copied and m.values["max_abs_err"] == 0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_torch_tensors_are_read_in_place(dtype):
    t = torch.linspace(-3, 3, 257).to(dtype)
    assert _probe.tensor_address(t) == (t.data_ptr(), False)
    assert _probe.tensor_address(t[1:])[0] == t[1:].data_ptr()
    assert _probe.tensor_address(t.reshape(1, 257).t())[1] is False  # size-1 dims do not break contiguity
    assert _probe.tensor_address(t[::2])[1]


def cli_metrics(cli, tmp_path, bench, device, args):
    paths = []
    for name, x in (("bench", bench), ("device", device)):
        if isinstance(x, torch.Tensor):
            p = tmp_path / (name + ".pt")
            torch.save(x, p)
        else:
            p = tmp_path / (name + ".npy")
            np.save(p, x)
        paths.append(str(p))
    out = subprocess.run([cli, "metrics", *paths, "--json", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def pairs():
    rng = np.random.default_rng(35)
    b = rng.standard_normal(4097)
    yield "float32", b, (b * (1 + 1e-6 * rng.standard_normal(b.size))).astype(np.float32)
    yield "float16", b, b.astype(np.float16)
    faulty = b.astype(np.float32)
    faulty[123] += 0.5
    yield "fault", b, faulty
    yield "bfloat16", torch.from_numpy(b), torch.from_numpy(b).to(torch.bfloat16)
    tiny = rng.standard_normal((16, 33)) * 1e-7
    yield "small", tiny, tiny.astype(np.float16)


@pytest.mark.parametrize("case", list(pairs()), ids=lambda c: c[0])
@pytest.mark.parametrize("api,profile", [(None, "probe"), ("relu", "probe"), ("matmul", "probe"),
                                         ("gelu", "msprobe"), ("__matmul__", "msprobe"), (None, "msprobe")])
def test_metrics_equal_the_cli(cli, tmp_path, case, api, profile):
    _, bench, device = case
    args = ["--profile", profile] + (["--api", api] if api else [])
    expected = cli_metrics(cli, tmp_path, bench, device, args)
    m = probe.metrics(bench, device, api, profile=profile)
    assert m.cells == expected
    assert m.status == expected["status"]


def test_metric_values_follow_numpy():
    rng = np.random.default_rng(7)
    b = rng.standard_normal(10000)
    d = (b + 1e-4 * rng.standard_normal(b.size)).astype(np.float32)
    m = probe.metrics(b, d, "relu")
    err = np.abs(d.astype(np.float64) - b)
    assert m.values["max_abs_err"] == err.max()
    assert m.values["count"] == b.size
    rel = err / np.maximum(np.abs(b), np.finfo(np.float64).eps)
    assert m.values["thousandth"] == pytest.approx(np.mean(rel < 0.001), abs=0)
    cos = np.dot(b, d.astype(np.float64)) / np.linalg.norm(b) / np.linalg.norm(d.astype(np.float64))
    assert m.values["cosine"] == pytest.approx(cos, rel=1e-15)


def test_judge_names_the_worst_element_and_its_criteria():
    b = np.linspace(-2, 2, 1000)
    d = b.astype(np.float32)
    d[417] += 0.25
    v = probe.judge(b, d, "relu", rule="run_ut")
    assert v.status == "error" and v.method == "old rule"
    assert v.worst[0]["index"] == 417
    assert v.worst[0]["device"] == float(d[417])
    names = [c["name"] for c in v.criteria]
    assert names[0] == "cosine"
    assert any(not c["passed"] for c in v.criteria)
    e = probe.judge(b, d, "relu", rule="error_bound")
    assert e.method == "error bound" and e.status != "pass" and e.worst[0]["coords"] == [417]
    clean = probe.judge(b, b.astype(np.float32), "relu", rule="error_bound")
    assert clean.passed and clean.worst[0]["abs_err"] <= clean.worst[0]["bound"]


def test_judge_bfloat16_via_torch():
    b = torch.linspace(-4, 4, 999, dtype=torch.float64)
    d = b.to(torch.bfloat16)
    assert probe.judge(b, d, "relu", rule="error_bound").passed
    d[5] = 100
    v = probe.judge(b, d, "relu", rule="error_bound")
    assert v.status == "error" and v.worst[0]["index"] == 5


def test_judge_exact_scalars_drops_the_rounding_term_of_python_numbers():
    # mul in bfloat16 (u = 2^-8) of a bench 1: a device 2 u away is within the bound that allows for a
    # Python number rounded to bfloat16 (two roundings of |b|), beyond the one for an exact number.
    b = torch.ones(1, dtype=torch.float64)
    d = torch.tensor([1.0078125], dtype=torch.bfloat16)
    assert probe.judge(b, d, "mul", rule="error_bound").passed
    assert probe.judge(b, d, "mul", rule="error_bound", exact_scalars=True).status == "error"


def test_errors_carry_kind_and_context(tmp_path):
    with pytest.raises(probe.IoError) as e:
        probe.Dump(tmp_path / "missing.json")
    assert e.value.file == str(tmp_path / "missing.json") and e.value.exit_code == 3
    assert isinstance(e.value, probe.Error) and isinstance(e.value, OSError)
    with pytest.raises(probe.InvalidArgumentError) as e:
        probe.judge(np.ones(3), np.ones(3), rule="nonsense")
    assert e.value.field == "rule"
    # Different shapes are a verdict, as in the CLI, not an exception.
    assert probe.metrics(np.ones(3), np.ones(4)).status == "error"
    bad = tmp_path / "dump.json"
    bad.write_text('{"task": "tensor", "data": {')
    with pytest.raises(probe.FormatError) as e:
        probe.Dump(bad)
    assert e.value.file == str(bad)
    with pytest.raises(probe.InvalidArgumentError) as e:
        probe.metrics([1.0, 2.0], np.ones(2))
    assert e.value.field == "bench"
