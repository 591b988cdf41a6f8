#!/usr/bin/env bash
# device_try.sh - runs THERE (GPU machine, repository root, $OUT set; carry .deps and .whl): a new
# flash_mla version's first device call in one go, stopping before the timing if anything fails.
#   1. build (scripts/device_run.sh build);
#   2. --check through the CLI at splits=1 on shapes that reach the one-split kernels' pair loop,
#      the walk (b=17,s=4: 136 row blocks), a varlen tail, h=16, one page, no causal mask and the
#      headline s=16 shape, each under a 40 s timeout (a hang shows as rc=124);
#   3. tests/test_kernels on those versions: the full grid, then the small grid at splits=1;
#   4. compute-sanitizer memcheck and synccheck at b=17,s=4,t=640,splits=1 on the first version (or MLA_TRY_SAN_VERSIONS);
#   5. FlashMLA beside each version and the base (scripts/flashmla_same_call.py --version, flush).
# MLA_TRY_VERSIONS=a,b (required), MLA_TRY_BASE (default flash_mla_v68, the default version), MLA_TRY_ROWS (--only
# rows, default s=2, 8, 16 and b=128,t=8192,s=2), MLA_TRY_PASSES (default 2); MLA_TRY_CHECKS_DEFAULT (more
# --check shapes at the default tiling), MLA_TRY_TK (test_kernels' versions, default the tried ones),
# MLA_TRY_SAN (the sanitizers' problem and tiling), MLA_TRY_SAN_VERSIONS (space-separated; default the
# first), MLA_TRY_FULL (versions timed on the whole table). $OUT comes back as 8 files at most: pack it.
# Why not device_run.sh's stages: its smoke cases run the default plans (which at those sizes are
# mostly split plans, not the one-split pair loop a new version usually changes), its test stage is
# all of ctest (minutes), and its anchor stage times one version; a first call wants the one-split
# loop checked under hang timeouts, then the version, the base and FlashMLA timed side by side.
set -uo pipefail
OUT=${OUT:-/tmp/mla_out}
mkdir -p "$OUT"
VERS=${MLA_TRY_VERSIONS:?MLA_TRY_VERSIONS=a,b}
BASE=${MLA_TRY_BASE:-flash_mla_v68}
ROWS=${MLA_TRY_ROWS:-32,128,4096,2;32,128,4096,8;32,128,4096,16;128,128,8192,2}
bash scripts/device_run.sh build >/dev/null 2>&1
grep -E "^build|^ptxas" "$OUT/summary.txt"
lib=$(ls /tmp/deps/usr/lib/*/libcjson.so.1 2>/dev/null | head -1)
[ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bad=0
for v in ${VERS//,/ }; do
  for c in "--b=2 --s=4 --t=640 --h=128" "--b=17 --s=4 --t=640 --h=128" "--b=3 --s=4 --t=1000 --h=128 --varlen" \
           "--b=2 --s=1 --t=200 --h=16" "--b=1 --s=1 --t=64 --h=128" "--b=2 --s=2 --t=130 --h=64 --causal=0" \
           "--b=32 --s=16 --t=4096 --h=128"; do
    # shellcheck disable=SC2086
    timeout 40 build/mla_var3 flash_mla "$v" $c --tiling=splits=1 --check >/tmp/try_c.txt 2>&1
    rc=$?
    [ $rc -ne 0 ] && bad=1
    echo "$v $c rc=$rc | $(grep -iE 'check' /tmp/try_c.txt | tail -1 | cut -c1-110)"
  done
done
# MLA_TRY_CHECKS_DEFAULT: more --check shapes (';'-separated), run with each version's default tiling
# (a version whose new path only the auto plan takes, flash_mla_v57's parts for instance).
IFS=';' read -r -a dshapes <<<"${MLA_TRY_CHECKS_DEFAULT:-}"
for v in ${VERS//,/ }; do
  for c in "${dshapes[@]}"; do
    [ -z "$c" ] && continue
    # shellcheck disable=SC2086
    timeout 40 build/mla_var3 flash_mla "$v" $c --check >/tmp/try_c.txt 2>&1
    rc=$?
    [ $rc -ne 0 ] && bad=1
    echo "$v $c (default tiling) rc=$rc | $(grep -iE 'check' /tmp/try_c.txt | tail -1 | cut -c1-110)"
  done
done
[ $bad -ne 0 ] && { echo "checks failed: no tests, no timing"; exit 1; }
TKV=${MLA_TRY_TK:-$VERS}
MLA_VAR3_VERSIONS=$TKV timeout 120 build/tests/test_kernels >"$OUT/tk_full.txt" 2>&1
echo "test_kernels full grid: rc=$? $(tail -1 "$OUT/tk_full.txt")"
MLA_VAR3_GRID=small MLA_VAR3_TILING=splits=1 MLA_VAR3_VERSIONS=$TKV timeout 60 build/tests/test_kernels >"$OUT/tk_s1.txt" 2>&1
echo "test_kernels small grid, splits=1: rc=$? $(tail -1 "$OUT/tk_s1.txt")"
# MLA_TRY_SAN_VERSIONS (default: the first tried version) under both sanitizers. Keep MLA_TRY_SAN small:
# synccheck at b=40,s=1,t=900,h=16 varlen took minutes (thirty-first session, call 1).
for sv in ${MLA_TRY_SAN_VERSIONS:-${VERS%%,*}}; do
  for t in memcheck synccheck; do
    # shellcheck disable=SC2086
    timeout 90 compute-sanitizer --tool $t build/mla_var3 flash_mla "$sv" \
      ${MLA_TRY_SAN:---b=17 --s=4 --t=640 --h=128 --tiling=splits=1} --check >"$OUT/san_${t}_$sv.txt" 2>&1
    echo "$t $sv rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/san_${t}_$sv.txt")"
  done
done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/sgl_flash_mla-*.whl >/dev/null 2>&1
for v in $BASE ${VERS//,/ }; do
  PYTHONPATH=/tmp/site timeout 110 python3 scripts/flashmla_same_call.py --version "$v" --modes flush \
    --passes "${MLA_TRY_PASSES:-2}" --cool-ms 500 --only "$ROWS" >"$OUT/ab_$v.txt" 2>&1
  echo "== $v (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/ab_$v.txt" | cut -d'|' -f2-11
done
# MLA_TRY_FULL=a,b: each version's whole acceptance table beside FlashMLA (flush, MLA_TRY_FULL_PASSES).
for v in ${MLA_TRY_FULL:+${MLA_TRY_FULL//,/ }}; do
  PYTHONPATH=/tmp/site timeout 240 python3 scripts/flashmla_same_call.py --version "$v" --modes flush \
    --passes "${MLA_TRY_FULL_PASSES:-2}" --cool-ms 500 >"$OUT/full_$v.txt" 2>&1
  echo "== full table $v (rc=$?): b h t s | ours median first10 last10 | FlashMLA median first10 last10"
  grep -E "^\| [0-9]" "$OUT/full_$v.txt" | cut -d'|' -f2-11
done
