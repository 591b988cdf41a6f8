#!/usr/bin/env bash
# scripts/ncu_source_summary.py on a five-instruction source page (tests/data/ncu_source_small.csv):
# totals, reasons and the region cuts at barriers, wgmma waits and mbarrier waits; and samples
# that no stall_* column names (tests/data/ncu_source_unnamed.csv) counted as "unnamed".
# Usage (ctest): test_ncu_source_summary.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
out=$(python3 "$SRC/scripts/ncu_source_summary.py" "$SRC/tests/data/ncu_source_small.csv" 3 --regions) || {
  echo "the script failed"; exit 1; }
echo "$out"
fail=0
expect() { grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; fail=1; }; }
expect "5 instructions, 100 samples"
expect "by reason: barrier 55.0%, wait 40.0%, long_sb 5.0%"
expect "0x00030 35.00%  WARPGROUP.DEPBAR.LE gsb0, 0x0"
expect "0x00000-0x00010  10.00%  n=   1"
expect "0x00010-0x00030  50.00%  n=   2"
expect "0x00030-0x00040  35.00%  n=   1"
expect "0x00040-0x00050   5.00%  n=   1"
# samples no stall_* column accounts for (Hopper's gmma reason has no source-page column)
out=$(python3 "$SRC/scripts/ncu_source_summary.py" "$SRC/tests/data/ncu_source_unnamed.csv" 2) || {
  echo "the script failed on the unnamed case"; exit 1; }
echo "$out"
expect "by reason: unnamed 66.0%, wait 34.0%"
expect "0x00000 40.00%  WARPGROUP.ARRIVE"
grep -qE "0x00000 40.00%  WARPGROUP.ARRIVE +unnamed 90%, wait 10%" <<<"$out" || { echo "missing: ARRIVE's unnamed share"; fail=1; }
[ $fail = 0 ] && echo "ncu_source_summary: ok"
exit $fail
