/*
 * The few CUDA runtime calls the CLI makes itself (workspace allocation, device selection),
 * kept here so that no other CLI file includes a CUDA header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "cli.h"
#include "autotune.h"

int cli_gpu_alloc(void **p, size_t bytes, char *why, size_t why_len)
{
    *p = NULL;
    if (bytes == 0) return 0;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        snprintf(why, why_len, "cudaMalloc(%zu bytes): %s", bytes, cudaGetErrorString(e));
        *p = NULL;
        return -1;
    }
    return 0;
}

void cli_gpu_free(void *p)
{
    if (p) cudaFree(p);
}

int cli_gpu_set_device(int dev)
{
    return cudaSetDevice(dev) == cudaSuccess ? 0 : -1;
}

int cli_gpu_func_name(const void *func, char *buf, size_t len)
{
#if CUDART_VERSION >= 12030
    const char *name = NULL;
    if (func && cudaFuncGetName(&name, func) == cudaSuccess && name) {
        snprintf(buf, len, "%s", name);
        return 0;
    }
    cudaGetLastError();   /* do not leave a sticky-looking error for the next check */
#else
    (void)func; (void)buf; (void)len;
#endif
    return -1;
}

int cli_time_flush(void)
{
    const char *e = getenv("MLA_VAR3_TIME_MODE");
    return e && strcmp(e, "flush") == 0;
}

mla_status cli_time_total(const mla_kernel_version *kv, const mla_tiling *t, const mla_device_info *dev,
                          const struct mla_dev_inputs *in, void *ws, int warm, int reps, int calls, double *med,
                          double *mn, char *how, size_t how_len, double *first10, double *last10)
{
    mla_status st;
    /* MLA_VAR3_TIME_SERIES=1: also print every timed run's time in launch order */
    const char *se = getenv("MLA_VAR3_TIME_SERIES");
    const int print = se && atoi(se) > 0;
    double series_us[2000];   /* mla_time_flushed times at most 2000 calls */
    mla_time_series series = {series_us, (int)(sizeof series_us / sizeof series_us[0]), 0};
    mla_time_series *sp = print || first10 || last10 ? &series : NULL;
    if (cli_time_flush()) {
        int n = 0;
        /* triton.testing.do_bench's defaults: 25 ms of warm-up, 100 ms of timed calls */
        st = mla_time_flushed_ex(kv, t, dev, in, ws, ~0u, 25.0, 100.0, &n, med, mn, sp);
        if (how) snprintf(how, how_len, "median of %d eager calls, each after a 256 MB L2 flush", n);
    } else {
        st = mla_time_pipeline_ex(kv, t, dev, in, ws, ~0u, warm, reps, calls, med, mn, sp);
        if (how) snprintf(how, how_len, "median of %d replays of %d calls", reps, calls);
    }
    if (st == MLA_STATUS_OK && sp && sp->n > 0) {
        if (print) {
            fprintf(stderr, "series (us a call, launch order, %d runs):", sp->n);
            for (int i = 0; i < sp->n; i++) fprintf(stderr, " %.1f", sp->us[i]);
            fprintf(stderr, "\n");
        }
        mla_series_ends(sp->us, sp->n, CLI_SERIES_ENDS, first10, last10);
    }
    return st;
}

int cli_time_calls(void)
{
    const char *e = getenv("MLA_VAR3_TIME_CALLS");
    int n = e ? atoi(e) : 0;
    return n >= 1 && n <= 64 ? n : MLA_TIME_CALLS;
}
