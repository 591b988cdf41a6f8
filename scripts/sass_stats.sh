#!/usr/bin/env bash
# sass_stats.sh - per kernel function of CUDA objects: architecture, name, SASS size in bytes, and
# its HGMMA (wgmma) and HMMA (mma.sync) instruction counts. A kernel's size is worth watching
# beside its registers and spills: flash_mla's split-merge kernel at 161 KB of SASS reached its
# first S ~4000 SM cycles later than at 124 KB, its warps stalled for instructions 0.82 times per
# issue against 0.45 (eleventh session, docs/kernels/flash_mla.md).
# Usage: scripts/sass_stats.sh OBJ...          runs `cuobjdump --dump-sass` on each (CUOBJDUMP=path
#                                              picks the binary; default: PATH, then the
#                                              nvidia-cuda-cuobjdump pip package's)
#        scripts/sass_stats.sh --text FILE...  reads cuobjdump's output saved in FILE
# Output: "<arch> <name> BYTES=n HGMMA=n HMMA=n", one line a function, sorted; exit 2 if cuobjdump
# is needed and not found.
set -uo pipefail

stats() {  # cuobjdump's SASS text on stdin
  awk '
    function hex(s,   i, v) {
      v = 0; s = tolower(s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    /code for sm_/ { arch = $NF }
    /Function :/ { fn = arch " " $3; seen[fn] = 1 }
    fn != "" && match($0, /\/\*[0-9a-f]+\*\//) {   # an instruction: its offset (16 bytes each)
      end = hex(substr($0, RSTART + 2, RLENGTH - 4)) + 16
      if (end > size[fn]) size[fn] = end
    }
    fn != "" && /HGMMA/ { hg[fn]++ }
    fn != "" && /HMMA/ { hm[fn]++ }
    END { for (k in seen) printf "%s BYTES=%d HGMMA=%d HMMA=%d\n", k, size[k], hg[k], hm[k] }' | sort
}

if [ "${1:-}" = --text ]; then
  shift
  for f in "$@"; do stats <"$f"; done
  exit 0
fi
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || true)}
if [ -z "$CUOBJDUMP" ]; then
  for c in $(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "bin", "cuobjdump")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
    [ -x "$c" ] && { CUOBJDUMP=$c; break; }
  done
fi
[ -n "$CUOBJDUMP" ] || { echo "sass_stats.sh: cuobjdump not found (set CUOBJDUMP)" >&2; exit 2; }
for o in "$@"; do timeout 60 "$CUOBJDUMP" --dump-sass "$o" 2>/dev/null | stats; done
