#!/usr/bin/env bash
# device_run.sh - runs THERE, on the GPU machine, in one device call from the repository root
# with $OUT set (carry .deps, made here by scripts/carry_deps.sh):
#
#   bash scripts/device_run.sh [build] [smoke] [test] [sanitize] [bench] [anchor] [all]   (default: all)
#
# Stages: build (nvidia-smi record, CMake + Ninja build with ptxas -v, its serialised-wgmma notes, SASS sizes and HGMMA/HMMA counts),
# test (ctest, every label), sanitize (compute-sanitizer memcheck, racecheck and synccheck on
# tests/test_kernels with MLA_VAR3_GRID=small), bench (mla_var3 bench-all), anchor (FlashMLA and
# mla_var3 timed in one process, row by row, by scripts/flashmla_same_call.py; needs .whl/ from
# scripts/fetch_flashmla.sh carried; not part of `all`; MLA_ANCHOR_ARGS adds to its arguments,
# MLA_ANCHOR_LIMIT caps it, default 400 s). A stage that needs
# binaries builds first if they are missing. MLA_VAR3_VERSIONS=a,b limits test_kernels (and so
# test and sanitize) to those versions; MLA_VAR3_SANITIZE_VERSIONS=a,b (default: the same) the
# sanitizer runs only; MLA_VAR3_SANITIZE_TILING (default splits=2; empty: each version's default
# plan) overrides the tiling of every sanitizer case: the default plans give the small grid's
# tiny problems one page per split, which reaches neither a full page pair nor flash_mla_v12's
# split merge, and a default plan with two splits needs ~100 CTAs, too slow under racecheck; MLA_VAR3_BENCH_VERSIONS=a,b limits bench-all, MLA_VAR3_BENCH_PASSES=N runs it N times (--passes), MLA_VAR3_BENCH_PAGES=sequential lays the caches' pages out in order (--pages), MLA_VAR3_BENCH_COOL=MS idles MS ms before each row (--cool), MLA_BENCH_LIMIT (default 300 s) caps bench-all, MLA_VAR3_SANITIZE_TOOLS=a,b picks the sanitizer tools, MLA_VAR3_TIME_CALLS=N the calls a timed graph holds (the CLI's default 8), MLA_VAR3_BENCH_MODES=graph,flush the timing methods bench-all runs in (one file each). The whole
# script keeps under a time budget (MLA_DEVICE_BUDGET seconds, default 530): every step runs under `timeout`, shortened to what
# is left, and a step with no time left is skipped and says so (ctest's own limit: MLA_CTEST_LIMIT, default 300 s). A short summary table is
# printed last. $OUT gets five files (the device tool returns at most 8):
#   summary.txt build.log ctest.log bench.txt logs.tgz (smoke and sanitizer logs, bench folder,
#   full test log, SASS counts, ptxas resources, ...)
set -uo pipefail

START=$(date +%s)
BUDGET=${MLA_DEVICE_BUDGET:-530}
BUILD=${MLA_BUILD_DIR:-build}
OUT=${OUT:-/tmp/mla_out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
EXTRA=/tmp/mla_extra            # what goes into logs.tgz
rm -rf "$EXTRA" && mkdir -p "$EXTRA"
SUMMARY=()                      # lines of the final table
export PATH="$PATH:/usr/local/cuda/bin"
JOBS=$(nproc 2>/dev/null || echo 8)

remaining() { echo $((BUDGET - ($(date +%s) - START))); }
note() { SUMMARY+=("$(printf '%-12s %s' "$1" "$2")"); }

# step LIMIT LOGFILE CMD...: run CMD under timeout min(LIMIT, time left - 15 s), appending
# stdout+stderr to LOGFILE; returns CMD's status (124 = timed out, 125 = skipped: no time left).
step() {
  local limit=$1 log=$2; shift 2
  local left=$(( $(remaining) - 15 ))
  (( left < limit )) && limit=$left
  if (( limit < 5 )); then
    echo "SKIPPED (time budget spent): $*" >>"$log"
    return 125
  fi
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
}

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(all)
want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] || [ "$s" = all ] && return 0; done; return 1; }

