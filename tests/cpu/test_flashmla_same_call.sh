#!/usr/bin/env bash
# scripts/flashmla_same_call.py without a GPU: its pure parts (--selftest: the series statistics,
# the alternation of the two kernels, the flush method's run counts, --only, the merged table and
# its FlashMLA / mla_var3 ratio, --merge of saved outputs), and a clear refusal, not a traceback,
# where PyTorch or the FlashMLA wheel is missing (as on CI).
# Usage (ctest): test_flashmla_same_call.sh <mla_var3> <source dir> <build dir>
set -uo pipefail
SRC=$2
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
S=$SRC/scripts/flashmla_same_call.py
fail=0
out=$(python3 "$S" --selftest)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "--selftest exited $rc"; fail=1; }
grep -qE "^[0-9]+ passed, 0 failed$" <<<"$out" || { echo "--selftest verdict line missing or failing"; fail=1; }
if ! python3 -c "import torch, flash_mla" >/dev/null 2>&1; then
  msg=$(python3 "$S" --lib /nonexistent 2>&1)
  rc=$?
  echo "$msg"
  [ $rc -eq 2 ] || { echo "without torch/flash_mla: exit $rc, expected 2"; fail=1; }
  grep -q "needs PyTorch" <<<"$msg" || { echo "without torch/flash_mla: no clear message"; fail=1; }
  grep -q "Traceback" <<<"$msg" && { echo "without torch/flash_mla: a traceback"; fail=1; }
fi
[ $fail -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
