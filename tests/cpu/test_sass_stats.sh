#!/usr/bin/env bash
# scripts/sass_stats.sh on a saved cuobjdump dump (tests/data/sass_small.txt): two architectures,
# a function in both, sizes from the last instruction's offset, HGMMA and HMMA counted apart.
# Usage (ctest): test_sass_stats.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
out=$(bash "$SRC/scripts/sass_stats.sh" --text "$SRC/tests/data/sass_small.txt") || { echo "the script failed"; exit 1; }
echo "$out"
want=$'sm_80 kernB BYTES=256 HGMMA=0 HMMA=1\nsm_90a kernA BYTES=64 HGMMA=1 HMMA=0\nsm_90a kernB BYTES=48 HGMMA=0 HMMA=2'
[ "$out" = "$want" ] || { echo "expected:"; echo "$want"; exit 1; }
echo "sass_stats: ok"
