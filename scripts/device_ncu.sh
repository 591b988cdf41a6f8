#!/usr/bin/env bash
# Nsight Compute evidence for the devlogs: the suitability-gate metrics of each v0's kernels on
# one headline shape per design. Runs THERE after `scripts/device_run.sh build`.
# Usage: scripts/device_ncu.sh [build dir] [v0|hopper]; writes $OUT/ncu_<name>.csv and prints the
# gate. `hopper`: the hopper flash_mla versions (v1, v2) on b=32 s=16 (compute-bound) and
# b=128 h=16 s=1 (memory-bound), with the SpeedOfLight/Occupancy/WarpState/Memory/Scheduler
# sections too; MLA_NCU_VERSIONS="a b" picks other versions, MLA_NCU_SHAPES="s16 h16 s1 t8k" the
# shapes (s1: b=32 s=1, the decode row; t8k: b=128 h=128 s=1 t=8192; also s64, b64s1 and t8ks2,
# t=8192 s=2). `anchor`: FlashMLA's kernels and mla_var3's on the same rows and inputs, in one
# process each row (scripts/flashmla_same_call.py --passes 0: the check's calls only; needs .whl/
# from scripts/fetch_flashmla.sh carried), the same metrics and sections as `hopper`; rows from
# MLA_NCU_ANCHOR_ROWS ("b,h,t,s b,h,t,s ..."; "none": no row), CSVs packed into $OUT/ncu_anchor.tgz;
# MLA_NCU_ANCHOR_SOURCE="b,h,t,s" adds both main kernels' per-instruction stall sampling on a row. `source`: per-SASS-
# instruction stall sampling, see below.
set -uo pipefail
B=${1:-build}
WHICH=${2:-v0}
OUT=${OUT:-/tmp/out}
CLI="$B/mla_var3"
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
M=launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,smsp__warps_eligible.avg.per_cycle_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum
prof() {  # name, kernel regex, CLI args...
  local name=$1 re=$2; shift 2
  timeout 150 ncu --clock-control none --csv --page raw -k "regex:$re" -c 4 --metrics "$M" "${SECTIONS[@]}" \
      "$CLI" "$@" > "$OUT/ncu_$name.csv" 2>"$OUT/ncu_$name.err"
  echo "== $name: $*"
  "$CLI" gate --ncu="$OUT/ncu_$name.csv" --needs=tile_size,occupancy 2>&1 | tail -18
}
SECTIONS=()
if [ "$WHICH" = source ]; then
  # Per-instruction warp-state sampling (where the warps of one launch wait, by SASS line) for
  # MLA_NCU_VERSIONS (default flash_mla_v7; a name ending in _merge profiles that version's split
  # merge kernel) on b=32 s=16 (MLA_NCU_SRC_ARGS: other CLI shape flags); the source page goes to
  # $OUT/ncu_src_<version>.csv, summarised here by scripts/ncu_source_summary.py.
  for v in ${MLA_NCU_VERSIONS:-flash_mla_v7}; do
    timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats -k "regex:$v" -c 1 \
        -f -o "/tmp/src_$v" "$CLI" flash_mla "${v%_merge}" ${MLA_NCU_SRC_ARGS:---b=32 --s=16 --t=4096 --h=128} \
        >"$OUT/ncu_src_$v.err" 2>&1
    ncu -i "/tmp/src_$v.ncu-rep" --page source --csv --print-source sass >"$OUT/ncu_src_$v.csv" 2>>"$OUT/ncu_src_$v.err" ||
      ncu -i "/tmp/src_$v.ncu-rep" --page source --csv >"$OUT/ncu_src_$v.csv" 2>>"$OUT/ncu_src_$v.err"
    ncu -i "/tmp/src_$v.ncu-rep" --page details --csv >"$OUT/ncu_src_${v}_details.csv" 2>>"$OUT/ncu_src_$v.err"
    echo "== source $v: $(wc -l <"$OUT/ncu_src_$v.csv") lines"; tail -3 "$OUT/ncu_src_$v.err"
  done
  exit 0
