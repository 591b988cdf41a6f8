/*
 * mla_time_pipeline: time a kernel version's pipeline by CUDA-graph replay with events.
 *
 * One graph launches the pipeline `calls` times, rotating over the input copies: buffers larger
 * than the L2 (a call does not find the previous call's inputs cached); launch overhead is the
 * graph's, as a user capturing their decode step pays it. calls = copies rounded up to at least
 * min_calls. Each timed replay has its own pair of events; per-call time = replay time / calls.
 *
 * mla_time_flushed: the other common method (triton.testing.do_bench, which FlashMLA's test and
 * benchmark scripts use): eager calls, each after a 256 MB memset that evicts the L2, each between
 * its own pair of events; the median per call. Between calls the card runs a memory-bound memset
 * instead of the next call. On the H200 the two methods differed by up to ~8 % on rows of ~100 us,
 * in either direction, and the flushed medians repeated between device calls within 0.1-2.2 %
 * where graph replays moved by up to 10 % (flash_mla devlog, nineteenth session).
 */
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "autotune.h"
#include "error.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define TCHECK(call, what)                                                                    \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            st = mla_fail(MLA_STATUS_CUDA_ERROR, "timing %s: %s: %s", kv->name, what,         \
                          cudaGetErrorString(e_));                                            \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

/* 2 * reps events (a start and a stop a timed run) and reps times; *num_ev counts the events
 * created, for the caller's clean-up, also on failure. */
static mla_status events_alloc(const mla_kernel_version *kv, const char *fn, int reps, cudaEvent_t **ev,
                               double **times, int *num_ev)
{
    *ev = (cudaEvent_t *)calloc((size_t)2 * reps, sizeof **ev);
    *times = (double *)malloc((size_t)reps * sizeof **times);
    if (!*ev || !*times)
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "%s: host malloc failed", fn);
    for (; *num_ev < 2 * reps; (*num_ev)++) {
        cudaError_t e = cudaEventCreate(&(*ev)[*num_ev]);
        if (e != cudaSuccess)
            return mla_fail(MLA_STATUS_CUDA_ERROR, "timing %s: cudaEventCreate: %s", kv->name,
                            cudaGetErrorString(e));
    }
    return MLA_STATUS_OK;
}

