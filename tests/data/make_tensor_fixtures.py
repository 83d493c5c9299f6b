#!/usr/bin/python3
"""Generates the tensor-file fixtures in tests/data/tensors/ with real numpy and torch.

Run with Debian's interpreter (it has numpy 1.24 and torch):  /usr/bin/python3 tests/data/make_tensor_fixtures.py
Every fixture's expected content is written to tensors/expected.json, computed here by numpy/torch
(never by probe): {"file": {"tensors": {"<name>": {"dtype", "shape", "values"}}}} where values are
the flattened C-order elements (floats as JSON numbers incl. NaN/Infinity, complex as [re, im],
integers exactly). Files expected to be rejected are listed under "rejects" with the error kind.
"""
import collections
import io
import json
import os
import pickle
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent / "tensors"
expected = {}
rejects = {}


def values_of(a):
    a = np.ascontiguousarray(a)
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        return [[float(v.real), float(v.imag)] for v in flat]
    if a.dtype.kind in "iu":
        return [int(v) for v in flat]
    if a.dtype.kind == "b":
        return [int(v) for v in flat]
    return [float(v) for v in flat]


def describe_np(a, dtype_name=None):
    return {"dtype": dtype_name or str(a.dtype), "shape": list(a.shape), "values": values_of(a)}


TORCH_NAMES = {torch.bfloat16: "bfloat16"}


def describe_torch(t):
    name = str(t.dtype).replace("torch.", "")
    if t.dtype == torch.bfloat16:
        a = t.to(torch.float64).numpy()  # exact: every bfloat16 is a float64
    else:
        a = t.detach().contiguous().numpy()
    d = describe_np(a, name)
    return d


def sample(dtype, shape=(2, 3)):
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        base = [0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e-3, 65504.0 if dt.itemsize == 2 else 3.0e38,
                6e-8 if dt.itemsize == 2 else 1e-40, 100.125, -7.0]
    elif dt.kind == "c":
        base = [complex(1.5, -2.0), complex(np.nan, 1.0), complex(0.0, np.inf), 0j, complex(-3.25, 1e-3),
                complex(2.0, 2.0)]
    elif dt.kind == "b":
        base = [True, False, True, True, False, False]
    elif dt.kind == "u":
        info = np.iinfo(dt)
        base = [0, 1, int(info.max), int(info.max) - 1, 7, 200 if info.max > 255 else 100]
    else:
        info = np.iinfo(dt)
        base = [0, -1, int(info.min), int(info.max), 42, -42]
    vals = [base[i % len(base)] for i in range(n)]
    return np.array(vals, dtype=dt).reshape(shape)


NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "complex64", "complex128"]


def save_npy(name, a, version=None):
    path = OUT / name
    with open(path, "wb") as f:
        np.lib.format.write_array(f, a, version=version, allow_pickle=False)
    # numpy must read back exactly what we described
    back = np.load(path, allow_pickle=False)
    assert back.dtype == a.dtype and back.shape == a.shape
    expected[name] = {"tensors": {"": describe_np(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("="))
                                                  if a.dtype.byteorder == ">" else a)}}


