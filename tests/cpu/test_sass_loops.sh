#!/usr/bin/env bash
# scripts/sass_loops.py --check on generated SASS text: a clean wgmma loop passes; one with a
# WARPGROUP.ARRIVE before every HGMMA (ptxas's serialised wgmma, the twentieth session's slow
# flash_mla_v34 build) fails, and so does one with a WARPSYNC (flash_mla_v24's slow first build).
# Usage (ctest): test_sass_loops.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v python3 >/dev/null || { echo "skipped: python3 not found"; exit 77; }

# loop KIND > file: one function whose loop (a backward branch to 0x0010) holds 16 HGMMA.
#   clean: one WARPGROUP.ARRIVE for every four HGMMA; serial: one before each; warpsync: clean + WARPSYNC
loop() {
  local kind=$1 a=16 i
  printf '\t\tFunction : kern_%s\n' "$kind"
  printf '        /*%04x*/                   LDC R1, c[0x0][0x28] ;\n' 0
  for i in $(seq 0 15); do
    if [ "$kind" = serial ] || [ $((i % 4)) = 0 ]; then
      printf '        /*%04x*/                   WARPGROUP.ARRIVE ;\n' $a; a=$((a + 16))
    fi
    printf '        /*%04x*/                   HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], R152 ;\n' $a; a=$((a + 16))
  done
  [ "$kind" = warpsync ] && { printf '        /*%04x*/                   WARPSYNC.ALL ;\n' $a; a=$((a + 16)); }
  printf '        /*%04x*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n' $a; a=$((a + 16))
  printf '        /*%04x*/                   @P0 BRA 0x10 ;\n' $a; a=$((a + 16))
  printf '        /*%04x*/                   EXIT ;\n' $a
}

fail=0
for kind in clean serial warpsync; do
  loop $kind >"$TMP/$kind.txt"
  python3 "$SRC/scripts/sass_loops.py" --check "$TMP/$kind.txt" >"$TMP/$kind.out" 2>&1
  rc=$?
  want=1
  [ $kind = clean ] && want=0
  if [ $rc != $want ]; then
    echo "FAIL $kind: --check exited $rc, expected $want"; cat "$TMP/$kind.out"; fail=1
  else
    echo "ok   $kind: exit $rc ($(tail -1 "$TMP/$kind.out"))"
  fi
done
grep -q "serialised" "$TMP/serial.out" || { echo "FAIL serial: no 'serialised' reason"; fail=1; }
[ $fail = 0 ] && echo "sass_loops: ok"
exit $fail
