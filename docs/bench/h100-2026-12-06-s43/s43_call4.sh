#!/usr/bin/env bash
# Forty-third session, call 4 (runs there, from the repository root; carry .deps .whl), the last of
# the session's device time: flash_mla_v97 against v68 at b=32,s=1 in one process, each beside
# FlashMLA (graph method alternated v68, v97, v97, v68, two passes each; then flush), then the
# pair's static grid (b=32, s=2 and s=16), one graph pass each. Prints as it goes.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s43c.txt
say() { echo "$@" | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | tee "$S"
MLA_DEVICE_BUDGET=120 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" | tee -a "$S"
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
ab() {  # version mode passes rows
  PYTHONPATH=/tmp/site timeout 60 python3 scripts/flashmla_same_call.py --version flash_mla_v$1 --modes $2 \
    --passes $3 --cool-ms 500 --only "$4" >>"$OUT/ab_$2_v$1.txt" 2>&1
  say "== v$1 $2 ($3 passes): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/ab_$2_v$1.txt" | tail -n "$(echo "$4" | tr ';' '\n' | wc -l)" | cut -d'|' -f2-11 | tee -a "$S"
}
for v in 68 97 97 68; do ab $v graph 2 "32,128,4096,1"; done
for v in 68 97; do ab $v flush 2 "32,128,4096,1"; done
for v in 97 68; do ab $v graph 1 "32,128,4096,2;32,128,4096,16"; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | tee -a "$S"
cd "$OUT" && tar czf extra4.tgz ab_*.txt 2>/dev/null; rm -f ab_*.txt build.log bench.txt ctest.log logs.tgz
