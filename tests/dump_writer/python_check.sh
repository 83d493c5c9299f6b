#!/bin/sh
# CTest dump_writer.python_torch_load: the dump_writer test executable writes PyTorch and MindSpore dumps into
# OUT_DIR, then Debian's Python reads them with json + torch.load / numpy.load. tools/bootstrap.sh installs
# python3-torch for every test mode, so a missing interpreter or torch fails the test, as in tests/io.
# Usage: python_check.sh TEST_EXE CHECK_SCRIPT OUT_DIR
set -e
exe=$1 script=$2 out=$3
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3 (tools/bootstrap.sh test installs it)"; exit 1; }
/usr/bin/python3 -c 'import torch' || { echo "/usr/bin/python3 has no torch (python3-torch)"; exit 1; }
rm -rf "$out"
PROBE_DUMP_WRITER_PYTHON_DIR="$out" "$exe" --gtest_filter='DumpWriterPython.*'
exec /usr/bin/python3 "$script" "$out"
