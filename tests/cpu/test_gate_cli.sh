#!/usr/bin/env bash
# `mla_var3 gate` on two small fake Nsight Compute CSVs (tests/data/ncu_move.csv: 1 CTA/SM with
# 0.37 eligible warps per scheduler; ncu_stay.csv: 2 CTAs/SM, 1.85 eligible) and on bad input.
# Usage: test_gate_cli.sh <mla_var3> <source dir> <build dir>
set -u
CLI=${1:?usage: test_gate_cli.sh CLI SRC BUILD}
SRC=${2:?}
BUILD=${3:?}
D="$SRC/tests/data"
WORK="$BUILD/test_gate_cli_work"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

decide() {  # expected decision, args...
    local want=$1; shift
    "$CLI" gate "$@" >out.txt 2>err.txt
    local rc=$?
    if [ $rc -eq 0 ] && grep -q "^decision: $want\$" out.txt; then ok
    else bad "gate $* -> rc=$rc, wanted '$want': $(grep decision out.txt) $(cat err.txt)"; fi
}
decide "move to hopper" --ncu="$D/ncu_move.csv" --needs=producer_consumer,tma_pipeline
decide "move to hopper" --ncu="$D/ncu_move.csv" --needs=wgmma
decide "stay portable"  --ncu="$D/ncu_move.csv" --needs=wgmma,tile_size       # a portable step remains
decide "stay portable"  --ncu="$D/ncu_move.csv" --needs=split_count
decide "stay portable"  --ncu="$D/ncu_stay.csv" --needs=producer_consumer      # no evidence
decide "stay portable"  --ncu="$D/ncu_move.csv" --needs=wgmma --kernel=combine  # the combine kernel is fine
decide "stay portable"  --ncu="$D/ncu_move.csv" --needs=wgmma --eligible=0.2   # stricter threshold

# the reasons name the metrics, the threshold and the rule
"$CLI" gate --ncu="$D/ncu_move.csv" --needs=tma_pipeline >out.txt 2>&1
grep -q "eligible warps per scheduler = 0.37" out.txt && ok || bad "no eligible-warps reason: $(cat out.txt)"
grep -q "CTAs per SM = 1" out.txt && ok || bad "no CTAs/SM reason"
grep -q "rule:" out.txt && ok || bad "no rule line"
grep -q "230400" out.txt && ok || bad "thousands separator inside quotes not parsed (230,400)"

if command -v python3 >/dev/null; then
    "$CLI" gate --ncu="$D/ncu_move.csv" --needs=wgmma --json 2>/dev/null >g.json
    python3 -c "import json; d=json.load(open('g.json')); assert d['decision']=='move to hopper' and d['ctas_per_sm']==1" \
        && ok || bad "gate --json: $(cat g.json)"
fi

# a CSV missing the evidence metrics cannot move anything, and says what is missing
printf '"ID","Kernel Name","launch__registers_per_thread"\n"","","register/thread"\n"0","k","96"\n' >missing.csv
decide "stay portable" --ncu=missing.csv --needs=wgmma
"$CLI" gate --ncu=missing.csv --needs=wgmma 2>&1 | grep -q "missing metrics:.*smsp__warps_eligible" && ok \
    || bad "missing metrics not reported"

# bad input: exit 2, one line
bad_input() {
    "$CLI" gate "$@" >/dev/null 2>err.txt
    local rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && ok || bad "gate $* -> rc=$rc: $(cat err.txt)"
}
bad_input --ncu=/nonexistent.csv --needs=wgmma
bad_input --ncu="$D/ncu_move.csv" --needs=warp_magic
bad_input --ncu="$D/ncu_move.csv"
bad_input --needs=wgmma
bad_input --ncu="$D/ncu_move.csv" --needs=wgmma --kernel=no_such_kernel
bad_input --ncu="$D/ncu_move.csv" --needs=wgmma --bogus
printf 'just some text\nno header here\n' >junk.csv
bad_input --ncu=junk.csv --needs=wgmma

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && exit 0 || exit 1
