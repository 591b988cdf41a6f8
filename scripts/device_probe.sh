#!/usr/bin/env bash
# device_probe.sh - runs THERE after `scripts/device_run.sh build`: builds the seesaw timeline probe
# (scripts/probe/v3_trace.cu: the CTA with its trace points, one kernel per schedule-option mask)
# and the TMA page probe (scripts/probe/tma_bw.cu) against the built library and runs them.
# Usage: bash scripts/device_probe.sh [build dir]; MLA_PROBE_OPTS="0 1 2 4 8 7 31 63" picks the option
# masks (0 = flash_mla_v3, 63 = flash_mla_v5); writes both probes' output to $OUT/probe.txt.
set -uo pipefail
B=${1:-build}
OUT=${OUT:-/tmp/out}
OPTS=${MLA_PROBE_OPTS:-0 1 2 4 8 7 31 63}
mkdir -p "$OUT"
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
NV=(nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc
    -Isrc/kernels/common -Isrc/runtime)
"${NV[@]}" scripts/probe/v3_trace.cu "$B/libmla_var3.a" -lcuda -o /tmp/v3_probe >"$OUT/probe_build.log" 2>&1 &&
  "${NV[@]}" scripts/probe/tma_bw.cu "$B/libmla_var3.a" -lcuda -o /tmp/tma_bw >>"$OUT/probe_build.log" 2>&1 ||
  { echo "probe build failed"; tail -20 "$OUT/probe_build.log"; exit 1; }
{
  timeout 120 /tmp/tma_bw
  for shape in "32 16 128 4096" "32 1 128 4096" "128 1 16 8192"; do
    for o in $OPTS; do timeout 60 /tmp/v3_probe $shape "$o"; done
  done
} >"$OUT/probe.txt" 2>&1
sed -n '/TMA page probe/,/^DRAM  132    3/p' "$OUT/probe.txt"
grep "steady\|us/launch" "$OUT/probe.txt"
