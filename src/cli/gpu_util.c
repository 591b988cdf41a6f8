/*
 * The few CUDA runtime calls the CLI makes itself (workspace allocation, device selection),
 * kept here so that no other CLI file includes a CUDA header.
 */
#include <stdio.h>
#include <stdlib.h>
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

int cli_time_calls(void)
{
    const char *e = getenv("MLA_VAR3_TIME_CALLS");
    int n = e ? atoi(e) : 0;
    return n >= 1 && n <= 64 ? n : MLA_TIME_CALLS;
}
