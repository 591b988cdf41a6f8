/*
 * devices --measure: what this GPU actually achieves, as the roofline's ceilings.
 *  - copy bandwidth: a large device-to-device cudaMemcpyAsync, bytes read + written, median of
 *    20 event-timed copies after 3 warm-ups;
 *  - bf16 tensor-core rate: an 8192^3 bf16 GEMM with fp32 accumulation through cuBLAS, which is
 *    loaded with dlopen so neither the build nor the library depends on it (0 + a note if absent).
 * Results are cached in <$MLA_VAR3_CACHE_DIR/../devices or .cache/devices>/<device>.json.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include <cjson/cJSON.h>

#include "measure.h"
#include "autotune.h"
#include "error.h"

/* cuBLAS ABI, declared here so no cuBLAS header is needed at build time. Values checked against
 * CUDA 13.0's headers: library_types.h:61 CUDA_R_16BF = 14, :63 CUDA_R_32F = 0;
 * cublas_api.h:109 CUBLAS_OP_N = 0, :123 CUBLAS_GEMM_DEFAULT = -1, :208 CUBLAS_COMPUTE_32F = 68,
 * :90 CUBLAS_STATUS_SUCCESS = 0. The enums are C ints in the ABI. */
enum { MLA_CUDA_R_16BF = 14, MLA_CUDA_R_32F = 0 };
enum { MLA_CUBLAS_OP_N = 0, MLA_CUBLAS_GEMM_DEFAULT = -1, MLA_CUBLAS_COMPUTE_32F = 68 };
typedef void *mla_cublas_handle;
typedef int (*cublas_create_fn)(mla_cublas_handle *);
typedef int (*cublas_destroy_fn)(mla_cublas_handle);
typedef int (*cublas_set_stream_fn)(mla_cublas_handle, cudaStream_t);
typedef int (*cublas_gemm_ex_fn)(mla_cublas_handle, int transa, int transb, int m, int n, int k,
                                 const void *alpha, const void *A, int Atype, int lda,
                                 const void *B, int Btype, int ldb, const void *beta, void *C,
                                 int Ctype, int ldc, int computeType, int algo);

#define BW_WARMUP 3
#define BW_REPS 20
#define GEMM_N 8192
#define GEMM_WARMUP 3
#define GEMM_REPS 10

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median_f(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return (n % 2) ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

#define MCHECK(call, what)                                                                    \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            cudaGetLastError(); /* clear a non-sticky error so later calls start clean */     \
            st = mla_fail(MLA_STATUS_CUDA_ERROR, "devices --measure: %s: %s", what,           \
                          cudaGetErrorString(e_));                                            \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

/* Events around each of `reps` calls of op(ctx) after `warmup` untimed ones; median ms. */
typedef mla_status (*op_fn)(void *ctx, cudaStream_t s);

static mla_status time_op(op_fn op, void *ctx, cudaStream_t stream, int warmup, int reps,
                          float *median_ms)
{
    mla_status st = MLA_STATUS_OK;
    cudaEvent_t ev[2 * 20];
    int num_ev = 0;
    float ms[20];
    if (reps > 20)
        return mla_fail(MLA_STATUS_INTERNAL, "time_op: reps %d > 20", reps);
    for (int i = 0; i < warmup; i++)
        if ((st = op(ctx, stream)) != MLA_STATUS_OK)
            goto done;
    MCHECK(cudaStreamSynchronize(stream), "warm-up");
    for (; num_ev < 2 * reps; num_ev++)
        MCHECK(cudaEventCreate(&ev[num_ev]), "cudaEventCreate");
    for (int i = 0; i < reps; i++) {
        MCHECK(cudaEventRecord(ev[2 * i], stream), "cudaEventRecord");
        if ((st = op(ctx, stream)) != MLA_STATUS_OK)
            goto done;
        MCHECK(cudaEventRecord(ev[2 * i + 1], stream), "cudaEventRecord");
    }
    MCHECK(cudaStreamSynchronize(stream), "timed runs");
    for (int i = 0; i < reps; i++)
        MCHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    *median_ms = median_f(ms, reps);
done:
    for (int i = 0; i < num_ev; i++)
        cudaEventDestroy(ev[i]);
    return st;
}

/* ---- copy bandwidth ---- */

typedef struct copy_ctx { void *dst, *src; size_t bytes; } copy_ctx;

static mla_status copy_op(void *vctx, cudaStream_t s)
{
    copy_ctx *c = (copy_ctx *)vctx;
    cudaError_t e = cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "devices --measure: cudaMemcpyAsync: %s",
                        cudaGetErrorString(e));
    return MLA_STATUS_OK;
}

