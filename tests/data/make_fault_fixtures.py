"""Fault-injection fixtures for tests/run_ut/FaultInjectionTest.cpp (issue 14), made with real torch.

  faults/pt_inflate_bomb.pt   torch.save of a 12-element float32 tensor whose storage record data/0 was
                              re-written deflated and padded to 64 MiB of zeros: the pickle still says 12
                              elements (48 bytes), the zip directory says 64 MiB. A reader that trusts
                              the directory inflates 64 MiB for 48 useful bytes.
  faults/pt_ok_deflated.pt    the same tensor with data/0 deflated but not padded (must still load).

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
    # Both must be what torch itself reads: the tensor, unchanged.
    assert torch.equal(torch.load(os.path.join(OUT, "pt_ok_deflated.pt")), t)


if __name__ == "__main__":
    main()
