#!/usr/bin/env bash
# Forty-fourth session, call 2 (runs there, from the repository root; carry .deps .whl): flash_mla_v99
# against FlashMLA in one process on the 15 ANCHORS.md rows, flush method (ANCHORS.md's) then graph
# method (MLA_SPEC.md's), 2 passes each. Builds first if the machine is fresh.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s44c2.txt
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | tee "$S"
[ -x build/mla_var3 ] || { MLA_DEVICE_BUDGET=120 bash scripts/device_run.sh build >/dev/null 2>&1; grep -E "^build" "$OUT/summary.txt" | tee -a "$S"; }
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
[ -d /tmp/site/flash_mla ] || python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
for m in flush graph; do
  left=$(( 585 - ($(date +%s) - T0) )); lim=$(( left < 280 ? left : 280 ))
  PYTHONPATH=/tmp/site timeout $lim python3 scripts/flashmla_same_call.py --version flash_mla_v99 --modes $m \
    --passes 2 --cool-ms 500 >"$OUT/ab_${m}_v99.txt" 2>&1
  echo "== $m method, v99 (rc=$?, $(( $(date +%s) - T0 )) s in): b h t s | ours median first10 last10 | FlashMLA median first10 last10" | tee -a "$S"
  grep -E "^\| [0-9]" "$OUT/ab_${m}_v99.txt" | cut -d'|' -f2-11 | tee -a "$S"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | tee -a "$S"
cd "$OUT" && tar czf extra2.tgz ab_*.txt 2>/dev/null; rm -f ab_*.txt build.log bench.txt ctest.log logs.tgz
