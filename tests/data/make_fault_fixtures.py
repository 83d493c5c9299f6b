"""Fault-injection fixtures for tests/run_ut/FaultInjectionTest.cpp (issue 14), made with real torch.

  faults/pt_inflate_bomb.pt   torch.save of a 12-element float32 tensor whose storage record data/0 was
                              re-written deflated and padded to 64 MiB of zeros: the pickle still says 12
                              elements (48 bytes), the zip directory says 64 MiB. A reader that trusts
                              the directory inflates 64 MiB for 48 useful bytes.
  faults/pt_ok_deflated.pt    the same tensor with data/0 deflated but not padded (must still load).
  faults/pt_garbled_deflated.pt  torch.save of torch.zeros(2**22) (16 MiB of float32) with data/0 deflated
                              (a few KB) and then 64 bytes in the middle of its compressed stream set to
                              0xFF: the directory and the pickle are intact, the data cannot be inflated.
                              Reading only the header must succeed; loading must fail (zipfile fails on it).

  faults/pt_pickle_ops.pt     torch.save of a 12-element tensor whose data.pkl was replaced by a pickle of
                              a list of 4M None (4 MiB of NONE opcodes, deflated to a few KB): far beyond
                              the pickle operation and object limits, refused before unpickling.
  faults/pt_pickle_large.pt   the same with a data.pkl of 17 MiB of NONE opcodes: above the 16 MiB limit
                              on data.pkl, refused from the zip directory before inflating.
  faults/npz_inflate_bomb.npz np.savez_compressed of a (3, 4) float32 member `a` whose a.npy was padded to
                              64 MiB of zeros after its data: the header says 128 + 48 bytes, the zip
                              directory 64 MiB. numpy reads the 48 bytes; probe refuses before inflating.
  faults/pt_expanded.pt       torch.save(torch.zeros(1).expand(16384, 16384)): a 2^28-element view (stride
                              0) over a one-element storage, a few hundred bytes on disk.
  faults/pt_expanded_2e42.pt  the same expanded to (2^21, 2^21): 2^42 elements, no plausible tensor.

Run with Debian's /usr/bin/python3 (python3-torch).
"""
import io
import os
import zipfile

import numpy as np

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "faults")


def rewrite(src, dst, pad_to):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/data/0"):
                data = data + bytes(max(0, pad_to - len(data)))
                zout.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
            else:
                zout.writestr(info, data)


def fixed_info(name):
    # A fixed timestamp keeps the fixture's bytes the same from run to run.
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def replace_pickle(src, dst, pickle_bytes):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = pickle_bytes if info.filename.endswith("/data.pkl") else zin.read(info.filename)
            out = fixed_info(info.filename)
            if not info.filename.endswith("/data.pkl"):
                out.compress_type = zipfile.ZIP_STORED
            zout.writestr(out, data, compresslevel=9)
    with zipfile.ZipFile(dst) as z:  # within probe's inflate ratio bound (1032:1), so only the new limits act
        for i in z.infolist():
            assert i.file_size <= i.compress_size * 1032 + 1024, (dst, i.file_size, i.compress_size)


def make_issue31_fixtures(t):
    plain = os.path.join(OUT, "plain31.tmp.pt")
    torch.save(t, plain)
    # PROTO 2, EMPTY_LIST, MARK, n x NONE, APPENDS, STOP
    def none_list(n):
        return b"\x80\x02](" + b"N" * n + b"e."
    replace_pickle(plain, os.path.join(OUT, "pt_pickle_ops.pt"), none_list(4 << 20))
    replace_pickle(plain, os.path.join(OUT, "pt_pickle_large.pt"), none_list(17 << 20))
    os.remove(plain)
    for name, n in [("pt_pickle_ops.pt", 4 << 20), ("pt_pickle_large.pt", 17 << 20)]:
        with zipfile.ZipFile(os.path.join(OUT, name)) as z:  # Python's own pickle reads the list
            pkl = next(i for i in z.namelist() if i.endswith("/data.pkl"))
            assert len(__import__("pickle").loads(z.read(pkl))) == n

    buf = io.BytesIO()
    np.save(buf, (np.arange(12, dtype=np.float32) / 8).reshape(3, 4))
    npy = buf.getvalue()
    assert len(npy) == 128 + 48
    bomb = os.path.join(OUT, "npz_inflate_bomb.npz")
    with zipfile.ZipFile(bomb, "w") as z:
        z.writestr(fixed_info("a.npy"), npy + bytes((64 << 20) - len(npy)), compresslevel=9)
    a = np.load(bomb)["a"]  # numpy reads what the header declares and ignores the rest
    assert a.shape == (3, 4) and a.dtype == np.float32

    torch.save(torch.zeros(1).expand(16384, 16384), os.path.join(OUT, "pt_expanded.pt"))
    torch.save(torch.zeros(1).expand(1 << 21, 1 << 21), os.path.join(OUT, "pt_expanded_2e42.pt"))
    e = torch.load(os.path.join(OUT, "pt_expanded.pt"))
    assert e.shape == (16384, 16384) and e.stride() == (0, 0)


def main():
    os.makedirs(OUT, exist_ok=True)
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 8
    plain = os.path.join(OUT, "plain.tmp.pt")
    torch.save(t, plain)
    rewrite(plain, os.path.join(OUT, "pt_inflate_bomb.pt"), 64 << 20)
    rewrite(plain, os.path.join(OUT, "pt_ok_deflated.pt"), 0)
    os.remove(plain)

    big = os.path.join(OUT, "big.tmp.pt")
    torch.save(torch.zeros(1 << 22, dtype=torch.float32), big)
    garbled = os.path.join(OUT, "pt_garbled_deflated.pt")
    rewrite(big, garbled, 0)
    os.remove(big)
    with zipfile.ZipFile(garbled) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("/data/0"))
    with open(garbled, "r+b") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
        f.seek(info.header_offset + 30 + name_len + extra_len + info.compress_size // 2)
        f.write(bytes([0xFF]) * 64)
    try:  # Python's zip reader checks the stream and its CRC-32 (torch's own reader may not)
        with zipfile.ZipFile(garbled) as z:
            z.read(info.filename)
    except Exception:
        pass
    else:
        raise SystemExit("pt_garbled_deflated.pt still inflates")
    with zipfile.ZipFile(garbled) as z:  # the directory itself is intact
        assert [i.file_size for i in z.infolist() if i.filename.endswith("/data/0")] == [4 << 22]
    make_issue31_fixtures(t)
    # Both must be what torch itself reads: the tensor, unchanged.
    assert torch.equal(torch.load(os.path.join(OUT, "pt_ok_deflated.pt")), t)


if __name__ == "__main__":
    main()
