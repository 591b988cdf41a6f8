#!/usr/bin/env bash
# Forty-second session, call 2 (runs there, from the repository root; carry .deps .whl):
#   1. scripts/probe/bar_exit.cu with the shared-memory flag (call 1's clocks could not tell);
#   2. the library build, then racecheck and synccheck on v68's walk and static-grid kernels;
#   3. v68 against FlashMLA in one process on the 15 ANCHORS.md rows by the graph method (MLA_SPEC.md's:
#      CUDA-graph replays, inputs rotated past the L2), beside call 1's flush method.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s42b.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
echo "== bar_exit" >>"$S"
nvcc -O2 -gencode=arch=compute_90a,code=sm_90a scripts/probe/bar_exit.cu -o /tmp/bx >>"$S" 2>&1 && timeout 30 /tmp/bx >>"$S" 2>&1
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
san() { # tool timeout args...
  local t=$1 to=$2; shift 2
  timeout "$to" compute-sanitizer --tool "$t" build/mla_var3 flash_mla flash_mla_v68 "$@" --check >"$OUT/san_${t}_$n.txt" 2>&1
  echo "$t $* rc=$? | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_${t}_$n.txt" | tr '\n' ' ') | $(grep -i 'check' "$OUT/san_${t}_$n.txt" | grep -v SUMMARY | tail -1 | cut -c1-100)" >>"$S"
}
n=1; san racecheck 200 --b=17 --s=4 --t=640 --h=128 --tiling=splits=1
n=2; san synccheck 100 --b=17 --s=4 --t=640 --h=128 --tiling=splits=1
n=3; san racecheck 200 --b=2 --s=2 --t=300 --h=128
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
PYTHONPATH=/tmp/site timeout 300 python3 scripts/flashmla_same_call.py --version flash_mla_v68 --modes graph \
  --passes 2 --cool-ms 500 >"$OUT/ab_graph_v68.txt" 2>&1
echo "== graph method, v68 (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
grep -E "^\| [0-9]" "$OUT/ab_graph_v68.txt" | cut -d'|' -f2-11 >>"$S"
cd "$OUT" && tar czf extra2.tgz san_*.txt ab_*.txt 2>/dev/null; rm -f san_*.txt ab_*.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
