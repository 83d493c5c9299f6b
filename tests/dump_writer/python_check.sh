#!/bin/sh
# CTest dump_writer.python_torch_load: the dump_writer test executable writes PyTorch and MindSpore dumps into
# OUT_DIR, then Debian's Python reads them with json + torch.load / numpy.load (exit 77 = skipped when
# /usr/bin/python3 or its torch is missing). Usage: python_check.sh TEST_EXE CHECK_SCRIPT OUT_DIR
set -e
exe=$1 script=$2 out=$3
[ -x /usr/bin/python3 ] || { echo "skipped: no /usr/bin/python3"; exit 77; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "skipped: /usr/bin/python3 has no torch"; exit 77; }
rm -rf "$out"
PROBE_DUMP_WRITER_PYTHON_DIR="$out" "$exe" --gtest_filter='DumpWriterPython.*'
exec /usr/bin/python3 "$script" "$out"
