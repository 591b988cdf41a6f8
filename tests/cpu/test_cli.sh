#!/usr/bin/env bash
# The mla_var3 command end to end, no GPU needed: --help of every command, strict argument
# errors (one stderr line naming the flag, nothing run), list/devices, clone, and small CPU
# reference runs with --check --json and their run folders. With a GPU present the CPU-only
# assertions are skipped. Usage: test_cli.sh <mla_var3> <source dir> <build dir>
set -u
CLI=${1:?usage: test_cli.sh CLI SRC BUILD}
SRC=${2:?}
BUILD=${3:?}
WORK="$BUILD/test_cli_work"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export MLA_VAR3_CACHE_DIR="$WORK/cache"
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
have_py=0; command -v python3 >/dev/null && have_py=1

# --- --help after every command, and --version ---
for args in "--help" "-h" "list --help" "devices --help" "gate --help" "bench-all --help" \
            "clone --help" "flash_mla --help" "flash_attention --help" "mla_var6_plus --help" \
            "flash_mla v0 --help" "flash_mla --b=0 --help" "gate --ncu=x --help" "--version"; do
    # shellcheck disable=SC2086
    if "$CLI" $args >out.txt 2>err.txt && [ -s out.txt ]; then ok; else bad "'$args' should exit 0 with text"; fi
done
if "$CLI" >/dev/null 2>&1; then bad "no arguments should be an error"; else ok; fi

# --- strict parsing: exit 2, one stderr line naming the flag, nothing run ---
check_bad() {  # design, flag-text-to-find, args...
    local design=$1 want=$2; shift 2
    rm -rf out
    "$CLI" "$design" "$@" >out.txt 2>err.txt
    local rc=$?
    local lines; lines=$(wc -l <err.txt)
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$want" err.txt && [ ! -s out.txt ] && [ ! -e out ]; then
        ok
    else
        bad "$design $* -> rc=$rc, $lines stderr line(s): $(head -c 300 err.txt) stdout: $(head -c 200 out.txt)"
    fi
}
for d in flash_mla flash_attention mla_var6_plus; do
    check_bad $d "--foo" --foo
    check_bad $d "--b=0" --b=0
    check_bad $d "--s=-1" --s=-1
    check_bad $d "--t=abc" --t=abc
    check_bad $d "--s=5000" --s=5000
    check_bad $d "--s=9" --t=8 --s=9
    check_bad $d "--h=0" --h=0
    check_bad $d "--b" --b
    check_bad $d "--t=" --t=
    check_bad $d "--causal=2" --causal=2
    check_bad $d "--scale=-1" --scale=-1
    check_bad $d "--prof_type=bogus" --prof_type=bogus
    check_bad $d "--tiling=nokey=1" --tiling=nokey=1
    check_bad $d "v9999" v9999  # (a version no design registers; v99 was one until flash_mla_v99)
    check_bad $d "vx" vx
    check_bad $d "--json=1" --json=1
done
check_bad mla_var6_plus "--n=5000" --n=5000
check_bad mla_var6_plus "--n=100" --t=64 --n=100
check_bad mla_var6_plus "--n=-1" --n=-1
check_bad flash_mla "--n=10" --n=10
if "$CLI" no_such_design >/dev/null 2>err.txt; then bad "unknown command accepted"; else
    [ "$(wc -l <err.txt)" -eq 1 ] && ok || bad "unknown command: $(cat err.txt)"; fi

# --- list / devices ---
if "$CLI" list >list.txt 2>&1; then ok; else bad "list exit $?"; fi
for d in flash_attention flash_mla mla_var6_plus; do grep -q "$d" list.txt && ok || bad "list does not mention $d"; done
if "$CLI" devices >dev.txt 2>&1; then ok; else bad "devices exit $?"; fi
grep -q "H200" dev.txt && ok || bad "devices does not mention H200"
if [ $have_py -eq 1 ]; then
    "$CLI" list --json 2>/dev/null | python3 -m json.tool >/dev/null && ok || bad "list --json is not JSON"
fi

gpu=1
grep -q "no CUDA GPU detected" dev.txt && gpu=0

