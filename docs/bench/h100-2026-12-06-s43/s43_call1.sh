#!/usr/bin/env bash
# Forty-third session, call 1 (runs there, from the repository root; carry .deps .whl):
# the library build; b=32,s=1's split-merge kernel (mask 137636136159) in the seesaw probe, twice,
# with the loop-exit line (how far apart a cluster's two splits finish) and each CTA's walk from
# start to loop exit; then v68 against FlashMLA at b=32,s=1 by both methods, 3 passes each.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s43c.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
MLA_PROBE_CMERGE_ONLY=1 MLA_PROBE_OPTS="137636136159" MLA_PROBE_SHAPES="32 1 128 4096; 32 1 128 4096" \
  MLA_PROBE_PAGES=random MLA_PROBE_LSE=1 OUT=$OUT bash scripts/device_probe.sh build >"$OUT/probe_merge.txt" 2>&1
grep -E "us/launch|SM clock|CTA starts|loop exits|walks|CTA \(0,0,0\)|steady|^pair" "$OUT/probe.txt" >>"$S"
cp "$OUT/probe.txt" "$OUT/probe_out.txt"
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
