#!/usr/bin/env bash
# device_probe.sh - runs THERE after `scripts/device_run.sh build`: builds the seesaw timeline probe
# (scripts/probe/v3_trace.cu: the CTA with its trace points, one kernel per schedule-option mask)
# and the TMA page probe (scripts/probe/tma_bw.cu) against the built library and runs them.
# Usage: bash scripts/device_probe.sh [build dir]; MLA_PROBE_OPTS="0 1 2 4 8 7 31 63 255" picks the
# option masks (0 = flash_mla_v3, 63 = v5, 255 = v6, 1279 = v9, 17663 = v11; "" builds
# /tmp/v3_probe and runs no mask, for `/tmp/v3_probe b s h t opt` by hand); MLA_PROBE_TMA=0 skips
# the TMA probe. MLA_PROBE_SUSTAIN="63 255" (default: none) also runs those masks for
# MLA_PROBE_SUSTAIN_S seconds (default 4) at b=32,s=16 (MLA_PROBE_SUSTAIN_SHAPE="b s h t"), and a cuBLAS bf16 GEMM as long, each under
# nvidia-smi sampling (100 ms): power, SM clock, temperature and the clock-event reasons under a
# steady load (read only: nothing is set). MLA_PROBE_V8="b s h t parts; ..." also builds and runs
# the persistent kernel's probe (scripts/probe/v8_trace.cu) on those shapes; MLA_PROBE_V22="b s h t; ..."
# the same for flash_mla_v22's persistent one-split kernel (scripts/probe/v22_trace.cu), MLA_PROBE_V24 for
# flash_mla_v24's (the same file built with -DPROBE_V24). A shape "b s h t reps seconds" there also
# runs the kernel for that many seconds under nvidia-smi sampling (power per version, sustained).
# MLA_PROBE_FMPAIR="b s h t; ..." builds and runs the pair's timeline probe (scripts/probe/
# fmpair_trace.cu: flash_mla_v68's pair kernel, CTA 0's per-pair points of both math warpgroups);
# MLA_PROBE_FMPAIR_VERSIONS="68 82" (default 68) builds it for each of those fmpair versions (the
# probe's source with the version's name substituted, in /tmp) and runs every shape on each.
# MLA_PROBE_FMPAIR_P0=26 moves the pair probe's twelve marked pairs (thirteen before the fortieth session) to start at pair 26 (default 8),
# so that at t=4096 (32 pairs an item) the walk's first item boundary, pairs 31 and 32, is marked.
# MLA_PROBE_V3=0 skips the seesaw probe's build (v3_trace.cu, minutes) and its timeline runs, for a
# call that wants the pair probe alone; MLA_PROBE_TMA=0 then skips the rest of the default builds.
# MLA_PROBE_SOFTMAX=REPS builds and runs scripts/probe/softmax_pipe.cu (a softmax mix beside a
# wgmma chain; REPS a measurement, 512 in the thirty-sixth session).
# MLA_PROBE_SHAPES="b s h t; ..." replaces the timeline shapes (default "32 16 128 4096; 32 1 128
# 4096; 128 1 16 8192"); MLA_PROBE_CMERGE_ONLY=1 builds only the split-merge kernels (opts 50431
# and its variants: a quick build) and skips the TMA probe. MLA_PROBE_PAGES=random (read by the
# probes themselves) permutes the caches' pages as bench-all does by default; without it they are
# in order. MLA_PROBE_BOXES=1 (read by v3_probe too) adds when each box of each pair's pages
# landed, for the one-split masks (the idle producer warp of CTA (0,0,0) watches the 18 full
# barriers), and each reload group's issue-to-landed cycles; run a mask with 0 and 1 to see what
# the watching costs. MLA_PROBE_PDL=1 (read by v3_probe) runs masks 88098047 and 2235581695 as the
# library builds and launches them, with PDL (added in the twenty-fourth session, not yet run).
# Writes everything to $OUT/probe.txt.
set -uo pipefail
B=${1:-build}
OUT=${OUT:-/tmp/out}
OPTS=${MLA_PROBE_OPTS-0 1 2 4 8 7 31 63 255}  # "" (set, empty): no timeline runs, only the builds
V3=${MLA_PROBE_V3:-1}
[ "$V3" = 0 ] && OPTS=""
SUSTAIN=${MLA_PROBE_SUSTAIN:-}
SUSTAIN_S=${MLA_PROBE_SUSTAIN_S:-4}
SUSTAIN_SHAPE=${MLA_PROBE_SUSTAIN_SHAPE:-32 16 128 4096}  # b s h t of the sustained runs
mkdir -p "$OUT"
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
NV=(nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Iinclude -Isrc
    -Isrc/kernels/common -Isrc/runtime)