/* Each timed run's time over `calls` calls, in us, sorted; the median and minimum out. */
static mla_status events_summary(const mla_kernel_version *kv, cudaEvent_t *ev, int reps, int calls,
                                 double *times, double *median_us, double *min_us, mla_time_series *series)
{
    for (int i = 0; i < reps; i++) {
        float ms = 0.f;
        cudaError_t e = cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
        if (e != cudaSuccess)
            return mla_fail(MLA_STATUS_CUDA_ERROR, "timing %s: cudaEventElapsedTime: %s", kv->name,
                            cudaGetErrorString(e));
        times[i] = (double)ms * 1000.0 / calls;
    }
    if (series) {  /* in launch order, before the sort */
        series->n = !series->us || series->cap <= 0 ? 0 : reps < series->cap ? reps : series->cap;
        if (series->n > 0) memcpy(series->us, times, (size_t)series->n * sizeof *times);
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    if (median_us)
        *median_us = (reps % 2) ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    if (min_us)
        *min_us = times[0];
    return MLA_STATUS_OK;
}

/* The median of k sorted copies (k >= 1). */
static double median_of(const double *v, int k)
{
    double t[MLA_SERIES_ENDS_MAX];
    memcpy(t, v, (size_t)k * sizeof t[0]);
    qsort(t, (size_t)k, sizeof t[0], cmp_double);
    return k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
}

int mla_series_ends(const double *us, int n, int k, double *first_us, double *last_us)
{
    if (!us || n < 1 || k < 1 || k > MLA_SERIES_ENDS_MAX) return 0;
    if (k > n) k = n;
    if (first_us) *first_us = median_of(us, k);
    if (last_us) *last_us = median_of(us + n - k, k);
    return 1;
}

mla_status mla_time_pipeline(const mla_kernel_version *kv, const mla_tiling *t,
                             const mla_device_info *dev, const mla_dev_inputs *in,
                             void *workspace, unsigned stage_mask, int warmup, int reps,
                             int min_calls, double *median_us, double *min_us)
{
    return mla_time_pipeline_ex(kv, t, dev, in, workspace, stage_mask, warmup, reps, min_calls, median_us,
                                min_us, NULL);
}

mla_status mla_time_pipeline_ex(const mla_kernel_version *kv, const mla_tiling *t,
                                const mla_device_info *dev, const mla_dev_inputs *in,
                                void *workspace, unsigned stage_mask, int warmup, int reps,
                                int min_calls, double *median_us, double *min_us, mla_time_series *series)
{
    if (!kv || !t || !in || !kv->launch || in->copies < 1 || in->copies > MLA_MAX_INPUT_COPIES)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_time_pipeline: bad arguments");
    if (reps < 1 || reps > 100000 || warmup < 0)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_time_pipeline: reps %d, warmup %d",
                        reps, warmup);

    mla_status st = MLA_STATUS_OK;
    cudaStream_t stream = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t *ev = NULL;   /* [2 * reps]: start, stop of each replay */
    int num_ev = 0;
    double *times = NULL;
    int capturing = 0;
    mla_launch_args args[MLA_MAX_INPUT_COPIES];
    int calls = in->copies;
    while (calls < min_calls)
        calls += in->copies;
    size_t ws = kv->workspace_bytes ? kv->workspace_bytes(t, &in->pb, dev) : 0;

    if (ws > 0 && !workspace)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL,
                        "mla_time_pipeline: %s needs %zu bytes of workspace, got none", kv->name, ws);

    TCHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (int c = 0; c < in->copies; c++) {
        args[c].pb = &in->pb;
        args[c].tensors = in->tensors[c];
        args[c].workspace = workspace;
        args[c].workspace_bytes = ws;
        args[c].stream = (void *)stream;
        args[c].stage_mask = stage_mask;
        args[c].dev = dev;
    }

    /* One eager call first: a broken candidate then fails with its own CUDA error text here,
     * instead of as an opaque capture or instantiate failure. */
    st = kv->launch(t, &args[0]);
    if (st != MLA_STATUS_OK)
        goto done;
    TCHECK(cudaStreamSynchronize(stream), "eager launch");
    TCHECK(cudaGetLastError(), "eager launch");

    TCHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    capturing = 1;
    for (int c = 0; c < calls; c++) {
        st = kv->launch(t, &args[c % in->copies]);
        if (st != MLA_STATUS_OK)
            goto done;
    }
    capturing = 0;
    TCHECK(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    TCHECK(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

    for (int i = 0; i < warmup; i++)
        TCHECK(cudaGraphLaunch(exec, stream), "cudaGraphLaunch (warm-up)");
    TCHECK(cudaStreamSynchronize(stream), "warm-up replays");

    st = events_alloc(kv, "mla_time_pipeline", reps, &ev, &times, &num_ev);
    if (st != MLA_STATUS_OK)
        goto done;
    for (int i = 0; i < reps; i++) {
        TCHECK(cudaEventRecord(ev[2 * i], stream), "cudaEventRecord");
        TCHECK(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        TCHECK(cudaEventRecord(ev[2 * i + 1], stream), "cudaEventRecord");
    }
    TCHECK(cudaStreamSynchronize(stream), "timed replays");
    st = events_summary(kv, ev, reps, calls, times, median_us, min_us, series);

done:
    if (capturing) {
        /* A launch failed mid-capture: end the capture so the stream is usable (and freeable),
         * drop the partial graph, and clear the capture error it leaves behind. */
        cudaGraph_t partial = NULL;
        if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial)
            cudaGraphDestroy(partial);
        cudaGetLastError();
    }
    for (int i = 0; i < num_ev; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    free(times);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (stream)
        cudaStreamDestroy(stream);
    return st;
}

/* The L2 flush of mla_time_flushed: as triton.testing.do_bench's cache buffer, 256 MB. */
#define FLUSH_BYTES ((size_t)256 << 20)

mla_status mla_time_flushed(const mla_kernel_version *kv, const mla_tiling *t,
                            const mla_device_info *dev, const mla_dev_inputs *in,
                            void *workspace, unsigned stage_mask, double warm_ms, double rep_ms,
                            int *reps_out, double *median_us, double *min_us)
{
    return mla_time_flushed_ex(kv, t, dev, in, workspace, stage_mask, warm_ms, rep_ms, reps_out, median_us,
                               min_us, NULL);
}

mla_status mla_time_flushed_ex(const mla_kernel_version *kv, const mla_tiling *t,
                               const mla_device_info *dev, const mla_dev_inputs *in,
                               void *workspace, unsigned stage_mask, double warm_ms, double rep_ms,
                               int *reps_out, double *median_us, double *min_us, mla_time_series *series)
{
    if (!kv || !t || !in || !kv->launch || in->copies < 1 || in->copies > MLA_MAX_INPUT_COPIES ||
        !(warm_ms >= 0) || !(rep_ms > 0) || rep_ms > 60000)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_time_flushed: bad arguments");

    mla_status st = MLA_STATUS_OK;
    cudaStream_t stream = NULL;
    void *flush = NULL;
    cudaEvent_t *ev = NULL, est[2] = {NULL, NULL};   /* est: the estimate's start and stop */
    int num_ev = 0, reps = 0;
    double *times = NULL;
    mla_launch_args args;
    size_t ws = kv->workspace_bytes ? kv->workspace_bytes(t, &in->pb, dev) : 0;
    if (ws > 0 && !workspace)
        return mla_fail(MLA_STATUS_WORKSPACE_TOO_SMALL,
                        "mla_time_flushed: %s needs %zu bytes of workspace, got none", kv->name, ws);

    TCHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    TCHECK(cudaMalloc(&flush, FLUSH_BYTES), "cudaMalloc (L2 flush buffer)");
    args.pb = &in->pb;
    args.tensors = in->tensors[0];   /* one input set, as do_bench: the flush makes it cold */
    args.workspace = workspace;
    args.workspace_bytes = ws;
    args.stream = (void *)stream;
    args.stage_mask = stage_mask;
    args.dev = dev;

    /* Estimate a flush + call from five of them (do_bench's estimate), then size the warm-up and
     * the timed runs by time. */
    TCHECK(cudaEventCreate(&est[0]), "cudaEventCreate");
    TCHECK(cudaEventCreate(&est[1]), "cudaEventCreate");
    st = kv->launch(t, &args);   /* the first call alone: its own error text if it fails */
    if (st != MLA_STATUS_OK)
        goto done;
    TCHECK(cudaStreamSynchronize(stream), "eager launch");
    TCHECK(cudaEventRecord(est[0], stream), "cudaEventRecord");
    for (int i = 0; i < 5; i++) {
        TCHECK(cudaMemsetAsync(flush, 0, FLUSH_BYTES, stream), "cudaMemsetAsync (estimate)");
        st = kv->launch(t, &args);
        if (st != MLA_STATUS_OK)
            goto done;
    }
    TCHECK(cudaEventRecord(est[1], stream), "cudaEventRecord");
    TCHECK(cudaEventSynchronize(est[1]), "estimate");
    {
        float ms = 0.f;
        TCHECK(cudaEventElapsedTime(&ms, est[0], est[1]), "cudaEventElapsedTime (estimate)");
        const double per = ms / 5.0 > 1e-3 ? ms / 5.0 : 1e-3;
        const double warm = warm_ms / per < 10000 ? warm_ms / per : 10000;
        reps = (int)(rep_ms / per);
        if (reps < 10) reps = 10;
        if (reps > 2000) reps = 2000;
        for (int i = 0; i < (int)warm; i++) {
            TCHECK(cudaMemsetAsync(flush, 0, FLUSH_BYTES, stream), "cudaMemsetAsync (warm-up)");
            st = kv->launch(t, &args);
            if (st != MLA_STATUS_OK)
                goto done;
        }
    }

    st = events_alloc(kv, "mla_time_flushed", reps, &ev, &times, &num_ev);
    if (st != MLA_STATUS_OK)
        goto done;
    for (int i = 0; i < reps; i++) {
        TCHECK(cudaMemsetAsync(flush, 0, FLUSH_BYTES, stream), "cudaMemsetAsync");
        TCHECK(cudaEventRecord(ev[2 * i], stream), "cudaEventRecord");
        st = kv->launch(t, &args);
        if (st != MLA_STATUS_OK)
            goto done;
        TCHECK(cudaEventRecord(ev[2 * i + 1], stream), "cudaEventRecord");
    }
    TCHECK(cudaStreamSynchronize(stream), "timed calls");
    TCHECK(cudaGetLastError(), "timed calls");
    st = events_summary(kv, ev, reps, 1, times, median_us, min_us, series);
    if (st == MLA_STATUS_OK && reps_out)
        *reps_out = reps;

done:
    if (stream)
        cudaStreamSynchronize(stream);   /* nothing in flight when the events and buffer go */
    for (int i = 0; i < 2; i++)
        if (est[i])
            cudaEventDestroy(est[i]);
    for (int i = 0; i < num_ev; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    free(times);
    if (flush)
        cudaFree(flush);
    if (stream)
        cudaStreamDestroy(stream);
    return st;
}
