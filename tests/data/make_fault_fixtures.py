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

Run with Debian's /usr/bin/python3 (python3-torch).
"""
import os
import zipfile

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
    # Both must be what torch itself reads: the tensor, unchanged.
    assert torch.equal(torch.load(os.path.join(OUT, "pt_ok_deflated.pt")), t)


if __name__ == "__main__":
    main()