def make_npy():
    for dt in NP_DTYPES:
        save_npy(f"npy_{dt}.npy", sample(dt))
    for dt in ["int16", "int64", "uint32", "float16", "float32", "float64", "complex64", "complex128"]:
        a = sample(dt).astype(np.dtype(dt).newbyteorder(">"))
        save_npy(f"npy_be_{dt}.npy", a)
    save_npy("npy_fortran_float32.npy", np.asfortranarray(sample("float32", (3, 4))))
    save_npy("npy_fortran_int64.npy", np.asfortranarray(sample("int64", (2, 3, 4))))
    save_npy("npy_fortran_complex128.npy", np.asfortranarray(sample("complex128", (2, 3))))
    save_npy("npy_fortran_be_float64.npy",
             np.asfortranarray(sample("float64", (4, 3)).astype(">f8")))
    save_npy("npy_v2_float32.npy", sample("float32"), version=(2, 0))
    save_npy("npy_v3_int32.npy", sample("int32"), version=(3, 0))
    save_npy("npy_0d_float64.npy", np.array(3.5))
    save_npy("npy_0d_bool.npy", np.array(True))
    save_npy("npy_empty_float32.npy", np.zeros((0,), np.float32))
    save_npy("npy_empty_3d_int64.npy", np.zeros((2, 0, 3), np.int64))
    # A MindSpore dump of a bfloat16 tensor: float32 values that are exactly bfloat16 (spec 1.5.1).
    bf = torch.tensor([1.0, -2.5, 3.140625, 0.0, float("inf"), float("nan")], dtype=torch.bfloat16)
    save_npy("npy_ms_bfloat16_as_float32.npy", bf.float().numpy())
    # Bool bytes other than 0/1 (numpy reads them as True).
    raw = bytearray((OUT / "npy_bool.npy").read_bytes())
    raw[-1] = 7
    (OUT / "npy_bool_nonzero_bytes.npy").write_bytes(bytes(raw))
    expected["npy_bool_nonzero_bytes.npy"] = {
        "tensors": {"": describe_np(np.load(OUT / "npy_bool_nonzero_bytes.npy").astype(bool))}}
    rejects["npy_object.npy"] = "Unsupported"
    np.save(OUT / "npy_object.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    rejects["npy_structured.npy"] = "Unsupported"
    np.save(OUT / "npy_structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))


def make_npz():
    a, b, c = sample("float32", (3, 4)), sample("int64", (5,)), sample("bool")
    np.savez(OUT / "npz_stored.npz", a=a, b=b, c=c)
    np.savez_compressed(OUT / "npz_deflated.npz", a=a, b=b, c=c)
    np.savez(OUT / "npz_single.npz", only=a)  # `probe metrics FILE.npz` takes a one-array archive bare
    for name in ["npz_stored.npz", "npz_deflated.npz"]:
        expected[name] = {"tensors": {"a": describe_np(a), "b": describe_np(b), "c": describe_np(c)}}


def torch_sample(dtype, shape=(2, 3)):
    if dtype == torch.bfloat16:
        vals = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), -float("inf"), 1e-3, 3.0e38, 1e-40, 100.5, -7.0]
        n = int(np.prod(shape))
        return torch.tensor([vals[i % len(vals)] for i in range(n)], dtype=torch.float32).to(dtype).reshape(shape)
    np_name = str(dtype).replace("torch.", "")
    return torch.from_numpy(sample(np_name, shape).copy())


