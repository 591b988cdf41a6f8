#!/usr/bin/env bash
# Forty-second session, one device call (runs there, from the repository root; carry .deps .whl):
#   1. scripts/probe/bar_exit.cu: does `bar.sync 1, 256` wait for its last warp beside an exited warpgroup?
#   2. the library build (scripts/device_run.sh build), FlashMLA from the carried wheel;
#   3. v68 against FlashMLA in one process, the ANCHORS.md rows (ROWS, default all 15), flush method;
#   4. the pair probe (fmpair_trace.cu) with and without the odd CTAs started STAGGER cycles late
#      (MLA_FM_STAGGER): does the walk's transition shrink when only half the CTAs are at an edge?
# Writes $OUT/s42.txt (printed last) and $OUT/extra.tgz (logs).
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s42.txt
STAGGER=${STAGGER:-86000}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
echo "== bar_exit" >>"$S"
nvcc -O2 -gencode=arch=compute_90a,code=sm_90a scripts/probe/bar_exit.cu -o /tmp/bx >>"$S" 2>&1 && timeout 30 /tmp/bx >>"$S" 2>&1
NV=(nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc
    -Isrc/kernels/common -Isrc/runtime -Iscripts/probe -DMLA_FM_TR_P0=26)
sed -e "s|\"../../src/|\"$PWD/src/|" scripts/probe/fmpair_trace.cu >/tmp/fp.cu
[ -n "${PROBE-1}" ] && { "${NV[@]}" -c /tmp/fp.cu -o /tmp/fp0.o >"$OUT/probe_build0.txt" 2>&1 &
  "${NV[@]}" -DMLA_FM_STAGGER="$STAGGER" -c /tmp/fp.cu -o /tmp/fps.o >"$OUT/probe_builds.txt" 2>&1 & }
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null; ls -la build/mla_var3 >>"$S" 2>&1
wait
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
n=0
for v in ${ORDER:-flash_mla_v68}; do
  n=$((n+1))
  PYTHONPATH=/tmp/site timeout 400 python3 scripts/flashmla_same_call.py --version "$v" --modes flush \
    --passes "${PASSES:-2}" --cool-ms 500 ${ROWS:+--only "$ROWS"} >"$OUT/ab_${n}_$v.txt" 2>&1
  echo "== $n $v (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_${n}_$v.txt" | cut -d'|' -f2-11 >>"$S"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$S" 2>&1
if [ -n "${PROBE-1}" ]; then
  LIBS=(-lcuda); for d in /tmp/deps/usr/lib/*/; do [ -e "$d/libcjson.so" ] && LIBS+=(-L"$d"); done; LIBS+=(-lcjson)
  for k in 0 s; do "${NV[@]}" /tmp/fp$k.o build/libmla_var3.a "${LIBS[@]}" -o /tmp/fp$k >>"$OUT/probe_build$k.txt" 2>&1; done
  IFS=';' read -ra PS <<<"${PROBE_SHAPES:-32 4 128 4096; 32 8 128 4096}"
  for shape in "${PS[@]}"; do
    for k in 0 s 0 s; do
      echo "=== fmpair probe v68 stagger=$([ $k = s ] && echo "$STAGGER" || echo 0): $shape" >>"$OUT/probe_out.txt"
      # shellcheck disable=SC2086
      MLA_PROBE_LSE=1 MLA_PROBE_PAGES=random timeout 60 /tmp/fp$k $shape 10 >>"$OUT/probe_out.txt" 2>&1
    done
  done
  grep -E "===|medians|us/launch|transition" "$OUT/probe_out.txt" >>"$S"
fi
cd "$OUT" && tar czf extra.tgz ab_*.txt probe*.txt build.log 2>/dev/null; rm -f ab_*.txt probe*.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
