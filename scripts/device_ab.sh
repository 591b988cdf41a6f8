#!/usr/bin/env bash
# device_ab.sh - runs THERE after `scripts/device_run.sh build`: an A/B of kernel versions on one
# shape with the order alternated, so that a version is not always the one measured second (on
# the H200 under its 700 W cap one bench row moved by up to 10 % between two runs a minute apart).
# Usage: bash scripts/device_ab.sh "flash_mla_v9 flash_mla_v11" "--b=128 --s=1 --t=8192 --h=128" [rounds]
# Each round runs every version once with --prof_type=event (median of the CLI's replays), in
# order in odd rounds and reversed in even ones, and samples nvidia-smi (SM clock, power) while
# it runs. Prints one line per measurement and, last, each version's median over the rounds.
# Writes $OUT/ab.txt. Reads the device only (no clock, power or mode is set).
set -uo pipefail
VERSIONS=${1:?versions}
SHAPE=${2:?shape args}
ROUNDS=${3:-6}
B=${MLA_BUILD_DIR:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
read -ra VS <<<"$VERSIONS"
{
  echo "A/B $VERSIONS on $SHAPE, $ROUNDS rounds"
  for ((r = 1; r <= ROUNDS; r++)); do
    order=("${VS[@]}")
    if ((r % 2 == 0)); then
      order=(); for ((i = ${#VS[@]} - 1; i >= 0; i--)); do order+=("${VS[i]}"); done
    fi
    for v in "${order[@]}"; do
      d=${v%_v[0-9]*}
      nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 >/tmp/ab_smi.csv 2>&1 &
      p=$!
      # shellcheck disable=SC2086
      res=$(timeout 60 "$B/mla_var3" "$d" "$v" $SHAPE --prof_type=event 2>&1)
      us=$(awk '/^total:/ { print $2 }' <<<"$res")
      # the run's two ends (the CLI's "first 10 runs X us, last 10 Y"): uncapped and power-capped
      # on an H200 started idle (flash_mla devlog, twenty-sixth session)
      ends=$(awk '/^  first [0-9]+ runs/ { printf " [first %s, last %s]", $4, $8 }' <<<"$res")
      kill $p 2>/dev/null; wait $p 2>/dev/null
      smi=$(awk -F', *' 'NF >= 2 { n++; c += $1; w += $2 } END { if (n) printf "SM %.0f MHz, %.0f W", c / n, w / n }' /tmp/ab_smi.csv)
      [ -n "$us" ] && us="$us us" || us=FAILED
      echo "round $r $v $us ($smi)$ends"
    done
  done
} | tee "$OUT/ab.txt"
echo "medians:" | tee -a "$OUT/ab.txt"
awk '/^round/ && $4 != "FAILED" { n[$3]++; v[$3, n[$3]] = $4 }
     END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i];
             for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
             printf "  %-16s %8.1f us (%d rounds)\n", k, (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2), m } }' \
  "$OUT/ab.txt" | tee -a "$OUT/ab.txt"