# ---------------------------------------------------------------------------------------------
# environment: the carried cJSON, the GPU
# ---------------------------------------------------------------------------------------------
setup_deps() {
  CMAKE_DEPS_ARGS=()
  if ls .deps/*.deb >/dev/null 2>&1; then
    local D=/tmp/deps
    rm -rf "$D" && mkdir -p "$D"
    local f
    for f in .deps/*.deb; do
      if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$f" "$D"
      else   # a .deb is an ar archive holding data.tar.*
        rm -rf /tmp/deb_x && mkdir -p /tmp/deb_x && (cd /tmp/deb_x && ar x "$OLDPWD/$f") &&
          tar -xf /tmp/deb_x/data.tar.* -C "$D"
      fi
    done
    # Debian's cJSONConfig.cmake names /usr/include absolutely: drop it, CMake falls back to
    # find_path/find_library, pointed at the unpacked tree.
    rm -rf "$D"/usr/lib/*/cmake/cJSON "$D"/usr/lib/*/pkgconfig
    local inc="$D/usr/include" lib
    lib=$(dirname "$(ls "$D"/usr/lib/*/libcjson.so 2>/dev/null | head -1)")
    export CMAKE_PREFIX_PATH="$D/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export CPATH="$inc${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    CMAKE_DEPS_ARGS=(-DCJSON_INCLUDE_DIR="$inc" -DCJSON_LIBRARIES="$lib/libcjson.so")
    echo "deps: cJSON from .deps ($lib)"
  elif [ -f /usr/include/cjson/cJSON.h ]; then
    echo "deps: system cJSON"
  else
    echo "deps: WARNING no .deps/*.deb and no system cJSON: run scripts/carry_deps.sh here and carry .deps"
  fi
}

record_gpu() {
  {
    echo "== nvidia-smi =="
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
      --format=csv 2>&1 || echo "nvidia-smi failed"
    echo "== toolchain =="
    nvcc --version 2>&1 | tail -2
    cmake --version 2>&1 | head -1
    echo "ninja $(ninja --version 2>/dev/null || echo missing)"
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo missing)"
    echo "cuobjdump: $(command -v cuobjdump || echo missing)"
  } >"$EXTRA/gpu.txt"
  local g
  g=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
  note gpu "${g:-unknown (nvidia-smi failed)}"
}