# The library's tune cache needs cJSON: the carried one (device_run.sh unpacks it into /tmp/deps).
LIBS=(-lcuda)
for d in /tmp/deps/usr/lib/*/; do [ -e "$d/libcjson.so" ] && LIBS+=(-L"$d"); done
LIBS+=(-lcjson)
CMO=()
[ "${MLA_PROBE_CMERGE_ONLY:-0}" = 1 ] && { CMO=(-DV3_PROBE_CMERGE_ONLY); MLA_PROBE_TMA=0; }
: >"$OUT/probe_build.log"
{ [ "$V3" = 0 ] ||
  "${NV[@]}" "${CMO[@]}" scripts/probe/v3_trace.cu "$B/libmla_var3.a" "${LIBS[@]}" -o /tmp/v3_probe >>"$OUT/probe_build.log" 2>&1; } &&
  { [ "${MLA_PROBE_TMA:-1}" = 0 ] ||
    "${NV[@]}" scripts/probe/tma_bw.cu "$B/libmla_var3.a" "${LIBS[@]}" -o /tmp/tma_bw >>"$OUT/probe_build.log" 2>&1; } ||
  { echo "probe build failed"; tail -20 "$OUT/probe_build.log"; exit 1; }
V8=${MLA_PROBE_V8:-}
[ -n "$V8" ] && { "${NV[@]}" scripts/probe/v8_trace.cu "$B/libmla_var3.a" "${LIBS[@]}" -o /tmp/v8_probe \
  >>"$OUT/probe_build.log" 2>&1 || { echo "v8 probe build failed"; tail -20 "$OUT/probe_build.log"; }; }
V22=${MLA_PROBE_V22:-}
[ -n "$V22" ] && { "${NV[@]}" scripts/probe/v22_trace.cu "$B/libmla_var3.a" "${LIBS[@]}" -o /tmp/v22_probe \
  >>"$OUT/probe_build.log" 2>&1 || { echo "v22 probe build failed"; tail -20 "$OUT/probe_build.log"; }; }
V24=${MLA_PROBE_V24:-}
FMP=${MLA_PROBE_FMPAIR:-}
FMPV=${MLA_PROBE_FMPAIR_VERSIONS:-68}
if [ -n "$FMP" ]; then
  for v in $FMPV; do
    # the probe includes its version's .cu by a relative path: rewrite it absolute for the copy in /tmp
    sed -e "s/flash_mla_v68/flash_mla_v$v/g" -e "s|\"../../src/|\"$PWD/src/|" scripts/probe/fmpair_trace.cu \
      >"/tmp/fmpair_trace_v$v.cu"
    "${NV[@]}" ${MLA_PROBE_FMPAIR_P0:+-DMLA_FM_TR_P0=$MLA_PROBE_FMPAIR_P0} -Iscripts/probe "/tmp/fmpair_trace_v$v.cu" "$B/libmla_var3.a" "${LIBS[@]}" -o "/tmp/fmpair_probe_v$v" \
      >>"$OUT/probe_build.log" 2>&1 || { echo "fmpair probe (v$v) build failed"; tail -20 "$OUT/probe_build.log"; }
  done
fi
SMX=${MLA_PROBE_SOFTMAX:-}
[ -n "$SMX" ] && { "${NV[@]}" scripts/probe/softmax_pipe.cu -o /tmp/softmax_pipe >>"$OUT/probe_build.log" 2>&1 ||
  { echo "softmax_pipe build failed"; tail -20 "$OUT/probe_build.log"; }; }
[ -n "$V24" ] && { "${NV[@]}" -DPROBE_V24 scripts/probe/v22_trace.cu "$B/libmla_var3.a" "${LIBS[@]}" -o /tmp/v24_probe \
  >>"$OUT/probe_build.log" 2>&1 || { echo "v24 probe build failed"; tail -20 "$OUT/probe_build.log"; }; }
[ -n "$SUSTAIN" ] && { nvcc -O3 -gencode=arch=compute_90a,code=sm_90a scripts/probe/gemm_sustain.cu -lcublas \
  -o /tmp/gemm_sustain >>"$OUT/probe_build.log" 2>&1 || echo "gemm_sustain build failed (see probe_build.log)"; }

# sampled LABEL CMD...: CMD under nvidia-smi sampling; prints the median power, SM clock and
# memory clock over the second half of the samples, the peak temperature, and how many samples
# carried each clock-event-reason mask (0x4 = software power cap, 0x1 = idle; see nvidia-smi -q).
REASONS=clocks_event_reasons.active
nvidia-smi --query-gpu=$REASONS --format=csv,noheader >/dev/null 2>&1 || REASONS=clocks_throttle_reasons.active
sampled() {
  local label=$1 f=/tmp/smi_$1.csv p; shift
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,$REASONS \
    --format=csv,noheader,nounits -lms 100 >"$f" 2>&1 &
  p=$!
  "$@"
  kill $p 2>/dev/null; wait $p 2>/dev/null
  awk -F', *' -v L="$label" '
    NF >= 6 { n++; pw[n] = $2; sm[n] = $3; mem[n] = $4; if ($5 > tmax) tmax = $5; rs[n] = $6 }
    function med(a, lo, hi,   m, i, j, t, b) { m = 0; for (i = lo; i <= hi; i++) b[++m] = a[i] + 0;
      for (i = 2; i <= m; i++) { t = b[i]; for (j = i - 1; j >= 1 && b[j] > t; j--) b[j + 1] = b[j]; b[j + 1] = t }
      return m ? b[int((m + 1) / 2)] : -1 }
    END { if (!n) { print "power " L ": no samples"; exit } lo = int(n / 2) + 1;
      for (i = lo; i <= n; i++) cnt[rs[i]]++; r = ""; for (k in cnt) r = r " " k "x" cnt[k];
      printf "power %-10s %d samples, second half: median %.0f W, SM %d MHz, mem %d MHz, max %d C, reasons:%s\n",
        L, n, med(pw, lo, n), med(sm, lo, n), med(mem, lo, n), tmax, r }' "$f"
}

# persist_run v22|v24 b s h t [reps [seconds]]: a persistent kernel's probe; with seconds, also its
# sustained run under nvidia-smi sampling (power, clocks) and the kernel's own clock.
persist_run() {
  local v=$1; shift
  if [ $# -ge 6 ]; then sampled "${v}_s$2" timeout 120 /tmp/${v}_probe "$@"; else timeout 60 /tmp/${v}_probe "$@"; fi
}

{
  [ "${MLA_PROBE_TMA:-1}" = 1 ] && timeout 120 /tmp/tma_bw
  [ -x /tmp/v3_probe ] || SUSTAIN=""  # (MLA_PROBE_V3=0: no seesaw probe to sustain)
  # shellcheck disable=SC2086
  for o in $SUSTAIN; do sampled "opt$o" timeout 60 /tmp/v3_probe $SUSTAIN_SHAPE "$o" "$SUSTAIN_S"; done
  [ -n "$SUSTAIN" ] && [ -x /tmp/gemm_sustain ] && sampled gemm timeout 60 /tmp/gemm_sustain "$SUSTAIN_S"
  if [ -n "$V8" ] && [ -x /tmp/v8_probe ]; then
    IFS=';' read -ra V8S <<<"$V8"
    for shape in "${V8S[@]}"; do timeout 60 /tmp/v8_probe $shape; done
  fi
  if [ -n "$V22" ] && [ -x /tmp/v22_probe ]; then
    IFS=';' read -ra V22S <<<"$V22"
    for shape in "${V22S[@]}"; do persist_run v22 $shape; done
  fi
  if [ -n "$V24" ] && [ -x /tmp/v24_probe ]; then
    IFS=';' read -ra V24S <<<"$V24"
    for shape in "${V24S[@]}"; do persist_run v24 $shape; done
  fi
  if [ -n "$FMP" ]; then
    IFS=';' read -ra FMPS <<<"$FMP"
    for v in $FMPV; do
      [ -x "/tmp/fmpair_probe_v$v" ] || continue
      echo "=== fmpair probe, flash_mla_v$v (the probe's own header says v68)"
      # shellcheck disable=SC2086
      for shape in "${FMPS[@]}"; do timeout 60 "/tmp/fmpair_probe_v$v" $shape; done
    done
  fi
  [ -n "$SMX" ] && [ -x /tmp/softmax_pipe ] && timeout 120 /tmp/softmax_pipe "$SMX"
  IFS=';' read -ra SHAPES <<<"${MLA_PROBE_SHAPES:-32 16 128 4096; 32 1 128 4096; 128 1 16 8192}"
  for shape in "${SHAPES[@]}"; do
    # shellcheck disable=SC2086
    for o in $OPTS; do timeout 60 /tmp/v3_probe $shape "$o"; done
  done
} >"$OUT/probe.txt" 2>&1
sed -n '/TMA page probe/,/^DRAM  132    3/p' "$OUT/probe.txt"
grep "steady\|medians over\|transition after\|^  wg[01]:\|=== fmpair probe\|cycles/rep\|us/launch\|^power\|sustained\|^CTA\|^SM cycles\|clusters\|merge finish" "$OUT/probe.txt" || true