# --- clone on a fake tree ---
FAKE="$WORK/fake"
mkdir -p "$FAKE/src/kernels/portable/mla/flash_mla/flash_mla_v1"
cat >"$FAKE/src/kernels/portable/mla/flash_mla/flash_mla_v1/flash_mla_v1.cu" <<'CU'
__global__ void flash_mla_v1(int x) {}
__global__ void flash_mla_v1_combine(int x) {}
static int flash_mla_v10_unrelated;
const mla_kernel_version mla_kv_flash_mla_v1 = { .name = "flash_mla_v1", .version = 1 };
CU
cat >"$FAKE/src/kernels/portable/mla/flash_mla/flash_mla_v1/flash_mla_v1_reg.c" <<'CU'
extern "C" const mla_kernel_version mla_kv_flash_mla_v1 = {
    "flash_mla_v1", MLA_DESIGN_FLASH_MLA, 1, MLA_TIER_PORTABLE, MLA_TARGET_SM80_PLUS,
CU
if "$CLI" clone flash_mla_v1 v4 --root="$FAKE" >clone.txt 2>&1; then ok; else bad "clone exit $?: $(cat clone.txt)"; fi
NEW="$FAKE/src/kernels/portable/mla/flash_mla/flash_mla_v4/flash_mla_v4.cu"
if [ -f "$NEW" ] && grep -q "void flash_mla_v4(" "$NEW" && grep -q "flash_mla_v4_combine" "$NEW" \
   && grep -q "mla_kv_flash_mla_v4" "$NEW" && grep -q '.version = 4' "$NEW" \
   && grep -q "flash_mla_v10_unrelated" "$NEW" && ! grep -q "flash_mla_v1\b" "$NEW"; then ok
else bad "clone output wrong: $(cat "$NEW" 2>/dev/null)"; fi
grep -q '"flash_mla_v4", MLA_DESIGN_FLASH_MLA, 4,' "${NEW%.cu}_reg.c" 2>/dev/null && ok \
    || bad "clone: positional registration not renumbered: $(cat "${NEW%.cu}_reg.c" 2>/dev/null)"
grep -q "mla_kv_flash_mla_v4" clone.txt && ok || bad "clone does not print the registry line"
if "$CLI" clone flash_mla_v1 v4 --root="$FAKE" >/dev/null 2>&1; then bad "clone over an existing version"; else ok; fi
if "$CLI" clone flash_mla_v7 v8 --root="$FAKE" >/dev/null 2>&1; then bad "clone of a missing version"; else ok; fi

# --- bench-all --dry-run: the grid in run order, a problem's versions reversed on every second
#     problem unless --order=registry (no GPU work either way) ---
order_of() {  # the versions of the first two problems, in run order, one line
    "$CLI" bench-all --dry-run --versions=flash_mla_v9,flash_mla_v12 "$@" 2>err.txt | awk 'NR > 1 && NR <= 5 { printf "%s ", $2 }'
}
o=$(order_of)
[ "$o" = "flash_mla_v9 flash_mla_v12 flash_mla_v12 flash_mla_v9 " ] && ok || bad "bench-all --dry-run order: '$o' $(cat err.txt)"
o=$(order_of --order=registry)
[ "$o" = "flash_mla_v9 flash_mla_v12 flash_mla_v9 flash_mla_v12 " ] && ok || bad "bench-all --order=registry: '$o'"
n=$("$CLI" bench-all --dry-run --versions=flash_mla_v12 | head -1)
[ "$n" = "bench-all dry run: 16 rows, order alternate" ] && ok || bad "flash_mla_v12 grid: '$n' (16 rows expected)"
# --passes=2: the second pass runs every problem's versions in the other order (so each version
# is measured once first and once second), and the grid twice
o=$("$CLI" bench-all --dry-run --versions=flash_mla_v9,flash_mla_v12 --passes=2 2>err.txt |
    awk 'NR == 1 { head = $0 } NR == 34 || NR == 35 { printf "%s ", $2 } END { printf "| %s", head }')
[ "$o" = "flash_mla_v12 flash_mla_v9 | bench-all dry run: 32 rows, order alternate, 2 passes" ] && ok \
    || bad "bench-all --passes=2 order: '$o' $(cat err.txt)"
o=$("$CLI" bench-all --dry-run --versions=flash_mla_v9,flash_mla_v12 --passes=2 --order=registry | awk 'NR == 34 || NR == 35 { printf "%s ", $2 }')
[ "$o" = "flash_mla_v9 flash_mla_v12 " ] && ok || bad "bench-all --passes=2 --order=registry: '$o'"
"$CLI" bench-all --dry-run --passes=0 >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q -- "--passes=0" err.txt && ok || bad "bench-all --passes=0: rc=$rc $(cat err.txt)"
# --pages: the dry run says when the caches' pages will be laid out in order; a bad value is a usage error
h=$("$CLI" bench-all --dry-run --versions=flash_mla_v12 --pages=sequential | head -1)
[ "$h" = "bench-all dry run: 16 rows, order alternate, pages sequential" ] && ok || bad "bench-all --pages=sequential: '$h'"
h=$("$CLI" bench-all --dry-run --versions=flash_mla_v12 --cool=2000 | head -1)
[ "$h" = "bench-all dry run: 16 rows, order alternate, cool 2000 ms" ] && ok || bad "bench-all --cool=2000: '$h'"
"$CLI" bench-all --dry-run --cool=-5 >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q -- "--cool=-5" err.txt && ok || bad "bench-all --cool=-5: rc=$rc $(cat err.txt)"
"$CLI" bench-all --dry-run --pages=shuffled >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q -- "--pages=shuffled" err.txt && ok || bad "bench-all --pages=shuffled: rc=$rc $(cat err.txt)"
"$CLI" flash_mla --pages=bogus >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q -- "--pages=bogus" err.txt && ok || bad "flash_mla --pages=bogus: rc=$rc $(cat err.txt)"
"$CLI" bench-all --order=fastest >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q -- "--order=fastest" err.txt && ok || bad "bench-all --order=fastest: rc=$rc $(cat err.txt)"

if [ $gpu -eq 1 ]; then
    echo "a GPU is present: CPU-only assertions skipped"
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ] && exit 0 || exit 1
fi

