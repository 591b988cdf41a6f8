#!/usr/bin/env bash
# Forty-third session, call 2 (runs there, from the repository root; carry .deps .whl):
# the library build; b=32,s=1's split-merge kernel (mask 137636136159) in the seesaw probe, random
# pages twice and pages in order once, each CTA's start, first S, loop exit and end dumped
# (MLA_PROBE_DUMP); then v68 against FlashMLA at b=32,s=1 by both methods, 3 passes each.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s43c.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
MLA_PROBE_DUMP=1 MLA_PROBE_CMERGE_ONLY=1 MLA_PROBE_OPTS="137636136159" MLA_PROBE_SHAPES="32 1 128 4096; 32 1 128 4096" \
  MLA_PROBE_PAGES=random MLA_PROBE_LSE=1 OUT=$OUT bash scripts/device_probe.sh build >"$OUT/probe_merge.txt" 2>&1
echo "== random pages" >>"$S"
grep -E "us/launch|SM clock|CTA starts|loop exits|walks|first S done|mean loop exit|CTA \(0,0,0\)|steady" "$OUT/probe.txt" >>"$S"
cp "$OUT/probe.txt" "$OUT/probe_out.txt"
echo "== pages in order" >>"$S"
MLA_PROBE_DUMP=1 MLA_PROBE_LSE=1 timeout 60 /tmp/v3_probe 32 1 128 4096 137636136159 >"$OUT/probe_seq.txt" 2>&1
grep -E "us/launch|SM clock|CTA starts|loop exits|walks|first S done|mean loop exit|CTA \(0,0,0\)|steady" "$OUT/probe_seq.txt" >>"$S"
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
for m in graph flush; do
  PYTHONPATH=/tmp/site timeout 120 python3 scripts/flashmla_same_call.py --version flash_mla_v68 --modes $m \
    --passes 3 --cool-ms 500 --only "32,128,4096,1" >"$OUT/ab_${m}_b32s1.txt" 2>&1
  echo "== $m method, v68 (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_${m}_b32s1.txt" | cut -d'|' -f2-11 >>"$S"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$S" 2>&1
cd "$OUT" && tar czf extra1.tgz ab_*.txt probe*.txt 2>/dev/null; rm -f ab_*.txt probe*.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
