#!/usr/bin/env bash
# Forty-fifth session, call 1 (runs there, from the repository root; carry .deps .whl): only on an
# H200, the card of ANCHORS.md. Short first, because device time is short after failed starts:
# the build; b=32,s=1 v99 against v68 by the graph method alternated v99, v68, v68, v99 (2 passes
# each, FlashMLA in the same process); then the four rows whose kernels differ between v99 and v68
# (b=32,s=1; b=64,s=1; h=16 at t=4096 and 8192) by flush then graph; then, while MLA_S45_DEADLINE
# allows, v99 on all 15 rows by flush (ANCHORS.md's method). On another card it names it and stops.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s45c1.txt
T0=$(date +%s)
DL=${MLA_S45_DEADLINE:-540}
say() { echo "$@" | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | tee "$S"
grep -q H200 "$S" || { echo "not an H200: stopped"; exit 0; }
MLA_DEVICE_BUDGET=120 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" | tee -a "$S"
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
ab() {  # version mode passes rows
  local t=$(date +%s)
  PYTHONPATH=/tmp/site timeout 100 python3 scripts/flashmla_same_call.py --version flash_mla_v$1 --modes $2 \
    --passes $3 --cool-ms 500 --only "$4" >>"$OUT/ab_$2_v$1.txt" 2>&1
  say "== v$1 $2 ($3 passes, $(( $(date +%s) - t )) s): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/ab_$2_v$1.txt" | tail -n "$(echo "$4" | tr ';' '\n' | wc -l)" | cut -d'|' -f2-11 | tee -a "$S"
}
for v in 99 68 68 99; do ab $v graph 2 "32,128,4096,1"; done
ROWS="32,128,4096,1;64,128,4096,1;128,16,4096,1;128,16,8192,1"
ab 99 flush 2 "$ROWS"
ab 99 graph 2 "$ROWS"
left=$(( DL - ($(date +%s) - T0) )); lim=$(( left < 280 ? left : 280 ))
if (( lim > 30 )); then
  PYTHONPATH=/tmp/site timeout $lim python3 scripts/flashmla_same_call.py --version flash_mla_v99 --modes flush \
    --passes 2 --cool-ms 500 >"$OUT/ab_all15_flush_v99.txt" 2>&1
  say "== all 15 rows, flush, v99 (rc=$?, $(( $(date +%s) - T0 )) s in): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/ab_all15_flush_v99.txt" | cut -d'|' -f2-11 | tee -a "$S"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | tee -a "$S"
say "wall $(( $(date +%s) - T0 )) s"
cd "$OUT" && tar czf extra1.tgz ab_*.txt 2>/dev/null; rm -f ab_*.txt build.log bench.txt logs.tgz
