#!/usr/bin/env bash
# scripts/bench_merge.py on two made-up bench-all outputs (tests/data/bench_pass_{a,b}.txt): the
# median, count and range of every version's passes across files, the rates at the median from
# the printed FLOPs and bytes, the floor at the first file's peaks, FlashMLA's figure from either
# file's table, --versions, --ends (the first / last 10 runs' columns), and a clear failure
# without peaks.
# Usage (ctest): test_bench_merge.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
A=$SRC/tests/data/bench_pass_a.txt B=$SRC/tests/data/bench_pass_b.txt
out=$(python3 "$SRC/scripts/bench_merge.py" "$A" "$B") || { echo "the script failed"; exit 1; }
echo "$out"
fail=0
expect() { grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; fail=1; }; }
expect "Median over 2 file(s); floor at 800 TFLOP/s, 4000 GB/s."
# v1: 70, 80, 74 -> 74.0; FLOPs 500e12 * 70e-6 = 3.5e10 -> 473.0 TFLOP/s; bytes 1.4e8 -> 1892 GB/s;
# floor max(43.75, 35.0) us -> 59.1 %; 76.0 / 74.0 = 1.03
expect "| flash_mla | flash_mla_v1 | 32 | 128 | 4096 | 1 | 0 | 74.0 | 3 | 70.0-80.0 | 473.0 | 1892 | 59.1 | 76.0 | 1.03 |"
# v2: 60, 62 -> 61.0; FLOPs 583.3e12 * 60e-6 -> 573.7 TFLOP/s; 2333 GB/s * 60 / 61 -> 2295; 43.75 / 61 -> 71.7 %
expect "| flash_mla | flash_mla_v2 | 32 | 128 | 4096 | 1 | 0 | 61.0 | 2 | 60.0-62.0 | 573.7 | 2295 | 71.7 | 76.0 | 1.25 |"
only=$(python3 "$SRC/scripts/bench_merge.py" "$A" "$B" --versions=flash_mla_v2 --peaks=700,3000)
grep -q "flash_mla_v1 |" <<<"$only" && { echo "--versions kept flash_mla_v1"; fail=1; }
grep -qF "floor at 700 TFLOP/s, 3000 GB/s" <<<"$only" || { echo "--peaks ignored"; fail=1; }
# --ends: the medians over the passes of the log lines' first-10 / last-10 medians; "-" for a row
# whose lines carry none, and no extra columns without the option
E=$SRC/tests/data/bench_pass_ends.txt
ends=$(python3 "$SRC/scripts/bench_merge.py" "$E" --ends)
grep -qF "| 930.0 | 3 | 920.0-940.0 | 593.5 | 297 | 74.2 | - | - | 840.0 | 948.0 |" <<<"$ends" || { echo "--ends s=16: $ends"; fail=1; }
grep -qF "| 120.0 | 1 | 120.0-120.0 | 600.0 | 1400 | 75.0 | - | - | - | - |" <<<"$ends" || { echo "--ends s=2: $ends"; fail=1; }
grep -qF "first 10 us" <<<"$out" && { echo "ends columns without --ends"; fail=1; }
T=${3:-/tmp}
grep -v "Roofline" "$A" >"$T/bench_merge_nopeaks.txt"
python3 "$SRC/scripts/bench_merge.py" "$T/bench_merge_nopeaks.txt" >/dev/null 2>"$T/bench_merge_err.txt"
rc=$?
[ $rc = 1 ] && grep -q "no measured peaks" "$T/bench_merge_err.txt" || { echo "no failure without peaks (rc=$rc)"; fail=1; }
rm -f "$T/bench_merge_nopeaks.txt" "$T/bench_merge_err.txt"
[ $fail = 0 ] && echo "bench_merge: ok"
exit $fail
