#!/usr/bin/env bash
# Forty-second session, call 3 (runs there, from the repository root; carry .deps .whl). Adaptive:
#   on an H200 (the card of ANCHORS.md and issue 5): v68 against FlashMLA in one process on the
#     15 ANCHORS.md rows by both methods (flush as ANCHORS.md's figures, graph as MLA_SPEC.md's);
#   on another card: the pair probe's transition marks again (the marks now read the clock after a
#     shared load, so "past the barrier" is the release, not the arrival), s=8 and s=4; with
#     MERGE_PROBE=1 instead, b=32,s=1's split-merge kernel in the seesaw probe, marks corrected too.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
S=$OUT/s42c.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
NV=(nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc
    -Isrc/kernels/common -Isrc/runtime -Iscripts/probe -DMLA_FM_TR_P0=26)
h200=0; grep -q H200 "$S" && h200=1
[ $h200 = 0 ] && [ "${MERGE_PROBE:-0}" != 1 ] && { sed -e "s|\"../../src/|\"$PWD/src/|" scripts/probe/fmpair_trace.cu >/tmp/fp.cu
                   "${NV[@]}" -c /tmp/fp.cu -o /tmp/fp0.o >"$OUT/probe_build0.txt" 2>&1 & }
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build" "$OUT/summary.txt" >>"$S" 2>/dev/null
wait
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
if [ $h200 = 1 ]; then
  python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
  for m in flush graph; do
    PYTHONPATH=/tmp/site timeout 280 python3 scripts/flashmla_same_call.py --version flash_mla_v68 --modes $m \
      --passes 2 --cool-ms 500 >"$OUT/ab_${m}_v68.txt" 2>&1
    echo "== $m method, v68 (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
    grep -E "^\| [0-9]" "$OUT/ab_${m}_v68.txt" | cut -d'|' -f2-11 >>"$S"
  done
elif [ "${MERGE_PROBE:-0}" = 1 ]; then
  # b=32,s=1's split-merge kernel (v61-v68's mask) with the marks that wait for their barrier
  MLA_PROBE_CMERGE_ONLY=1 MLA_PROBE_OPTS="137636136159" MLA_PROBE_SHAPES="32 1 128 4096; 32 1 128 4096" \
    MLA_PROBE_PAGES=random MLA_PROBE_LSE=1 OUT=$OUT bash scripts/device_probe.sh build >"$OUT/probe_merge.txt" 2>&1
  grep -E "us/launch|SM clock|CTA \(0,0,0\)|steady|^pair" "$OUT/probe.txt" >>"$S"
  cp "$OUT/probe.txt" "$OUT/probe_out.txt"
else
  LIBS=(-lcuda); for d in /tmp/deps/usr/lib/*/; do [ -e "$d/libcjson.so" ] && LIBS+=(-L"$d"); done; LIBS+=(-lcjson)
  "${NV[@]}" /tmp/fp0.o build/libmla_var3.a "${LIBS[@]}" -o /tmp/fp0 >>"$OUT/probe_build0.txt" 2>&1
  for shape in "32 8 128 4096" "32 4 128 4096" "32 8 128 4096" "32 4 128 4096"; do
    echo "=== fmpair probe v68 (marks after a shared load): $shape" >>"$OUT/probe_out.txt"
    # shellcheck disable=SC2086
    MLA_PROBE_LSE=1 MLA_PROBE_PAGES=random timeout 60 /tmp/fp0 $shape 10 >>"$OUT/probe_out.txt" 2>&1
  done
  grep -E "===|medians|us/launch|transition|wg[01]:  " "$OUT/probe_out.txt" >>"$S"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$S" 2>&1
cd "$OUT" && tar czf extra3.tgz ab_*.txt probe*.txt 2>/dev/null; rm -f ab_*.txt probe*.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
