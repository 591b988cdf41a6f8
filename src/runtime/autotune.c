/*
 * mla_autotune: try every tiling candidate of a kernel version on one problem and keep the
 * fastest. Each candidate is validated (kernel rules, then resources as compiled), prepared,
 * launched once eagerly and timed by CUDA-graph replay (mla_time_pipeline). A candidate that
 * fails is recorded with its reason and skipped; a sticky CUDA error (the context is lost)
 * stops the tuning, since nothing after it could run.
 *
 * Timing: 3 warm-up replays, then 20 timed replays, median. Each replay makes at least
 * MLA_TIME_CALLS (8) pipeline calls, rotating over the input copies (>= 2, > 2x L2 of inputs), as
 * bench-all times them, so a candidate runs >= 184 calls; for kernels of 50-5000 us the
 * per-replay spread is ~1-2 % and a median of 20 is stable to well under the gaps between
 * candidates worth choosing, while a 5 ms kernel still tunes a candidate in ~1 s.
 */
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <cuda_runtime.h>

#include "autotune.h"
#include "plan.h"
#include "error.h"

#define TUNE_WARMUP 3
#define TUNE_REPS 20
#define TUNE_SEED 1234

/* Errors after which the CUDA context is unusable: every later call fails with them too. */
static int is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return 1;
    default:
        return 0;
    }
}

/* After a failed candidate: clear a non-sticky error; return a sticky one (cudaSuccess if the
 * context is still usable). A sticky error shows up again on a synchronising probe. */
static cudaError_t recover(void)
{
    cudaError_t last = cudaGetLastError();
    if (is_sticky(last))
        return last;
    cudaError_t probe = cudaDeviceSynchronize();
    if (probe != cudaSuccess)
        return probe;
    probe = cudaGetLastError();
    return probe;
}

static void iso_date_utc(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

mla_status mla_autotune(const mla_kernel_version *kv, const mla_problem *pb,
                        const mla_device_info *dev, mla_tune_progress_fn progress, void *ctx,
                        mla_tune_result *res)
{
    if (!kv || !pb || !dev || !res)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_autotune: null argument");
    memset(res, 0, sizeof *res);
    res->winner = -1;
    snprintf(res->kernel, sizeof res->kernel, "%s", kv->name);
    snprintf(res->device, sizeof res->device, "%s", dev->name);
    mla_problem_key(pb, res->problem_key, sizeof res->problem_key);
    iso_date_utc(res->date, sizeof res->date);
    snprintf(res->library_version, sizeof res->library_version, "%s", mla_version_string());
    if (!dev->present)
        return mla_fail(MLA_STATUS_NO_DEVICE, "mla_autotune: no live CUDA device to tune on");
    if (kv->num_candidates < 1 || !kv->candidates)
        return mla_fail(MLA_STATUS_INTERNAL, "mla_autotune: %s has no tiling candidates", kv->name);

    int total = kv->num_candidates < MLA_MAX_CANDIDATES ? kv->num_candidates : MLA_MAX_CANDIDATES;
    res->num_entries = total;

    /* Validate every candidate first, so the workspace is allocated once at the largest size. */
    int valid[MLA_MAX_CANDIDATES];
    size_t ws_max = 0;
    for (int i = 0; i < total; i++) {
        mla_tune_entry *e = &res->entries[i];
        e->tiling = kv->candidates[i];
        valid[i] = mla_validate_tiling(kv, &e->tiling, pb, dev, NULL, e->error, sizeof e->error);
        if (valid[i]) {
            size_t ws = kv->workspace_bytes ? kv->workspace_bytes(&e->tiling, pb, dev) : 0;
            if (ws > ws_max)
                ws_max = ws;
        } else if (!e->error[0]) {
            snprintf(e->error, sizeof e->error, "rejected by validation");
        }
    }

    int prev_device = -1;
    cudaGetDevice(&prev_device);
    mla_status st = MLA_STATUS_OK;
    void *workspace = NULL;
    mla_dev_inputs in;
    memset(&in, 0, sizeof in);
    double best = -1.0;   /* progress reports best_us < 0 while nothing has been timed */

    cudaError_t ce = cudaSetDevice(dev->ordinal);
    if (ce != cudaSuccess) {
        st = mla_fail(MLA_STATUS_CUDA_ERROR, "mla_autotune: cudaSetDevice(%d): %s", dev->ordinal,
                      cudaGetErrorString(ce));
        goto done;
    }
    if (ws_max > 0) {
        ce = cudaMalloc(&workspace, ws_max);
        if (ce != cudaSuccess) {
            cudaGetLastError();
            workspace = NULL;
            st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_autotune: workspace of %zu bytes: %s",
                          ws_max, cudaGetErrorString(ce));
            goto done;
        }
    }
    st = mla_dev_inputs_create(pb, 0, TUNE_SEED, dev, &in);
    if (st != MLA_STATUS_OK)
        goto done;

    for (int i = 0; i < total; i++) {
        mla_tune_entry *e = &res->entries[i];
        if (valid[i]) {
            mla_status s = kv->prepare ? kv->prepare(&e->tiling, pb, dev) : MLA_STATUS_OK;
            double med = 0.0, mn = 0.0;
            if (s == MLA_STATUS_OK)
                s = mla_time_pipeline(kv, &e->tiling, dev, &in, workspace, ~0u, TUNE_WARMUP,
                                      TUNE_REPS, MLA_TIME_CALLS, &med, &mn);
            if (s == MLA_STATUS_OK) {
                e->ok = 1;
                e->median_us = med;
                if (best < 0 || med < best) {
                    best = med;
                    res->winner = i;
                }
            } else {
                snprintf(e->error, sizeof e->error, "%s", mla_last_error());
                cudaError_t sticky = recover();
                if (sticky != cudaSuccess) {
                    st = mla_fail(MLA_STATUS_CUDA_ERROR,
                                  "mla_autotune: candidate %d of %s left the CUDA context unusable "
                                  "(%s): stopping; candidate error: %s",
                                  i, kv->name, cudaGetErrorString(sticky), e->error);
                    if (progress)
                        progress(i + 1, total, best, ctx);
                    goto done;
                }
            }
        }
        if (progress)
            progress(i + 1, total, best, ctx);
    }

    if (res->winner < 0) {
        st = mla_fail(MLA_STATUS_UNSUPPORTED,
                      "mla_autotune: no candidate of %s ran on this problem (candidate 0: %s)",
                      kv->name, res->entries[0].error);
    }

done:
    /* On a lost context these frees fail too; nothing better to do with their errors. */
    mla_dev_inputs_destroy(&in);
    if (workspace)
        cudaFree(workspace);
    if (prev_device >= 0 && prev_device != dev->ordinal)
        cudaSetDevice(prev_device);
    return st;
}
