"""Shared fixtures: the CLI and the test data directory, given by CTest (never skipped when absent)."""
import os
import pathlib

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("PROBE_CLI_PATH")
    assert path and os.access(path, os.X_OK), "PROBE_CLI_PATH must name the built probe CLI"
    return path


@pytest.fixture(scope="session")
def data_dir():
    path = os.environ.get("PROBE_TEST_DATA_DIR")
    assert path and os.path.isdir(path), "PROBE_TEST_DATA_DIR must name tests/data"
    return pathlib.Path(path)


def slow_dump(path, count=8, n=1024):
    """A statistics dump of `count` float32 matmuls of n x n: run_ut generates the inputs and spends about
    0.2 s per API in the float64 GEMM."""
    import json

    def t(shape):
        return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": shape, "Max": 1.0, "Min": -1.0,
                "Mean": 0.0, "Norm": 10.0, "requires_grad": False}

    data = {"Torch.matmul.%d.forward" % i: {"input_args": [t([n, n]), t([n, n])], "input_kwargs": {},
                                            "output": [t([n, n])]} for i in range(count)}
    path.write_text(json.dumps({"task": "statistics", "level": "L1", "framework": "pytorch",
                                "dump_data_dir": None, "data": data}))
    return path