fi
if [ "$WHICH" = anchor ]; then
  SECTIONS=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis
            --section MemoryWorkloadAnalysis --section SchedulerStats --section LaunchStats)
  whl=$(ls .whl/sgl_flash_mla-*.whl 2>/dev/null | head -1)
  [ -n "$whl" ] || { echo "anchor: no .whl/sgl_flash_mla-*.whl (scripts/fetch_flashmla.sh here, carry .whl)"; exit 1; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$whl"
  D=/tmp/ncu_anchor; rm -rf "$D"; mkdir -p "$D"
  for row in ${MLA_NCU_ANCHOR_ROWS:-32,128,4096,1 32,128,4096,2 32,128,4096,8 32,128,4096,16 64,128,4096,1 128,128,8192,2 128,16,8192,1}; do
    [ "$row" = none ] && continue
    n=${row//,/_}
    PYTHONPATH=/tmp/site timeout 200 ncu --clock-control none -f -o "$D/r_$n" \
        -k "regex:flash_mla_v|flash_fwd_splitkv_mla_kernel|flash_fwd_mla_combine_kernel" \
        --metrics "$M,launch__grid_size,launch__block_size,sm__cycles_elapsed.avg,smsp__inst_executed.sum" "${SECTIONS[@]}" \
        python3 scripts/flashmla_same_call.py --lib "$B/libmla_var3.so" --only "$row" --passes 0 >"$D/r_$n.log" 2>&1
    echo "== anchor ncu $row: rc=$? $(grep -c '==PROF== Profiling' "$D/r_$n.log") kernels profiled"
    ncu -i "$D/r_$n.ncu-rep" --csv --page raw >"$D/r_$n.csv" 2>>"$D/r_$n.log"
    rm -f "$D/r_$n.ncu-rep"
  done
  # MLA_NCU_ANCHOR_SOURCE="b,h,t,s": per-SASS-instruction stall sampling of both main kernels on that
  # row (one report; each kernel's source page exported on its own, for scripts/ncu_source_summary.py)
  for row in ${MLA_NCU_ANCHOR_SOURCE:-}; do
    n=${row//,/_}
    PYTHONPATH=/tmp/site timeout 300 ncu --clock-control none -f -o "$D/src_$n" \
        -k "regex:flash_mla_v|flash_fwd_splitkv_mla_kernel" --section SourceCounters --section WarpStateStats \
        python3 scripts/flashmla_same_call.py --lib "$B/libmla_var3.so" --only "$row" --passes 0 >"$D/src_$n.log" 2>&1
    echo "== anchor source $row: rc=$? $(grep -c '==PROF== Profiling' "$D/src_$n.log") kernels profiled"
    for k in flash_mla_v flash_fwd_splitkv_mla_kernel; do
      ncu -i "$D/src_$n.ncu-rep" -k "regex:$k" --page source --csv --print-source sass >"$D/src_${n}_$k.csv" 2>>"$D/src_$n.log"
      python3 scripts/ncu_source_summary.py "$D/src_${n}_$k.csv" 25 --regions >"$D/src_${n}_$k.txt" 2>&1
    done
    ncu -i "$D/src_$n.ncu-rep" --page details --csv >"$D/src_${n}_details.csv" 2>>"$D/src_$n.log"
    rm -f "$D/src_$n.ncu-rep"
  done
  (cd "$D" && tar -czf "$OUT/ncu_anchor.tgz" .)
  exit 0
fi
if [ "$WHICH" = hopper ]; then
  SECTIONS=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis
            --section MemoryWorkloadAnalysis --section SchedulerStats)
  for v in ${MLA_NCU_VERSIONS:-flash_mla_v1 flash_mla_v2}; do
    for sh in ${MLA_NCU_SHAPES:-s16 h16}; do
      case $sh in
        s16) prof "${v}_b32_s16" "${v}" flash_mla "$v" --b=32 --s=16 --t=4096 --h=128 ;;
        s1)  prof "${v}_b32_s1" "${v}" flash_mla "$v" --b=32 --s=1 --t=4096 --h=128 ;;
        h16) prof "${v}_b128_h16" "${v}" flash_mla "$v" --b=128 --s=1 --t=8192 --h=16 ;;
        # b=128,h=128,t=8192: 1.2 GB of pages through a 50 MB L2, each page read by two row
        # blocks; DRAM bytes against the cache's size say whether the second reader hit L2
        t8k) prof "${v}_b128_t8192" "${v}" flash_mla "$v" --b=128 --s=1 --t=8192 --h=128 ;;
        # rows that were still short of FlashMLA's figures in the ninth session
        s64) prof "${v}_b32_s64" "${v}" flash_mla "$v" --b=32 --s=64 --t=4096 --h=128 ;;
        b64s1) prof "${v}_b64_s1" "${v}" flash_mla "$v" --b=64 --s=1 --t=4096 --h=128 ;;
        t8ks2) prof "${v}_b128_t8192_s2" "${v}" flash_mla "$v" --b=128 --s=2 --t=8192 --h=128 ;;
      esac
    done
  done
  exit 0
fi
prof flash_attention 'flash_attention_v0' flash_attention v0 --b=32 --s=1 --t=4096 --h=128 --tiling=block_m=16,block_n=64,warps=4,stages=2
prof mla_var6_plus 'mla_var6_plus_v0' mla_var6_plus v0 --b=32 --s=16 --t=4096 --h=128 --n=1024 --tiling=block_m=64,block_n=32,warps=8,stages=3
