#!/usr/bin/env bash
# Runs probe's main job on the example dump shipped in examples/. Usage: run_example.sh PATH/TO/probe
set -euo pipefail
probe=${1:?usage: run_example.sh PATH/TO/probe}
here=$(cd "$(dirname "$0")" && pwd)
"$probe" info "$here/dump"
