#!/usr/bin/env bash
# Forty-fourth session, call 2 (runs there, from the repository root; carry .deps .whl): flash_mla_v99
# against FlashMLA in one process on the 15 ANCHORS.md rows, flush method (ANCHORS.md's) then graph
# method (MLA_SPEC.md's), 2 passes each, after b=32,s=1 alone, v99 against v68 alternated (first: the
# device time left may be short). Builds first if the machine is fresh. On any other card
# (ANCHORS.md's figures are the H200's): v97 (early Q and pages in the pair's static grid too)
# against v99 on the pair's rows s=2,4,8,16,32 at b=32, graph alternated v97, v99, v99, v97, then
# flush v99, v97, 2 passes each.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s44c2.txt
T0=$(date +%s)
DL=${MLA_S44_DEADLINE:-585}  # seconds this script may use in all (the device time left may be less)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | tee "$S"
[ -x build/mla_var3 ] || { MLA_DEVICE_BUDGET=120 bash scripts/device_run.sh build >/dev/null 2>&1; grep -E "^build" "$OUT/summary.txt" | tee -a "$S"; }
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
[ -d /tmp/site/flash_mla ] || python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
if ! grep -q H200 "$S"; then
  ROWS="32,128,4096,2;32,128,4096,4;32,128,4096,8;32,128,4096,16;32,128,4096,32"
  ab() {  # version mode
    local t=$(date +%s)
    PYTHONPATH=/tmp/site timeout 100 python3 scripts/flashmla_same_call.py --version flash_mla_v$1 --modes $2 \
      --passes 2 --cool-ms 500 --only "$ROWS" >>"$OUT/ab_$2_v$1.txt" 2>&1
    echo "== v$1 $2 (2 passes, $(( $(date +%s) - t )) s): b h t s | ours median first10 last10 | FlashMLA median first10 last10" | tee -a "$S"
    grep -E "^\| [0-9]" "$OUT/ab_$2_v$1.txt" | tail -n 5 | cut -d'|' -f2-11 | tee -a "$S"
  }
  for v in 97 99 99 97; do ab $v graph; done
  for v in 99 97; do ab $v flush; done
else
  # first b=32,s=1 alone, v99 against v68 alternated (graph v99, v68, v68, v99; flush v68, v99), 2 passes each
  for vm in "99 graph" "68 graph" "68 graph" "99 graph" "68 flush" "99 flush"; do
    set -- $vm; (( $(date +%s) - T0 > DL / 2 )) && break
    PYTHONPATH=/tmp/site timeout 40 python3 scripts/flashmla_same_call.py --version flash_mla_v$1 --modes $2 \
      --passes 2 --cool-ms 500 --only "32,128,4096,1" >>"$OUT/ab_b32s1_$2_v$1.txt" 2>&1
    echo "== b32s1 v$1 $2: $(grep -E "^\| [0-9]" "$OUT/ab_b32s1_$2_v$1.txt" | tail -n 1 | cut -d'|' -f2-11)" | tee -a "$S"
  done
  for m in flush graph; do
    left=$(( DL - ($(date +%s) - T0) )); lim=$(( left < 280 ? left : 280 ))
    PYTHONPATH=/tmp/site timeout $lim python3 scripts/flashmla_same_call.py --version flash_mla_v99 --modes $m \
      --passes 2 --cool-ms 500 2>&1 | tee "$OUT/ab_${m}_v99.txt" | grep -E "^row|^  pass" | cut -c1-120
    echo "== $m method, v99 (rc=$?, $(( $(date +%s) - T0 )) s in): b h t s | ours median first10 last10 | FlashMLA median first10 last10" | tee -a "$S"
    grep -E "^\| [0-9]" "$OUT/ab_${m}_v99.txt" | cut -d'|' -f2-11 | tee -a "$S"
  done
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | tee -a "$S"
cd "$OUT" && tar czf extra2.tgz ab_*.txt 2>/dev/null; rm -f ab_*.txt build.log bench.txt ctest.log logs.tgz
