/*
 * test_timing: the two timing methods of the runtime (src/runtime/timing.c) on the GPU.
 *   mla_time_pipeline: CUDA-graph replays of >= min_calls calls (the bench's and autotuner's).
 *   mla_time_flushed:  eager calls, each after a 256 MB L2 flush (triton.testing.do_bench's way).
 * For each design's default version on a small problem: both return OK with 0 < min <= median,
 * the flushed one times 10..2000 calls, each leaves no CUDA error behind, and bad arguments are
 * refused with their status (INVALID_ARGUMENT, WORKSPACE_TOO_SMALL); the _ex forms' series hold as
 * many runs as fit, with the summary's minimum among them. test_graph and test_kernels
 * check the results of the same launches. Times themselves are never asserted (a benchmark
 * reports, it does not pass or fail on speed). Exit 77 with no GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "mla_var3.h"
#include "autotune.h"
#include "plan.h"
#include "device.h"
#include "../cpu/check.h"

static void run_design(mla_design design, int ordinal)
{
    char name[96];
    mla_problem pb;
    mla_problem_init(&pb, design);
    pb.b = 2, pb.s = 2, pb.t = 256, pb.h = 128, pb.causal = 1;
    pb.n = design == MLA_DESIGN_MLA_VAR6_PLUS ? pb.t / 2 : 0;
    snprintf(name, sizeof name, "%s b=%d s=%d t=%d h=%d", mla_design_name(design), pb.b, pb.s, pb.t, pb.h);

    mla_plan_options po;
    mla_plan_options_init(&po);
    po.device = ordinal;
    mla_plan_t plan = NULL;
    if (mla_plan_create_internal(&pb, &po, &plan) != MLA_STATUS_OK) {
        CHECK(0, "%s: plan: %s", name, mla_last_error());  /* a valid problem: every design plans on a GPU */
        return;
    }
    mla_dev_inputs in;
    memset(&in, 0, sizeof in);
    void *ws = NULL;
    if (mla_dev_inputs_create_paged(&plan->pb, 0, 99, MLA_PAGES_RANDOM, &plan->dev, &in) != MLA_STATUS_OK) {
        CHECK(0, "%s: inputs: %s", name, mla_last_error());
        mla_plan_destroy(plan);
        return;
    }
    if (plan->workspace_bytes && cudaMalloc(&ws, plan->workspace_bytes) != cudaSuccess) {
        CHECK(0, "%s: workspace of %zu bytes", name, plan->workspace_bytes);
        goto done;
    }

    double med = -1, mn = -1;
    mla_status st = mla_time_pipeline(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 2, 5, MLA_TIME_CALLS,
                                      &med, &mn);
    CHECK(st == MLA_STATUS_OK, "%s: graph timing: %s", name, mla_last_error());
    CHECK(st != MLA_STATUS_OK || (mn > 0 && mn <= med && isfinite(med)), "%s: graph timing: min %g, median %g", name, mn, med);
    CHECK(cudaGetLastError() == cudaSuccess, "%s: graph timing left a CUDA error", name);

    /* the _ex form hands back each replay's time in launch order: as many as fit, the same
     * minimum as the summary's, and the summary's median among them */
    double ser[8] = {0};
    mla_time_series series = {ser, 8, -1};
    med = mn = -1;
    st = mla_time_pipeline_ex(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 1, 5, MLA_TIME_CALLS, &med, &mn,
                              &series);
    CHECK(st == MLA_STATUS_OK && series.n == 5, "%s: graph series: status %d, %d runs", name, (int)st, series.n);
    if (st == MLA_STATUS_OK && series.n == 5) {
        double smin = ser[0];
        int below = 0, above = 0;
        for (int i = 0; i < 5; i++) {
            if (ser[i] < smin) smin = ser[i];
            below += ser[i] < med;
            above += ser[i] > med;
        }
        CHECK(smin == mn && below <= 2 && above <= 2, "%s: graph series: min %g against %g, median %g with %d below, %d above",
              name, smin, mn, med, below, above);
    }
    series.cap = 3, series.n = -1;
    st = mla_time_pipeline_ex(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 1, 5, MLA_TIME_CALLS, &med, &mn,
                              &series);
    CHECK(st == MLA_STATUS_OK && series.n == 3, "%s: graph series capped at 3: status %d, %d runs", name, (int)st,
          series.n);

    int reps = -1;
    med = mn = -1;
    st = mla_time_flushed(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 2.0, 20.0, &reps, &med, &mn);
    CHECK(st == MLA_STATUS_OK, "%s: flushed timing: %s", name, mla_last_error());
    CHECK(st != MLA_STATUS_OK || (mn > 0 && mn <= med && isfinite(med)), "%s: flushed timing: min %g, median %g", name, mn,
           med);
    CHECK(st != MLA_STATUS_OK || (reps >= 10 && reps <= 2000), "%s: flushed timing ran %d calls", name, reps);
    CHECK(cudaGetLastError() == cudaSuccess, "%s: flushed timing left a CUDA error", name);
    series.cap = 8, series.n = -1;
    st = mla_time_flushed_ex(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 2.0, 20.0, &reps, &med, &mn, &series);
    CHECK(st == MLA_STATUS_OK && series.n == (reps < 8 ? reps : 8) && ser[0] > 0, "%s: flushed series: status %d, %d of %d runs",
          name, (int)st, series.n, reps);

    /* bad arguments: a status and a message, nothing launched */
    st = mla_time_flushed(plan->kv, &plan->tiling, &plan->dev, &in, ws, ~0u, 2.0, 0.0, NULL, &med, &mn);
    CHECK(st == MLA_STATUS_INVALID_ARGUMENT, "%s: rep_ms 0 gave status %d", name, (int)st);
    st = mla_time_flushed(NULL, &plan->tiling, &plan->dev, &in, ws, ~0u, 2.0, 20.0, NULL, &med, &mn);
    CHECK(st == MLA_STATUS_INVALID_ARGUMENT, "%s: no version gave status %d", name, (int)st);
    if (plan->workspace_bytes) {
        st = mla_time_flushed(plan->kv, &plan->tiling, &plan->dev, &in, NULL, ~0u, 2.0, 20.0, NULL, &med, &mn);
        CHECK(st == MLA_STATUS_WORKSPACE_TOO_SMALL, "%s: no workspace gave status %d", name, (int)st);
    }
done:
    if (ws) cudaFree(ws);
    mla_dev_inputs_destroy(&in);
    mla_plan_destroy(plan);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    run_design(MLA_DESIGN_FLASH_ATTENTION, 0);
    run_design(MLA_DESIGN_FLASH_MLA, 0);
    run_design(MLA_DESIGN_MLA_VAR6_PLUS, 0);
    printf("test_timing: %d passed, %d failed\n", passed, failed);
    return failed || !passed ? 1 : 0;
}
