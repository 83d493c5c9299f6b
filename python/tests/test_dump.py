"""probe.Dump: entries and numpy views of the dump's tensor files."""
import gc

import numpy as np
import torch

import probe


def test_dump_tensors_are_views_of_the_files(data_dir):
    root = data_dir / "run_ut" / "pt_fp16_fwdbwd"
    dump = probe.Dump(root / "dump.json")
    assert dump.task == "tensor" and dump.framework == "pytorch"
    keys = dump.keys()
    assert keys[0] == "Functional.layer_norm.0.forward"
    entry = dump.entry(keys[0])
    assert entry["api"] == "layer_norm" and entry["direction"] == "forward"
    info = entry["tensors"][0]
    assert info["field"] == "input_args.0" and info["shape"] == (2, 4, 16) and info["dtype"] == "torch.float16"
    a = dump.load(keys[0], "input_args.0")
    expected = torch.load(root / "dump_tensor_data" / info["data_name"]).numpy()
    assert a.dtype == np.float16 and a.shape == (2, 4, 16)
    assert np.array_equal(a, expected)
    assert not a.flags.writeable and not a.flags.owndata
    assert float(a.max()) == info["max"]
    # The array keeps its storage alive after the dump is gone.
    del dump
    gc.collect()
    assert np.array_equal(a, expected)
