#!/usr/bin/env bash
# scripts/device_ab.sh against stand-ins for the CLI and nvidia-smi (no GPU needed): the order of
# the versions alternates between rounds, a failed run is reported and left out of the medians,
# and each version's median is the middle of its rounds.
# Usage (ctest): test_device_ab.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/build" "$T/bin"
# fake CLI: flash_mla_v1 takes 100, 101, 102, ... us on successive calls; flash_mla_v2 200 us,
# except its third call, which fails
cat >"$T/build/mla_var3" <<'FAKE'
#!/usr/bin/env bash
f="$(dirname "$0")/count_$2"; n=$(( $(cat "$f" 2>/dev/null || echo 0) + 1 )); echo $n >"$f"
echo "$2" >>"$(dirname "$0")/calls"
case "$2" in
  flash_mla_v1) echo "total: $((99 + n)).0 us (median of 30, min 90.0)"; echo "  first 10 runs 95.0 us, last 10 $((99 + n)).5" ;;
  flash_mla_v2) [ $n = 3 ] && { echo "error: launch failed" >&2; exit 1; }; echo "total: 200.0 us (median of 30, min 190.0)" ;;
esac
FAKE
printf '#!/usr/bin/env bash\nwhile true; do echo "1785, 690.0"; sleep 0.05; done\n' >"$T/bin/nvidia-smi"
chmod +x "$T/build/mla_var3" "$T/bin/nvidia-smi"
out=$(PATH="$T/bin:$PATH" MLA_BUILD_DIR="$T/build" OUT="$T/out" \
      bash "$SRC/scripts/device_ab.sh" "flash_mla_v1 flash_mla_v2" "--b=2 --s=1" 4 2>&1) || {
  echo "the script failed"; echo "$out"; exit 1; }
echo "$out"
fail=0
expect() { grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; fail=1; }; }
expect "round 1 flash_mla_v1 100.0 us (SM 1785 MHz, 690 W) [first 95.0, last 100.5]"
expect "round 3 flash_mla_v2 FAILED (SM"
expect "flash_mla_v1        101.5 us (4 rounds)"
expect "flash_mla_v2        200.0 us (3 rounds)"
calls=$(tr '\n' ' ' <"$T/build/calls")
[ "$calls" = "flash_mla_v1 flash_mla_v2 flash_mla_v2 flash_mla_v1 flash_mla_v1 flash_mla_v2 flash_mla_v2 flash_mla_v1 " ] || {
  echo "order not alternated: $calls"; fail=1; }
[ -s "$T/out/ab.txt" ] || { echo "no ab.txt"; fail=1; }
[ $fail = 0 ] && echo "device_ab: ok"
exit $fail
