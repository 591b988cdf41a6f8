#!/usr/bin/env bash
# Forty-fourth session, call 3 and after (runs there; carry .deps .whl): only on an H200, the card
# of ANCHORS.md, s44_call2.sh's H200 branch (v99 against FlashMLA on the 15 rows, both methods);
# on another card it names the card and stops, to keep device time for another try.
set -uo pipefail
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1 | grep -q H200 \
  || { nvidia-smi --query-gpu=name --format=csv,noheader; echo "not an H200: stopped"; exit 0; }
exec bash "$(dirname "$0")/s44_call2.sh"
