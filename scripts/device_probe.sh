#!/usr/bin/env bash
# device_probe.sh - runs THERE after `scripts/device_run.sh build`: builds scripts/probe/v3_trace.cu
# (flash_mla_v3 with its timeline trace points) against the built library and runs it on a few
# shapes. Usage: bash scripts/device_probe.sh [build dir]; writes $OUT/probe.txt.
set -uo pipefail
B=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc \
  -Isrc/kernels/common -Isrc/runtime scripts/probe/v3_trace.cu "$B/libmla_var3.a" -o /tmp/v3_probe \
  >"$OUT/probe_build.log" 2>&1 || { echo "probe build failed"; tail -20 "$OUT/probe_build.log"; exit 1; }
{
  timeout 60 /tmp/v3_probe 32 16 128 4096
  timeout 60 /tmp/v3_probe 128 1 16 8192
  timeout 60 /tmp/v3_probe 32 1 128 4096
} 2>&1 | tee "$OUT/probe.txt"
