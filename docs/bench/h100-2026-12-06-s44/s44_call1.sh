#!/usr/bin/env bash
# Forty-fourth session, call 1 (runs there, from the repository root; carry .deps .whl): the build,
# flash_mla_v99 checked (test_kernels small grid at splits=2), then v99 against v68 on the four rows
# whose kernels differ, each beside FlashMLA in one process: graph method alternated v99, v68, v68,
# v99 (2 passes each), flush v68, v99; then the ctest suite with v99 the default (test_graph).
# Prints as it goes; timings are read on whatever card came (the first line names it).
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s44c1.txt
T0=$(date +%s)
say() { echo "$@" | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | tee "$S"
MLA_DEVICE_BUDGET=120 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" | tee -a "$S"
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
say "== test_kernels v99, small grid at splits=2"
MLA_VAR3_VERSIONS=flash_mla_v99 MLA_VAR3_GRID=small MLA_VAR3_TILING=splits=2 timeout 40 build/tests/test_kernels 2>&1 | tail -1 | tee -a "$S"
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
ROWS="32,128,4096,1;64,128,4096,1;128,16,4096,1;128,16,8192,1"
ab() {  # version mode passes rows
  local t=$(date +%s)
  PYTHONPATH=/tmp/site timeout 100 python3 scripts/flashmla_same_call.py --version flash_mla_v$1 --modes $2 \
    --passes $3 --cool-ms 500 --only "$4" >>"$OUT/ab_$2_v$1.txt" 2>&1
  say "== v$1 $2 ($3 passes, $(( $(date +%s) - t )) s): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/ab_$2_v$1.txt" | tail -n "$(echo "$4" | tr ';' '\n' | wc -l)" | cut -d'|' -f2-11 | tee -a "$S"
}
for v in 99 68 68 99; do ab $v graph 2 "$ROWS"; done
for v in 68 99; do ab $v flush 2 "$ROWS"; done
say "== ctest (v99 default), $(( $(date +%s) - T0 )) s in"
MLA_DEVICE_BUDGET=$(( 580 - ($(date +%s) - T0) )) MLA_VAR3_VERSIONS=flash_mla_v99 bash scripts/device_run.sh test >/dev/null 2>&1
grep -E "^(test|ctest)" "$OUT/summary.txt" | tee -a "$S"
grep -E "tests passed|Test +#|Failed|Passed" "$OUT/ctest.log" 2>/dev/null | tail -12 | tee -a "$S"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | tee -a "$S"
say "wall $(( $(date +%s) - T0 )) s"
cd "$OUT" && tar czf extra1.tgz ab_*.txt ctest.log 2>/dev/null; rm -f ab_*.txt build.log bench.txt logs.tgz
