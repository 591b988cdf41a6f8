#!/usr/bin/env bash
# Forty-third session, call 3 (runs there, from the repository root; carry .deps .whl): the library
# build with flash_mla_v97 (OPT_EARLY_Q in the static-grid kernels) and v98 (v97 + the split
# merge's Q by multicast); their correctness (test_kernels: v97 on the full grid, both on the small
# grid forced to two splits; memcheck on the split merge and the pair's static grid); v68 and v97
# against FlashMLA in one process on the rows whose kernels differ (graph method), then v68, v97
# and v98 at b=32,s=1 by both methods; the seesaw probe's first-S spread for the three merge
# kernels at b=32,s=1.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s43c.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
LIBS=(-lcuda); for d in /tmp/deps/usr/lib/*/; do [ -e "$d/libcjson.so" ] && LIBS+=(-L"$d"); done; LIBS+=(-lcjson)
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc -Isrc/kernels/common \
  -Isrc/runtime -DV3_PROBE_CMERGE_ONLY scripts/probe/v3_trace.cu build/libmla_var3.a "${LIBS[@]}" -o /tmp/v3_probe \
  >"$OUT/probe_build.log" 2>&1 &
PB=$!
{
  echo "== test_kernels, flash_mla_v97, full grid"
  MLA_VAR3_VERSIONS=flash_mla_v97 timeout 150 build/tests/test_kernels 2>&1 | tail -3
  echo "== test_kernels, flash_mla_v97 and v98, small grid at splits=2"
  MLA_VAR3_VERSIONS=flash_mla_v97,flash_mla_v98 MLA_VAR3_GRID=small MLA_VAR3_TILING=splits=2 timeout 90 build/tests/test_kernels 2>&1 | tail -3
  echo "== check v98 b=32,s=1 (default plan: the split merge)"
  timeout 30 build/mla_var3 flash_mla v98 --b=32 --s=1 --t=4096 --h=128 --check 2>&1 | tail -2
  for va in "v97 --b=5 --s=1 --t=700 --h=128 --tiling=splits=2" "v98 --b=5 --s=1 --t=700 --h=128 --tiling=splits=2" \
            "v97 --b=3 --s=2 --t=300 --h=128" "v97 --b=4 --s=1 --t=500 --h=16"; do
    echo "== memcheck $va"
    # shellcheck disable=SC2086
    timeout 90 compute-sanitizer --tool memcheck build/mla_var3 flash_mla $va --check 2>&1 | grep -E "ERROR SUMMARY|check|FAIL" | head -3
  done
} >"$OUT/tests.txt" 2>&1
grep -E "==|passed|failed|ERROR SUMMARY|FAIL" "$OUT/tests.txt" >>"$S"
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
ROWS="32,128,4096,1;32,128,4096,2;64,128,4096,1;128,16,4096,1;128,16,8192,1"
for v in 68 97; do
  PYTHONPATH=/tmp/site timeout 150 python3 scripts/flashmla_same_call.py --version flash_mla_v$v --modes graph \
    --passes 1 --cool-ms 500 --only "$ROWS" >>"$OUT/ab_graph_v$v.txt" 2>&1
done
for v in 68 97; do
  echo "== graph method, v$v, one run of 1 pass: b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_graph_v$v.txt" | cut -d'|' -f2-11 >>"$S"
done
for v in 68 97 98 98 97 68; do
  PYTHONPATH=/tmp/site timeout 60 python3 scripts/flashmla_same_call.py --version flash_mla_v$v --modes graph \
    --passes 2 --cool-ms 500 --only "32,128,4096,1" >>"$OUT/ab_b32s1_graph_v$v.txt" 2>&1
done
for v in 68 97 98; do
  echo "== b=32,s=1 graph method, v$v, two runs of 2 passes" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_b32s1_graph_v$v.txt" | cut -d'|' -f2-11 >>"$S"
done
for v in 68 97 98; do
  PYTHONPATH=/tmp/site timeout 60 python3 scripts/flashmla_same_call.py --version flash_mla_v$v --modes flush \
    --passes 2 --cool-ms 500 --only "32,128,4096,1" >"$OUT/ab_flush_v$v.txt" 2>&1
  echo "== flush method, v$v: b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_flush_v$v.txt" | cut -d'|' -f2-11 >>"$S"
done
wait $PB
for o in 137636136159 4535682647263 13331775669471 13331775669471 4535682647263 137636136159; do
  echo "=== probe mask $o" >>"$OUT/probe_out.txt"
  MLA_PROBE_PAGES=random MLA_PROBE_LSE=1 timeout 60 /tmp/v3_probe 32 1 128 4096 $o >>"$OUT/probe_out.txt" 2>&1
done
grep -E "===|us/launch|first S done|CTA \(0,0,0\)" "$OUT/probe_out.txt" >>"$S"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$S" 2>&1
cd "$OUT" && tar czf extra3.tgz ab_*.txt probe*.txt tests.txt 2>/dev/null; rm -f ab_*.txt probe*.txt tests.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
