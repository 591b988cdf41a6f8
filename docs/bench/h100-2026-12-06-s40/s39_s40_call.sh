#!/usr/bin/env bash
# A record: the thirty-eighth session's one-off call script as the thirty-ninth and fortieth
# sessions ran it (it writes s39.txt in both), from the repository root on the device after
# applying v86_v94_apre_qearly_ql2.patch. The fortieth session's call:
#   VERS="flash_mla_v93 flash_mla_v94" ORDER="flash_mla_v68 flash_mla_v93 flash_mla_v94 flash_mla_v68
#   flash_mla_v93 flash_mla_v94" ROWS="32,128,4096,4;32,128,4096,8;128,128,8192,2" QCHK="<the check
#   list in docs/kernels/flash_mla.md>" PROBE_VERS="68 93 94" PROBE_P0=26 PROBE_SHAPES="32 8 128 4096;
#   128 2 128 4096; 32 4 128 4096" bash s39_s40_call.sh   (carry: .deps .whl)
# Its variables fall back to their defaults when set empty. For the probe alone use
# scripts/device_probe.sh (MLA_PROBE_V3=0, MLA_PROBE_FMPAIR_P0).
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}; mkdir -p "$OUT"
VERS=${VERS:-flash_mla_v86 flash_mla_v87}
ORDER=${ORDER:-flash_mla_v68 flash_mla_v86 flash_mla_v87 flash_mla_v68}
ROWS=${ROWS:-32,128,4096,2;32,128,4096,4;32,128,4096,8;128,128,8192,2;64,128,4096,1;128,128,4096,1}
S=$OUT/s39.txt
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv >"$S" 2>&1
MLA_DEVICE_BUDGET=200 bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build|^ptxas" "$OUT/summary.txt" >>"$S" 2>/dev/null; ls -la build/mla_var3 >>"$S" 2>&1
export LD_LIBRARY_PATH=$(ls -d /tmp/deps/usr/lib/*/ | tr '\n' ':')
chk() { # version args...
  local v=$1; shift
  timeout 60 build/mla_var3 flash_mla "$v" "$@" --check >/tmp/c.txt 2>&1; local rc=$?
  echo "$v $* rc=$rc | $(grep -i 'check' /tmp/c.txt | tail -1 | cut -c1-120)" >>"$S"
  return $rc
}
ok=""
for v in $VERS; do
  g=1
  IFS=';' read -ra QC <<<"${QCHK:---b=2 --s=1 --t=640 --h=128 --tiling=splits=1;--b=140 --s=1 --t=320 --h=128 --tiling=splits=1;--b=2 --s=4 --t=640 --h=128 --tiling=splits=1;--b=17 --s=4 --t=640 --h=128 --tiling=splits=1;--b=8 --s=8 --t=2048 --h=128;--b=32 --s=1 --t=4096 --h=128}"
  for q in "${QC[@]}"; do
    # shellcheck disable=SC2086
    chk $v $q || g=0
  done
  [ $g = 1 ] && ok="$ok $v"
done
echo "quick checks passed: $ok" >>"$S"
python3 -m pip install -q --no-deps --target /tmp/site .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
n=0
for v in $ORDER; do
  n=$((n+1))
  [ "$v" != flash_mla_v68 ] && [[ " $ok " != *" $v "* ]] && continue
  PYTHONPATH=/tmp/site timeout 120 python3 scripts/flashmla_same_call.py --version "$v" --modes flush \
    --passes 2 --cool-ms 500 --only "$ROWS" >"$OUT/ab_${n}_$v.txt" 2>&1
  echo "== $n $v (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10" >>"$S"
  grep -E "^\| [0-9]" "$OUT/ab_${n}_$v.txt" | cut -d'|' -f2-11 >>"$S"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$S" 2>&1
v1=$(echo $ok | awk '{print $NF}')  # the last (v87: both kinds of loader request)
if [ -n "$v1" ] && [ -n "${SAN:-1}" ]; then
  for t in memcheck synccheck; do
    # shellcheck disable=SC2086
    timeout 90 compute-sanitizer --tool $t build/mla_var3 flash_mla "$v1" ${SANARGS:---b=17 --s=4 --t=640 --h=128 --tiling=splits=1} --check >"$OUT/san_$t.txt" 2>&1
    echo "$t $v1 rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/san_$t.txt")" >>"$S"
  done
fi
# the pair's timeline probe, v68 and the new ones
if [ -n "${PROBE-1}" ]; then
  NV=(nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc
      -Isrc/kernels/common -Isrc/runtime -Iscripts/probe)
  LIBS=(-lcuda); for d in /tmp/deps/usr/lib/*/; do [ -e "$d/libcjson.so" ] && LIBS+=(-L"$d"); done; LIBS+=(-lcjson)
  for v in ${PROBE_VERS:-68 86}; do
    sed -e "s/flash_mla_v68/flash_mla_v$v/g" -e "s|\"../../src/|\"$PWD/src/|" scripts/probe/fmpair_trace.cu >/tmp/fp_$v.cu
    "${NV[@]}" ${PROBE_P0:+-DMLA_FM_TR_P0=$PROBE_P0} /tmp/fp_$v.cu build/libmla_var3.a "${LIBS[@]}" -o /tmp/fp_$v >"$OUT/probe_build_$v.txt" 2>&1 &
  done
  wait
  IFS=';' read -ra PS <<<"${PROBE_SHAPES:-64 1 128 4096; 32 2 128 4096}"
  for v in ${PROBE_VERS:-68 86}; do
    for shape in "${PS[@]}"; do
      echo "=== fmpair probe v$v: $shape" >>"$OUT/probe_out.txt"
      # shellcheck disable=SC2086
      MLA_PROBE_FORCE_PAIR=${FORCE_PAIR:-1} MLA_PROBE_PAGES=random timeout 60 /tmp/fp_$v $shape 10 >>"$OUT/probe_out.txt" 2>&1
    done
  done
  grep -E "===|medians|us/launch" "$OUT/probe_out.txt" >>"$S"
fi
# the rest of the checks
for v in ${MORECHK:+$ok}; do
  chk $v --b=3 --s=4 --t=1000 --h=128 --varlen --tiling=splits=1
  chk $v --b=2 --s=2 --t=130 --h=64 --causal=0 --tiling=splits=1
  chk $v --b=1 --s=2 --t=64 --h=128 --tiling=splits=1
  chk $v --b=32 --s=16 --t=4096 --h=128 --tiling=splits=1
  chk $v --b=5 --s=2 --t=1000 --h=128 --varlen
  chk $v --b=40 --s=3 --t=900 --h=128 --varlen
  chk $v --b=9 --s=4 --t=700 --h=128 --scale=64
  chk $v --b=9 --s=4 --t=700 --h=128 --scale=0.5
  chk $v --b=128 --s=2 --t=3000 --h=128
done
cd "$OUT" && tar czf extra.tgz ab_*.txt probe*.txt san_*.txt build.log 2>/dev/null; rm -f ab_*.txt san_*.txt probe*.txt build.log bench.txt ctest.log logs.tgz
cat "$S"