# ---------------------------------------------------------------------------------------------
# stages
# ---------------------------------------------------------------------------------------------
BUILD_OK=0
do_build() {
  local t0=$(date +%s) gen=() rc
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  # A build folder configured by another generator cannot be reused with Ninja.
  if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${gen[1]:-Unix Makefiles}" "$BUILD/CMakeCache.txt"; then
    rm -rf "$BUILD"
  fi
  echo "== configure ==" >"$OUT/build.log"
  step 90 "$OUT/build.log" cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DMLA_PTXAS_VERBOSE=ON \
    "${CMAKE_DEPS_ARGS[@]}"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "== build ==" >>"$OUT/build.log"
    # keep going past a failing target (ninja -k 0) so that everything else can still be tested
    local keep=()
    [ ${#gen[@]} -gt 0 ] && keep=(-- -k 0)
    step 240 "$OUT/build.log" cmake --build "$BUILD" -j "$JOBS" "${keep[@]}"
    rc=$?
  fi
  local dt=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ]; then
    BUILD_OK=1
    note build "ok (${dt} s)"
  else
    note build "FAILED rc=$rc (${dt} s): see build.log"
    echo "---- build errors ----"
    grep -E "error|Error|FAILED" "$OUT/build.log" | head -40
  fi
  # registers / shared memory / spills per kernel, from ptxas -v
  grep -E "Compiling entry function|Used [0-9]+ registers|spill" "$OUT/build.log" >"$EXTRA/ptxas.txt" 2>/dev/null
  ptxas_serialised
  sass_counts
}

# ptxas's "wgmma.mma_async instructions are serialized" notes (C7510-C7515) from the -v build:
# a kernel with one runs every wgmma alone (flash_mla_v34's third build: 30-40 % slower, twentieth
# session); the summary counts them and logs.tgz/ptxas_serialized.txt names the kernels.
ptxas_serialised() {
  local f="$EXTRA/ptxas_serialized.txt" n filt=cat fn rest
  command -v c++filt >/dev/null 2>&1 && filt=c++filt
  # one line a note: "<kernel> C7514 <reason>", the kernel demangled and cut to its name
  grep -E "mma_async instructions are serialized" "$OUT/build.log" 2>/dev/null |
    sed -E "s/.*\(C([0-9]+)\).*due to (.*) in the function '([^']+)'.*/\3 C\1 \2/" |
    while read -r fn rest; do echo "$(echo "$fn" | $filt | sed -E 's/\(anonymous namespace\):://g; s/\(.*//; s/.*:://') $rest"; done |
    sort -u >"$f"
  n=$(grep -c . "$f")
  if [ "$n" -gt 0 ]; then
    note ptxas "$n note(s) of serialised wgmma: $(cut -d' ' -f1 "$f" | sort -u | head -4 | tr '\n' ' ')(logs.tgz/ptxas_serialized.txt)"
  else
    note ptxas "no serialised-wgmma note"
  fi
}

# SASS size and HGMMA (wgmma) / HMMA (mma.sync) counts per kernel function in each kernel object
# (scripts/sass_stats.sh); the summary names the largest kernel.
sass_counts() {
  local f="$EXTRA/sass_counts.txt"
  if ! command -v cuobjdump >/dev/null 2>&1; then
    echo "cuobjdump missing" >"$f"; note sass "cuobjdump missing"; return
  fi
  local filt=cat
  command -v c++filt >/dev/null 2>&1 && filt=c++filt   # kernel names may be C++-mangled
  : >"$f"
  local o objs
  objs=$(find "$BUILD/CMakeFiles" -path '*mla_kernels_*' -name '*.o' 2>/dev/null | sort)
  for o in $objs; do
    echo "== ${o#$BUILD/CMakeFiles/}" >>"$f"
    bash scripts/sass_stats.sh "$o" | $filt >>"$f"
  done
  local n_hg n_hm big
  n_hg=$(awk -F'HGMMA=' 'NF > 1 { split($2, a, " "); s += a[1] } END { print s + 0 }' "$f")
  n_hm=$(awk -F'HMMA=' 'NF > 1 { split($2, a, " "); s += a[1] } END { print s + 0 }' "$f")
  big=$(awk -F' BYTES=' 'NF > 1 { split($2, a, " "); if (a[1] + 0 > m) { m = a[1] + 0; n = $1 } }
        END { if (m) { sub(/\([^()]*\)$/, "", n); sub(/.*(::| )/, "", n); printf "%s %.0f KB", n, m / 1024 } }' "$f")
  note sass "HGMMA=$n_hg HMMA=$n_hm over $(echo "$objs" | grep -c . ) kernel objects; largest ${big:-?} (per kernel in logs.tgz/sass_counts.txt)"
}

need_build() {
  if [ $BUILD_OK -eq 0 ] && { [ ! -x "$BUILD/mla_var3" ] || [ ! -x "$BUILD/tests/test_kernels" ]; }; then
    do_build
  fi
}

# A few --check runs of each version named in MLA_VAR3_VERSIONS, each under a short timeout,
# before anything long: a new kernel that hangs or faults is caught in seconds, gets one
# compute-sanitizer memcheck run, and the long stages are skipped (SMOKE_FAILED=1).
SMOKE_FAILED=0
do_smoke() {
  need_build
  local log="$EXTRA/smoke.log" v d c rc nf=0 first="" first_rc=0
  : >"$log"
  [ -z "${MLA_VAR3_VERSIONS:-}" ] && { note smoke "skipped (no MLA_VAR3_VERSIONS)"; return; }
  # (splits=2: the split merge, in the main kernel's cluster from flash_mla_v12 on)
  local cases=("--b=2 --s=1 --t=200 --h=16" "--b=3 --s=4 --t=1000 --h=128 --varlen"
               "--b=2 --s=16 --t=129 --h=16 --causal=0" "--b=3 --s=2 --t=100 --h=64 --varlen --tiling=splits=2"
               "--b=32 --s=1 --t=4096 --h=128")
  for v in ${MLA_VAR3_VERSIONS//,/ }; do
    d=${v%_v[0-9]*}
    for c in "${cases[@]}"; do
      # the headline shape for flash_mla only: the CPU reference of the decompressed designs at
      # b=32,t=4096 needs more than the step's 40 s (flash_attention_v0, mla_var6_plus_v0: rc=124)
      [ "$d" != flash_mla ] && [ "${c#--b=32 }" != "$c" ] && continue
      echo "== $v $c" >>"$log"
      step 40 "$log" "$BUILD/mla_var3" "$d" "$v" $c --check
      rc=$?
      echo "rc=$rc" >>"$log"
      if [ $rc -ne 0 ]; then nf=$((nf + 1)); [ -z "$first" ] && first="$d $v $c" && first_rc=$rc; fi
    done
  done
  if [ $nf -gt 0 ]; then
    SMOKE_FAILED=1
    if [ "$first_rc" = 124 ]; then  # a timeout under memcheck would only time out again
      note smoke "$nf FAILED (first: $first, timed out); later stages skipped"
    else
      note smoke "$nf FAILED (first: $first); memcheck of it in logs.tgz/smoke.log; later stages skipped"
      echo "== memcheck: $first" >>"$log"
      step 90 "$log" compute-sanitizer --tool memcheck --print-limit 20 "$BUILD/mla_var3" $first --check
    fi
  else
    note smoke "all passed"
  fi
}

do_test() {
  need_build
  local t0=$(date +%s) log="$OUT/ctest.log" rc
  : >"$log"
  # every tiling candidate of every version gets a few correctness cases too
  MLA_VAR3_TILING_ALL=1 step "${MLA_CTEST_LIMIT:-300}" "$log" ctest --test-dir "$BUILD" --output-on-failure -j 4
  rc=$?
  local dt=$(( $(date +%s) - t0 ))
  cp "$BUILD/Testing/Temporary/LastTest.log" "$EXTRA/LastTest.log" 2>/dev/null
  local np nf ns
  np=$(grep -cE "Test +#[0-9]+: .* Passed" "$log")
  nf=$(grep -cE "Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Child aborted)" "$log")
  ns=$(grep -cE "Test +#[0-9]+: .*(\*\*\*Skipped|Not Run)" "$log")
  note ctest "$np passed, $nf failed, $ns skipped (rc=$rc, ${dt} s)"
  # each GPU test's own closing line "N passed, M failed, K skipped" (from the full test log)
  local t v
  for t in test_gpu_ref test_kernels test_graph; do
    v=$(awk -v t="$t" '$0 ~ "Testing: " t "$" { on = 1; next }
                       on && /end time:/ { exit }
                       on && (/^[0-9]+ passed, [0-9]+ failed/ || /^SKIP: /) { print; exit }' \
        "$EXTRA/LastTest.log" 2>/dev/null)
    note "$t" "${v:-no verdict line (skipped, crashed or not built)}"
  done
  grep -E "^(FAIL|FATAL)" "$EXTRA/LastTest.log" 2>/dev/null | head -20 >"$EXTRA/failures.txt"
}

do_sanitize() {
  need_build
  local exe="$BUILD/tests/test_kernels"
  if ! command -v compute-sanitizer >/dev/null 2>&1; then
    note sanitizer "compute-sanitizer missing"; return
  fi
  local tool lim
  # MLA_VAR3_SANITIZE_TOOLS=memcheck,synccheck: a subset (racecheck takes longest)
  local tools=${MLA_VAR3_SANITIZE_TOOLS:-memcheck,racecheck,synccheck}
  for tool in ${tools//,/ }; do
    local log="$EXTRA/sanitizer_$tool.log"
    : >"$log"
    case $tool in memcheck) lim=90 ;; racecheck) lim=90 ;; *) lim=60 ;; esac
    MLA_VAR3_VERSIONS=${MLA_VAR3_SANITIZE_VERSIONS:-${MLA_VAR3_VERSIONS:-}} MLA_VAR3_GRID=small \
      MLA_VAR3_TILING=${MLA_VAR3_SANITIZE_TILING-splits=2} step $lim "$log" compute-sanitizer --tool $tool --print-limit 100 "$exe"
    local rc=$?
    local s
    s=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/^=* *//')
    local v
    v=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
    note "$tool" "${s:-no summary} | ${v:-no verdict} (rc=$rc, tiling ${MLA_VAR3_SANITIZE_TILING-splits=2})"
    # keep the returned file well under the 16 MiB limit
    if [ "$(stat -c %s "$log")" -gt 8000000 ]; then
      head -c 4000000 "$log" >"$log.tmp"; echo "... (cut) ..." >>"$log.tmp"; tail -c 2000000 "$log" >>"$log.tmp"
      mv "$log.tmp" "$log"
    fi
  done
}

do_bench() {
  need_build
  local t0 log rc mode
  # MLA_VAR3_BENCH_MODES=graph,flush: the grid once per timing method (MLA_VAR3_TIME_MODE:
  # graph replay, the default, or triton do_bench's flushed eager calls) into bench.txt and
  # bench_flush.txt
  for mode in ${MLA_VAR3_BENCH_MODES:-graph}; do
    mode=${mode//,/ }
    for m in $mode; do
      t0=$(date +%s)
      log="$OUT/bench.txt"
      [ "$m" = graph ] || log="$OUT/bench_$m.txt"
      : >"$log"
      rm -rf /tmp/mla_bench
      # measured ceilings first (cached), so the roofline columns use them; then the grid with
      # each row's tuned tiling (MLA_VAR3_BENCH_AUTOTUNE=0 for the default tilings)
      step 60 "$log" "$BUILD/mla_var3" devices --measure
      local at=--autotune vs=()
      [ "${MLA_VAR3_BENCH_AUTOTUNE:-1}" = 0 ] && at=
      [ -n "${MLA_VAR3_BENCH_VERSIONS:-}" ] && vs=(--versions="$MLA_VAR3_BENCH_VERSIONS")
      # MLA_VAR3_BENCH_PASSES=N: the grid N times, order flipped every second pass (a row's median)
      vs+=(--passes="${MLA_VAR3_BENCH_PASSES:-1}" --pages="${MLA_VAR3_BENCH_PAGES:-random}")  # random|sequential
      # MLA_VAR3_BENCH_COOL=MS: idle MS ms before each row (every row from the same card state)
      vs+=(--cool="${MLA_VAR3_BENCH_COOL:-0}")
      MLA_VAR3_TIME_MODE=$m step "${MLA_BENCH_LIMIT:-300}" "$log" "$BUILD/mla_var3" bench-all --out=/tmp/mla_bench $at "${vs[@]}"
      rc=$?
      note "bench($m)" "rc=$rc ($(( $(date +%s) - t0 )) s), table below; files in logs.tgz/bench_$m"
      [ -d /tmp/mla_bench ] && cp -r /tmp/mla_bench "$EXTRA/bench_$m"
    done
  done
}

# FlashMLA beside mla_var3 in one process (scripts/flashmla_same_call.py): the wheel from
# scripts/fetch_flashmla.sh installed into /tmp/site, the library through its C ABI.
do_anchor() {
  need_build
  local t0=$(date +%s) log="$OUT/anchor.txt" rc whl
  : >"$log"
  whl=$(ls .whl/sgl_flash_mla-*.whl 2>/dev/null | head -1)
  if [ -z "$whl" ]; then
    note anchor "skipped: no .whl/sgl_flash_mla-*.whl (scripts/fetch_flashmla.sh here, carry .whl)"; return
  fi
  step 120 "$log" python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$whl"
  # shellcheck disable=SC2086
  PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 step "${MLA_ANCHOR_LIMIT:-400}" "$log" \
    python3 scripts/flashmla_same_call.py --lib "$BUILD/libmla_var3.so" --json "$EXTRA/anchor.json" ${MLA_ANCHOR_ARGS:-}
  rc=$?
  note anchor "rc=$rc ($(( $(date +%s) - t0 )) s): $(grep -E '^checks' "$log" | tail -1); table in anchor.txt"
}

# ---------------------------------------------------------------------------------------------
setup_deps
record_gpu
want build && do_build
want smoke && do_smoke
if [ $SMOKE_FAILED -eq 0 ]; then
  want test && do_test
  want sanitize && do_sanitize
  want bench && do_bench
  for s_ in "${stages[@]}"; do [ "$s_" = anchor ] && do_anchor; done
fi

# pack the extras (folders inside the tarball may be deep; $OUT itself stays flat)
(cd "$EXTRA" && tar -czf "$OUT/logs.tgz" . 2>/dev/null)
{
  cat "$EXTRA/gpu.txt"
  echo
  echo "== device_run summary ($(( $(date +%s) - START )) s of $BUDGET s budget; stages: ${stages[*]}) =="
  printf '%s\n' "${SUMMARY[@]}"
  if [ -s "$EXTRA/failures.txt" ]; then echo "-- first failures --"; cat "$EXTRA/failures.txt"; fi
  if [ -s "$OUT/anchor.txt" ]; then
    echo "-- anchor (FlashMLA and mla_var3 in one process) --"
    sed -n '/^### /,$p' "$OUT/anchor.txt"
  fi
  for f in "$OUT"/bench.txt "$OUT"/bench_*.txt; do
    [ -s "$f" ] || continue
    echo "-- $(basename "$f" .txt) --"; grep -m1 '^bench-all on' "$f"
    grep '^| ' "$f" | awk -F'|' '$4 ~ /^ *[0-9]+ *$/ {
      printf "%-16s b=%-3d h=%-3d t=%-4d s=%-3d %9.1f us  FlashMLA %7s  FlashMLA/ours %s\n", $3, $4, $5, $6, $7, $9, $14, $15 }'
  done
} >"$OUT/summary.txt"
echo
cat "$OUT/summary.txt"