# --- no GPU: bench-all and devices --measure say so ---
"$CLI" bench-all >/dev/null 2>err.txt; rc=$?
[ $rc -eq 3 ] && grep -q "bench-all needs a GPU" err.txt && ok || bad "bench-all without GPU: rc=$rc $(cat err.txt)"
"$CLI" devices --measure >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] && ok || bad "devices --measure without GPU: rc=$rc"

# --- small CPU runs: --check --json, valid JSON, check.pass, a run folder ---
cpu_run() {
    rm -rf out
    "$CLI" "$@" --check --json >run.json 2>run.err
    local rc=$?
    [ $rc -eq 0 ] && ok || { bad "$* -> rc=$rc: $(tail -3 run.err)"; return; }
    grep -q "no CUDA GPU found: running the CPU reference" run.err && ok || bad "$*: no CPU-reference notice"
    if [ $have_py -eq 1 ]; then
        python3 -m json.tool run.json >/dev/null && ok || { bad "$*: stdout is not one JSON object"; return; }
        python3 - run.json <<'PY' && ok || bad "$*: JSON content: $(head -c 400 run.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["check"]["pass"] is True, d["check"]
assert d["device"] is None and d["mode"] == "cpu-reference"
assert d["timings"]["ref_ms"] >= 0
for k in ("rel_l2", "max_err", "lse_err", "message"): assert k in d["check"], k
PY
    fi
    local dir; dir=$(find out/profiles/cpu -name params.json -printf '%h\n' 2>/dev/null | head -1)
    if [ -n "$dir" ] && [ -d "$dir/tiling" ] && [ -d "$dir/compiled" ] && [ -f "$dir/result.json" ]; then ok
    else bad "$*: run folder incomplete ($dir): $(find out 2>/dev/null | head -20)"; fi
}
cpu_run flash_mla --b=2 --s=2 --t=70 --h=16
cpu_run flash_attention --b=2 --s=3 --t=40 --h=16
cpu_run mla_var6_plus --b=2 --s=2 --t=70 --h=16 --n=30
cpu_run mla_var6_plus --b=2 --s=1 --t=65 --h=16 --varlen --seed=7

# the default n of mla_var6_plus is t/2, and it says so
"$CLI" mla_var6_plus --b=1 --s=1 --t=64 --h=16 >run.txt 2>&1 && grep -q "n = t/2 = 32" run.txt && ok \
    || bad "mla_var6_plus default n: $(cat run.txt)"
# big problems warn about the CPU (not run: --t=abc style errors aside, only parse the notice path)
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && exit 0 || exit 1