static mla_status measure_copy(cudaStream_t stream, double *gbs)
{
    mla_status st = MLA_STATUS_OK;
    copy_ctx c = {NULL, NULL, 0};
    const size_t sizes[2] = {(size_t)2 << 30, (size_t)512 << 20};   /* 2 GiB, else 512 MiB */
    for (int i = 0; i < 2 && !c.dst; i++) {
        cudaError_t e1 = cudaMalloc(&c.src, sizes[i]);
        cudaError_t e2 = e1 == cudaSuccess ? cudaMalloc(&c.dst, sizes[i]) : e1;
        if (e1 != cudaSuccess || e2 != cudaSuccess) {
            cudaGetLastError();   /* allocation failures are not sticky: clear and retry smaller */
            if (c.src && e1 == cudaSuccess)
                cudaFree(c.src);
            c.src = c.dst = NULL;
            if (i == 1) {
                st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices --measure: two copy buffers of %zu bytes: %s",
                              sizes[i], cudaGetErrorString(e2));
                goto done;
            }
            continue;
        }
        c.bytes = sizes[i];
    }
    /* The source's content does not change a copy's speed; a memset makes its pages resident. */
    MCHECK(cudaMemsetAsync(c.src, 1, c.bytes, stream), "cudaMemsetAsync");
    float ms = 0.f;
    if ((st = time_op(copy_op, &c, stream, BW_WARMUP, BW_REPS, &ms)) != MLA_STATUS_OK)
        goto done;
    *gbs = ms > 0 ? 2.0 * (double)c.bytes / (ms * 1e-3) / 1e9 : 0.0;
done:
    if (c.src)
        cudaFree(c.src);
    if (c.dst)
        cudaFree(c.dst);
    return st;
}

/* ---- bf16 GEMM through cuBLAS ---- */

typedef struct gemm_ctx {
    cublas_gemm_ex_fn gemm;
    mla_cublas_handle h;
    void *a, *b, *c;
} gemm_ctx;

static mla_status gemm_op(void *vctx, cudaStream_t s)
{
    gemm_ctx *g = (gemm_ctx *)vctx;
    const float alpha = 1.0f, beta = 0.0f;
    (void)s;   /* the handle is bound to the stream */
    int r = g->gemm(g->h, MLA_CUBLAS_OP_N, MLA_CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &alpha, g->a,
                    MLA_CUDA_R_16BF, GEMM_N, g->b, MLA_CUDA_R_16BF, GEMM_N, &beta, g->c,
                    MLA_CUDA_R_16BF, GEMM_N, MLA_CUBLAS_COMPUTE_32F, MLA_CUBLAS_GEMM_DEFAULT);
    if (r != 0)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "devices --measure: cublasGemmEx returned status %d", r);
    return MLA_STATUS_OK;
}

