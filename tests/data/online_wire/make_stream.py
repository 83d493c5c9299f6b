#!/usr/bin/python3
"""Writes byte streams in msprobe's online pre-check TCP framing (dump-and-compare §5.3), encoded here with
struct and zlib independently of probe, for tests/online/OnlineWireTest.cpp and the OnlineWire fuzzer seeds.

  client_crc.bin    three messages with the CRC field: relu.frame (seq 0, rank 3, step 7), b"abc" (seq 1,
                    rank 3, step 7), b"STOP_" (seq 2, rank 3, step 8)
  client_nocrc.bin  the same messages without the CRC field
  acks.bin          OK___ for seq 0, ERROR for seq 1, BUSY_ for seq 1, OVER_ for seq 2, then msprobe's KILL_
                    broadcast (seq 100000000, rank 0, step 0)

Run: /usr/bin/python3 tests/data/online_wire/make_stream.py   (writes next to this script)
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
RELU = open(os.path.join(HERE, "..", "precheck_frame", "relu.frame"), "rb").read()
MESSAGES = [(0, 3, 7, RELU), (1, 3, 7, b"abc"), (2, 3, 8, b"STOP_")]
ACKS = [(b"OK___", 0, 3, 7), (b"ERROR", 1, 3, 7), (b"BUSY_", 1, 3, 7), (b"OVER_", 2, 3, 8),
        (b"KILL_", 100000000, 0, 0)]


def message(seq, rank, step, payload, crc):
    head = struct.pack(">QQQQ", len(payload), seq, rank, step)
    if crc:
        head += b"%08x" % (zlib.crc32(payload) & 0xffffffff)
    return head + payload


for name, crc in (("client_crc.bin", True), ("client_nocrc.bin", False)):
    with open(os.path.join(HERE, name), "wb") as f:
        for m in MESSAGES:
            f.write(message(*m, crc))
with open(os.path.join(HERE, "acks.bin"), "wb") as f:
    for code, seq, rank, step in ACKS:
        f.write(code + struct.pack(">QQQ", seq, rank, step))