PT_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def torch_save(name, obj, **kw):
    torch.save(obj, OUT / name, **kw)
    back = torch.load(OUT / name)  # round-trips in torch itself

    def flat(o, prefix=""):
        if isinstance(o, torch.Tensor):
            return {prefix: describe_torch(o)}
        out = {}
        if not isinstance(o, (dict, list, tuple)):
            return out  # numbers and strings hold no tensors
        items = o.items() if isinstance(o, dict) else enumerate(o)
        for k, v in items:
            out.update(flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    expected[name] = {"tensors": flat(back)}


def make_pt():
    for dt in PT_DTYPES:
        torch_save(f"pt_{str(dt).replace('torch.', '')}.pt", torch_sample(dt))
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 1.0
    torch_save("pt_transpose.pt", a.t())
    torch_save("pt_slice_offset.pt", a[1:, 1:3])
    b = torch.arange(20, dtype=torch.bfloat16).reshape(4, 5)
    torch_save("pt_shared_list.pt", [b, b.t(), b[2], b[1:3, ::2]])
    torch_save("pt_shared_dict.pt", collections.OrderedDict(
        [("weight", a), ("row", a[2]), ("col", a[:, 1]), ("meta", 3), ("nested", {"t": a.t(), "s": "x"})]))
    torch_save("pt_0d.pt", torch.tensor(2.5, dtype=torch.float64))
    torch_save("pt_empty.pt", torch.zeros(0, 3))
    torch_save("pt_parameter.pt", {"p": torch.nn.Parameter(torch.tensor([1.0, -1.0]))})
    torch_save("pt_protocol4.pt", (torch_sample(torch.float16, (3,)), torch_sample(torch.int32, (2, 2))),
               pickle_protocol=4)
    # The layout msprobe's dump writes (spec 1.5.2): a bare contiguous clone, saved to a path.
    torch_save("Functional.relu.0.forward.input.0.pt", a.clone().contiguous().detach())
    # Re-zipped with deflate: not what torch writes, but a valid zip the reader must inflate.
    with zipfile.ZipFile(OUT / "pt_float32.pt") as src, \
            zipfile.ZipFile(OUT / "pt_deflated.pt", "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    expected["pt_deflated.pt"] = expected["pt_float32.pt"]
    rejects["pt_legacy.pt"] = "Unsupported"
    torch.save(torch.ones(2), OUT / "pt_legacy.pt", _use_new_zipfile_serialization=False)


class FakeStorage:
    def __init__(self, cls, key, numel, data):
        self.cls, self.key, self.numel, self.data = cls, key, numel, data


class RawPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, FakeStorage):
            return ("storage", obj.cls, obj.key, "cpu", obj.numel)
        return None


def torch_global(module_name, name):
    """The object pickle will record as GLOBAL module.name. Newer torch names (torch.uint16,
    torch.UntypedStorage, _rebuild_tensor_v3) are missing from torch 1.13: stand-ins with the same
    qualified name pickle identically."""
    module = __import__(module_name, fromlist=["_"])
    if not hasattr(module, name):
        stand_in = type(name, (), {})
        stand_in.__module__, stand_in.__qualname__ = module_name, name
        setattr(module, name, stand_in)
    return getattr(module, name)


class V3Tensor:
    """Pickles like torch >= 2.3 does for uint16/32/64 (_rebuild_tensor_v3 over an UntypedStorage)."""

    def __init__(self, storage, shape, stride, dtype):
        self.storage, self.shape, self.stride, self.dtype = storage, shape, stride, dtype

    def __reduce_ex__(self, proto):
        return (torch_global("torch._utils", "_rebuild_tensor_v3"),
                (self.storage, 0, self.shape, self.stride, False, collections.OrderedDict(), self.dtype))


class Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


def write_torch_like_zip(path, obj, storages, zip64=False):
    buf = io.BytesIO()
    RawPickler(buf, protocol=2).dump(obj)
    records = [("archive/data.pkl", buf.getvalue())]
    records += [(f"archive/data/{s.key}", s.data) for s in storages]
    records += [("archive/version", b"3\n")]
    if zip64:
        write_zip64(path, records)
        return
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in records:
            z.writestr(name, data)


def write_zip64(path, records):
    """A stored zip whose central directory uses ZIP64 fields throughout (as torch's writer does for
    archives beyond 4 GiB), with 64-byte aligned data and data descriptors (flag bit 3)."""
    out = bytearray()
    central = bytearray()
    for name, data in records:
        nb = name.encode()
        crc = zlib.crc32(data)
        off = len(out)
        pad = (64 - (off + 30 + len(nb) + 4) % 64) % 64
        extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0x0808, 0, 0, 0, 0, 0, 0, len(nb), len(extra))
        out += nb + extra + data
        out += struct.pack("<IIQQ", 0x08074B50, crc, len(data), len(data))
        z64 = struct.pack("<HHQQQ", 0x0001, 24, len(data), len(data), off)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0x0808, 0, 0, 0, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(nb), len(z64), 0, 0, 0, 0, 0xFFFFFFFF)
        central += nb + z64
    cd_off = len(out)
    out += central
    z64_eocd = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(records), len(records),
                       len(central), cd_off)
    out += struct.pack("<IIQI", 0x07064B50, 0, z64_eocd, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    Path(path).write_bytes(bytes(out))


def make_crafted_pt():
    # uint16 via _rebuild_tensor_v3 (torch 1.13 cannot save uint16 itself).
    u = sample("uint16", (2, 3))
    st = FakeStorage(torch_global("torch", "UntypedStorage"), "0", u.nbytes, u.tobytes())
    write_torch_like_zip(OUT / "pt_v3_uint16.pt",
                         V3Tensor(st, (2, 3), (3, 1), torch_global("torch", "uint16")), [st])
    expected["pt_v3_uint16.pt"] = {"tensors": {"": describe_np(u)}}
    # ZIP64 directory + data descriptors, holding a transposed float64 view.
    f = np.arange(6, dtype=np.float64) / 8.0 - 0.25
    st = FakeStorage(torch.DoubleStorage, "0", 6, f.tobytes())

    class V2:
        def __reduce_ex__(self, proto):
            return (torch._utils._rebuild_tensor_v2,
                    (st, 0, (3, 2), (1, 3), False, collections.OrderedDict()))
    write_torch_like_zip(OUT / "pt_zip64.pt", V2(), [st], zip64=True)
    expected["pt_zip64.pt"] = {"tensors": {"": describe_np(f.reshape(2, 3).T)}}
    assert np.array_equal(torch.load(OUT / "pt_zip64.pt").numpy(), f.reshape(2, 3).T)
    # Malicious pickles inside an otherwise valid torch archive: must be refused before anything runs.
    write_torch_like_zip(OUT / "evil_os_system.pt", Evil(os.system, "echo probe-was-exploited"), [])
    rejects["evil_os_system.pt"] = "Security"
    write_torch_like_zip(OUT / "evil_eval.pt", [torch.ones(1).numpy().tolist(), Evil(eval, "1+1")], [])
    rejects["evil_eval.pt"] = "Security"


def main():
    OUT.mkdir(exist_ok=True)
    for p in OUT.iterdir():
        p.unlink()
    make_npy()
    make_npz()
    make_pt()
    make_crafted_pt()
    with open(OUT / "expected.json", "w") as f:
        json.dump({"files": expected, "rejects": rejects}, f, indent=0, sort_keys=True)
    total = sum(p.stat().st_size for p in OUT.iterdir())
    assert total < 3 * 1024 * 1024, total
    print(f"wrote {len(list(OUT.iterdir()))} files, {total} bytes")


if __name__ == "__main__":
    main()