/* OK with *tflops = 0 and `note` filled when cuBLAS is not available. */
static mla_status measure_gemm(cudaStream_t stream, double *tflops, char *note, size_t note_len)
{
    mla_status st = MLA_STATUS_OK;
    *tflops = 0.0;
    /* Keep the library loaded for the process: unloading cuBLAS while the CUDA runtime still
     * holds its kernels' modules is a known source of teardown crashes. */
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    char why[160] = "dlopen failed";
    if (!lib) {
        const char *e = dlerror();   /* static buffer: copy before the next dlopen */
        if (e)
            snprintf(why, sizeof why, "%s", e);
    }
    if (!lib)   /* toolkit installed but not in the loader's path */
        lib = dlopen("/usr/local/cuda/lib64/libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(note, note_len, "cuBLAS not loadable (%s): bf16 GEMM rate not measured",
                 why);
        return MLA_STATUS_OK;
    }
    cublas_create_fn create = (cublas_create_fn)dlsym(lib, "cublasCreate_v2");
    cublas_destroy_fn destroy = (cublas_destroy_fn)dlsym(lib, "cublasDestroy_v2");
    cublas_set_stream_fn set_stream = (cublas_set_stream_fn)dlsym(lib, "cublasSetStream_v2");
    gemm_ctx g = {(cublas_gemm_ex_fn)dlsym(lib, "cublasGemmEx"), NULL, NULL, NULL, NULL};
    if (!create || !destroy || !set_stream || !g.gemm) {
        snprintf(note, note_len, "cuBLAS lacks cublasCreate_v2/cublasGemmEx: bf16 GEMM rate not measured");
        return MLA_STATUS_OK;
    }
    const size_t elems = (size_t)GEMM_N * GEMM_N;
    MCHECK(cudaMalloc(&g.a, elems * 2), "cudaMalloc (GEMM A)");
    MCHECK(cudaMalloc(&g.b, elems * 2), "cudaMalloc (GEMM B)");
    MCHECK(cudaMalloc(&g.c, elems * 2), "cudaMalloc (GEMM C)");
    /* Random, non-zero operands: tensor cores draw less power on zeros and would look faster. */
    if ((st = mla_dev_fill_random_bf16(g.a, elems, 11, 1.0f, stream)) != MLA_STATUS_OK ||
        (st = mla_dev_fill_random_bf16(g.b, elems, 12, 1.0f, stream)) != MLA_STATUS_OK)
        goto done;
    int r = create(&g.h);
    if (r != 0) {
        g.h = NULL;
        st = mla_fail(MLA_STATUS_CUDA_ERROR, "devices --measure: cublasCreate returned status %d", r);
        goto done;
    }
    if ((r = set_stream(g.h, stream)) != 0) {
        st = mla_fail(MLA_STATUS_CUDA_ERROR, "devices --measure: cublasSetStream returned status %d", r);
        goto done;
    }
    float ms = 0.f;
    if ((st = time_op(gemm_op, &g, stream, GEMM_WARMUP, GEMM_REPS, &ms)) != MLA_STATUS_OK)
        goto done;
    *tflops = ms > 0 ? 2.0 * GEMM_N * (double)GEMM_N * GEMM_N / (ms * 1e-3) / 1e12 : 0.0;
done:
    if (g.h)
        destroy(g.h);
    if (g.a)
        cudaFree(g.a);
    if (g.b)
        cudaFree(g.b);
    if (g.c)
        cudaFree(g.c);
    return st;
}

/* ---- cache ---- */

static void measure_path(const mla_device_info *dev, char *buf, size_t len)
{
    char name[128];
    const char *env = getenv("MLA_VAR3_CACHE_DIR");
    mla_sanitize_name(dev->key[0] ? dev->key : dev->name, name, sizeof name);
    if (env && env[0]) {
        /* <cache dir>/../devices, taken lexically so it works before the cache dir exists */
        char parent[1024];
        snprintf(parent, sizeof parent, "%s", env);
        size_t n = strlen(parent);
        while (n > 1 && parent[n - 1] == '/')
            parent[--n] = '\0';
        char *slash = strrchr(parent, '/');
        if (!slash)
            snprintf(parent, sizeof parent, ".");
        else if (slash == parent)
            parent[1] = '\0';
        else
            *slash = '\0';
        snprintf(buf, len, "%s%sdevices/%s.json", parent,
                 parent[strlen(parent) - 1] == '/' ? "" : "/", name);
    } else
        snprintf(buf, len, ".cache/devices/%s.json", name);
}

