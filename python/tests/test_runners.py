"""probe.register_runner: Python bench and device runners used by run_ut; a Python exception becomes the
API's row with its message."""
import csv
import json
import math
import shutil

import numpy as np

import probe

TS = "20260101000000"


def gelu_dump(data_dir, tmp_path, name):
    """pt_fp16_fwdbwd's gelu forward and backward under the API name `name`, with its tensor files."""
    src = data_dir / "run_ut" / "pt_fp16_fwdbwd"
    d = json.loads((src / "dump.json").read_text())
    d["data"] = {k.replace("Functional.gelu.", "Functional.%s." % name): v for k, v in d["data"].items()
                 if k.startswith("Functional.gelu.")}
    out = tmp_path / name
    out.mkdir()
    shutil.copytree(src / "dump_tensor_data", out / "dump_tensor_data")
    (out / "dump.json").write_text(json.dumps(d))
    return out / "dump.json"


def result_row(summary):
    with open(summary["result_csv"], newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    return rows[0]


erf = np.vectorize(math.erf)


def gelu64(args):
    x = args["input"].astype(np.float64)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu64_backward(args, grads):
    x = args["input"].astype(np.float64)
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return [grads[0] * (cdf + x * pdf), None]


def test_a_python_bench_runner_judges_the_dump(data_dir, tmp_path):
    probe.register_runner("Functional.pygelu", "pygelu(Tensor input, str approximate='none') -> Tensor", gelu64,
                          gelu64_backward)
    assert "Functional.pygelu" in probe.runners()
    summary = probe.run_ut(gelu_dump(data_dir, tmp_path, "pygelu"), tmp_path / "out", timestamp=TS, threads=2)
    row = result_row(summary)
    assert row["API name"] == "Functional.pygelu.0"
    assert (row["Forward Test Success"], row["Backward Test Success"]) == ("pass", "pass")


def test_a_wrong_python_bench_runner_fails_the_api(data_dir, tmp_path):
    probe.register_runner("Functional.badgelu", "badgelu(Tensor input, str approximate='none') -> Tensor",
                          lambda args: 2 * gelu64(args))
    summary = probe.run_ut(gelu_dump(data_dir, tmp_path, "badgelu"), tmp_path / "out", timestamp=TS)
    assert result_row(summary)["Forward Test Success"] == "error"


def test_a_python_exception_becomes_the_apis_row(data_dir, tmp_path):
    def boom(args):
        raise ValueError("no gelu today")

    probe.register_runner("Functional.boomgelu", "boomgelu(Tensor input, str approximate='none') -> Tensor", gelu64)
    probe.register_runner("Functional.boomgelu", "boomgelu(Tensor input, str approximate='none') -> Tensor", boom,
                          role="device")
    assert "Functional.boomgelu" in probe.runners("device")
    summary = probe.run_ut(gelu_dump(data_dir, tmp_path, "boomgelu"), tmp_path / "out", timestamp=TS,
                           device_runner="emulated")
    row = result_row(summary)
    assert row["Forward Test Success"] == "error"
    assert "ValueError: no gelu today" in row["Message"]


def test_a_bad_schema_is_an_invalid_argument():
    try:
        probe.register_runner("Functional.x", "x(Tensor input", gelu64)
    except probe.InvalidArgumentError as e:
        assert "x(Tensor input" in str(e)
    else:
        raise AssertionError("a schema that does not parse must raise")
