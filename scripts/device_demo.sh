#!/usr/bin/env bash
# Runtime acceptance demos on the GPU machine (after scripts/device_run.sh built ./build):
# autotune + cache reuse, annotation (roofline) output, a run folder's files, devices --measure,
# and an Nsight Compute profile of the portable flash_mla fed to `mla_var3 gate`.
# Usage: scripts/device_demo.sh [build dir]; writes $OUT/demo.log (and $OUT/ncu_flash_mla.csv).
set -uo pipefail
B=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
CLI="$B/mla_var3"
# the carried cJSON (scripts/device_run.sh unpacks it there)
for d in /tmp/deps/usr/lib/*/; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
export MLA_VAR3_CACHE_DIR=/tmp/mla-demo-cache/kernel-autotune
rm -rf /tmp/mla-demo-cache /tmp/mla-demo-out
log="$OUT/demo.log"
run() { echo; echo "\$ $*"; timeout 300 "$@"; echo "[exit $?]"; }
{
  run "$CLI" devices --measure
  run "$CLI" list
  run "$CLI" flash_mla v0 --b=32 --s=1 --t=4096 --h=128 --autotune --prof_type=event --out=/tmp/mla-demo-out
  run find "$MLA_VAR3_CACHE_DIR" -type f
  run "$CLI" flash_mla v0 --b=32 --s=1 --t=4096 --h=128 --prof_type=annotation --out=/tmp/mla-demo-out
  run "$CLI" flash_mla v0 --b=32 --s=1 --t=4096 --h=128 --prof_type=annotation --json --out=/tmp/mla-demo-out
  run find /tmp/mla-demo-out -type f
  d=$(ls -d /tmp/mla-demo-out/profiles/annotation/*/*/* 2>/dev/null | head -1)
  [ -n "$d" ] && for f in params.json result.json; do echo "--- $f"; head -c 3000 "$d/$f"; echo; done
  run "$CLI" flash_mla v0 --b=32 --s=1 --t=4096 --h=128 --tiling=block_m=64,block_n=64,warps=8,stages=2
  run "$CLI" mla_var6_plus v0 --b=32 --s=16 --t=4096 --h=128 --n=1024 --check --prof_type=annotation --out=/tmp/mla-demo-out
  run "$CLI" flash_attention v0 --b=32 --s=128 --t=4096 --h=128 --check --prof_type=annotation --out=/tmp/mla-demo-out
  if command -v ncu >/dev/null 2>&1; then
    run timeout 240 ncu --clock-control none --csv --page raw -k 'regex:flash_mla_v0' -c 2 \
        --metrics launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,smsp__warps_eligible.avg.per_cycle_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.sum,launch__grid_size,smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed \
        "$CLI" flash_mla v0 --b=32 --s=16 --t=4096 --h=128 > "$OUT/ncu_flash_mla.csv" 2>"$OUT/ncu_flash_mla.err"
    head -c 4000 "$OUT/ncu_flash_mla.csv"
    run "$CLI" gate --ncu="$OUT/ncu_flash_mla.csv" --needs=producer_consumer,tma_pipeline,wgmma,register_movement
  fi
} > "$log" 2>&1
tail -n 60 "$log"