mla_status mla_device_measure_load(mla_device_info *dev)
{
    char path[1200];
    if (!dev)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_device_measure_load: null device");
    measure_path(dev, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return mla_fail(MLA_STATUS_IO_ERROR, "no device measurement at %s", path);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    const cJSON *gbs = cJSON_GetObjectItemCaseSensitive(root, "gbs");
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(root, "tflops");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "device");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(root, "note");
    mla_status st = MLA_STATUS_OK;
    if (!cJSON_IsNumber(gbs) || !cJSON_IsNumber(tf) || !cJSON_IsString(name) || !name->valuestring) {
        st = mla_fail(MLA_STATUS_IO_ERROR, "corrupt device measurement %s", path);
    } else if (strcmp(name->valuestring, dev->name) != 0) {
        /* same key, another board (e.g. an H200 NVL under "h200"): not this device's numbers */
        st = mla_fail(MLA_STATUS_IO_ERROR, "device measurement %s is of %s, not %s", path,
                      name->valuestring, dev->name);
    } else {
        dev->measured_gbs = gbs->valuedouble;
        dev->measured_tflops = tf->valuedouble;
        if (tf->valuedouble == 0.0 && cJSON_IsString(note) && note->valuestring && !dev->note[0])
            snprintf(dev->note, sizeof dev->note, "%s", note->valuestring);
    }
    cJSON_Delete(root);
    return st;
}

static mla_status measure_store(const mla_device_info *dev, const char *note)
{
    char path[1200], date[40];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    measure_path(dev, path, sizeof path);
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices --measure: out of memory");
    cJSON_AddStringToObject(root, "device", dev->name);
    cJSON_AddStringToObject(root, "key", dev->key);
    cJSON_AddNumberToObject(root, "gbs", dev->measured_gbs);
    cJSON_AddNumberToObject(root, "tflops", dev->measured_tflops);
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddNumberToObject(root, "sm_clock_mhz", dev->sm_clock_mhz);
    cJSON_AddNumberToObject(root, "mem_clock_mhz", dev->mem_clock_mhz);
    cJSON_AddStringToObject(root, "note", note ? note : "");
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices --measure: out of memory");
    mla_status st = mla_write_file_atomic(path, text);
    cJSON_free(text);
    return st;
}

mla_status mla_device_measure(mla_device_info *dev, int force)
{
    if (!dev)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_device_measure: null device");
    if (!force && mla_device_measure_load(dev) == MLA_STATUS_OK)
        return MLA_STATUS_OK;
    if (!dev->present)
        return mla_fail(MLA_STATUS_NO_DEVICE, "devices --measure: no live CUDA device");

    mla_status st = MLA_STATUS_OK;
    cudaStream_t stream = NULL;
    int prev_device = -1;
    double gbs = 0.0, tflops = 0.0;
    char note[200] = "";
    cudaGetDevice(&prev_device);
    MCHECK(cudaSetDevice(dev->ordinal), "cudaSetDevice");
    MCHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if ((st = measure_copy(stream, &gbs)) != MLA_STATUS_OK)
        goto done;
    if ((st = measure_gemm(stream, &tflops, note, sizeof note)) != MLA_STATUS_OK)
        goto done;
    dev->measured_gbs = gbs;
    dev->measured_tflops = tflops;
    if (note[0] && !strstr(dev->note, note)) {
        size_t used = strlen(dev->note);
        snprintf(dev->note + used, sizeof dev->note - used, "%s%s", used ? "; " : "", note);
    }
    /* A cache that cannot be written costs a re-measure next time, not this result. */
    if (measure_store(dev, note) != MLA_STATUS_OK)
        mla_clear_error();
done:
    if (stream)
        cudaStreamDestroy(stream);
    if (prev_device >= 0 && prev_device != dev->ordinal)
        cudaSetDevice(prev_device);
    return st;
}
