/*
 * gpu_ref.cu - naive fp32 GPU references of the three MLA designs (MLA_SPEC.md), used by
 * --check and the GPU tests. Its only job is to be obviously right and fast enough for
 * b = 32, t = 4096, h = 128 (it is itself tested against the fp64 CPU reference).
 *
 * Schedule: one thread block per group of R rows that read the same keys (flash_attention and
 * mla_var6_plus: R queries of one (request, head); flash_mla: R (query, head) rows of one
 * request). Keys are walked in chunks of KC = 16, staged in shared memory as fp32; thread
 * (row, key) computes one score as a plain sequential fp32 dot product. Two passes over the
 * visible keys: pass 0 computes every score and the row max m; pass 1 computes the same scores
 * again, p = exp(s - m), l = sum p, acc = sum p v. Then out = acc / l, lse = m + log(l); an
 * empty row writes out 0 and lse -inf. mla_var6_plus accumulates the latent part (k floats)
 * and the value part (d floats) separately and projects the latent sum through w_uv[h] last.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "gpu_check.h"
#include "error.h"

namespace {

constexpr int KC = 16;               // keys per chunk; R * KC threads per block
constexpr int D_FA = MLA_DESIGN_FLASH_ATTENTION;
constexpr int D_MLA = MLA_DESIGN_FLASH_MLA;
constexpr int D_V6 = MLA_DESIGN_MLA_VAR6_PLUS;

typedef __nv_bfloat16 bf16;

struct RefArgs {
    int b, s, t, h, d, k, p, n, page_size, causal;
    float scale;
    const int32_t *seqlens;
    // queries: flash_attention / flash_mla use q; mla_var6_plus q_lat, q_nope, q_rope
    const bf16 *q;      long long qs[3];
    const bf16 *q_lat;  long long qls[3];
    const bf16 *q_nope; long long qns[3];
    const bf16 *q_rope; long long qrs[3];
    // decompressed keys: flash_attention k [b,t,h,d+p], v; mla_var6_plus k_nope [b,n,h,d], v
    const bf16 *kd;     long long kds[3];
    const bf16 *vd;     long long vds[3];
    const bf16 *krope;  long long krs[2];
    // paged latent cache
    const bf16 *cache;
    int num_pages;
    const int32_t *bt;  long long bt_stride;
    const bf16 *w_uv;
    float *out, *lse;
    // shared-memory layout, in floats (strides padded to odd counts against bank conflicts)
    int qd, qstr, kstr, vstr, dacc, dv;
    int tiles;          // row groups per (request[, head])
};

__device__ __forceinline__ float bf(const bf16 *ptr, long long off)
{
    return __bfloat162float(ptr[off]);
}

// Query element x of row (r, i, hh) in this design's concatenated query layout.
template <int DESIGN>
__device__ __forceinline__ float load_q(const RefArgs &a, int r, int i, int hh, int x)
{
    if (DESIGN != D_V6)
        return bf(a.q, r * a.qs[0] + i * a.qs[1] + hh * a.qs[2] + x);
    // mla_var6_plus: [q_lat (k) | q_rope (p)] scores old tokens, [q_nope (d) | q_rope (p)] new.
    if (x < a.k) return bf(a.q_lat, r * a.qls[0] + i * a.qls[1] + hh * a.qls[2] + x);
    x -= a.k;
    if (x < a.p) return bf(a.q_rope, r * a.qrs[0] + i * a.qrs[1] + hh * a.qrs[2] + x);
    x -= a.p;
    if (x < a.d) return bf(a.q_nope, r * a.qns[0] + i * a.qns[1] + hh * a.qns[2] + x);
    x -= a.d;
    return bf(a.q_rope, r * a.qrs[0] + i * a.qrs[1] + hh * a.qrs[2] + x);
}

template <int DESIGN, int R>
__global__ void __launch_bounds__(R * KC) gpu_ref_kernel(const RefArgs a)
{
    constexpr int NT = R * KC;
    extern __shared__ float smem[];
    float *q_s = smem;                      // [R][qstr]
    float *k_s = q_s + R * a.qstr;          // [KC][kstr]
    float *v_s = k_s + KC * a.kstr;         // [KC][vstr] (flash_mla: none, V is in k_s)
    float *acc = v_s + KC * a.vstr;         // [R][dacc]
    float *p_s = acc + R * a.dacc;          // [R][KC] scores (pass 0) or probabilities (pass 1)
    float *m_s = p_s + R * KC;              // [R]
    float *l_s = m_s + R;                   // [R]
    int *nv_s = (int *)(l_s + R);           // [R] visible keys of the row
    int *qi_s = nv_s + R;                   // [R] query index, -1 for a padding row
    int *qh_s = qi_s + R;                   // [R] head
    __shared__ int nvmax_s;

    const int tid = threadIdx.x;
    long long blk = blockIdx.x;
    const int tile = (int)(blk % a.tiles);
    blk /= a.tiles;
    int r, head = 0;
    if (DESIGN == D_MLA) {
        r = (int)blk;
    } else {
        head = (int)(blk % a.h);
        r = (int)(blk / a.h);
    }
    int t_r = a.seqlens ? a.seqlens[r] : a.t;
    t_r = min(max(t_r, 0), a.t);
    // Positions below o_r come from the paged cache, the rest from the decompressed tensors.
    const int o_r = DESIGN == D_FA ? 0 : DESIGN == D_MLA ? t_r : max(t_r - a.n, 0);

    if (tid < R) {
        int i = -1, hh = 0;
        if (DESIGN == D_MLA) {
            long long f = (long long)tile * R + tid;
            if (f < (long long)a.s * a.h) {
                i = (int)(f / a.h);
                hh = (int)(f % a.h);
            }
        } else {
            int ii = tile * R + tid;
            if (ii < a.s) {
                i = ii;
                hh = head;
            }
        }
        int nv = 0;
        if (i >= 0) nv = a.causal ? min(max(t_r - a.s + i + 1, 0), t_r) : t_r;
        qi_s[tid] = i;
        qh_s[tid] = hh;
        nv_s[tid] = nv;
        m_s[tid] = -INFINITY;
        l_s[tid] = 0.f;
    }
    for (int e = tid; e < R * a.dacc; e += NT) acc[e] = 0.f;
    __syncthreads();
    if (tid == 0) {
        int mx = 0;
        for (int x = 0; x < R; ++x) mx = max(mx, nv_s[x]);
        nvmax_s = mx;
    }
    for (int e = tid; e < R * a.qd; e += NT) {
        const int row = e / a.qd, x = e % a.qd;
        const int i = qi_s[row];
        q_s[row * a.qstr + x] = i >= 0 ? load_q<DESIGN>(a, r, i, qh_s[row], x) : 0.f;
    }
    __syncthreads();
    const int nvmax = nvmax_s;

    const int my_row = tid / KC, my_key = tid % KC;
    const int cw = a.k + a.p;                           // width of a cache row
    const int ocnt = min(o_r, nvmax);                   // cache positions [0, ocnt)

    for (int pass = 0; pass < 2; ++pass) {
        // part 0: positions [0, ocnt) from the paged cache; part 1: [ocnt, nvmax) decompressed
        for (int part = 0; part < 2; ++part) {
            if (DESIGN == D_FA && part == 0) continue;
            if (DESIGN == D_MLA && part == 1) continue;
            const int beg = part == 0 ? 0 : ocnt;
            const int end = part == 0 ? ocnt : nvmax;
            const int qoff = (DESIGN == D_V6 && part == 1) ? a.k + a.p : 0;
            const int len = part == 0 ? cw : a.d + a.p;
            for (int j0 = beg; j0 < end; j0 += KC) {
                const int jn = min(KC, end - j0);
                // Stage the chunk (zeros beyond jn so that p = 0 never meets garbage).
                if (part == 0) {
                    for (int e = tid; e < KC * cw; e += NT) {
                        const int key = e / cw, x = e % cw;
                        float val = 0.f;
                        if (key < jn) {
                            const int j = j0 + key;
                            const int page = a.bt[r * a.bt_stride + j / a.page_size];
                            // A bad page index poisons the row instead of reading out of bounds.
                            val = (page >= 0 && page < a.num_pages)
                                ? bf(a.cache, ((long long)page * a.page_size + j % a.page_size) * cw + x)
                                : NAN;
                        }
                        k_s[key * a.kstr + x] = val;
                    }
                } else {
                    const int kw = a.d + a.p;
                    for (int e = tid; e < KC * kw; e += NT) {
                        const int key = e / kw, x = e % kw;
                        float val = 0.f;
                        if (key < jn) {
                            const long long slot = j0 + key - o_r;   // o_r = 0 for flash_attention
                            if (DESIGN == D_FA || x < a.d)
                                val = bf(a.kd, r * a.kds[0] + slot * a.kds[1] + head * a.kds[2] + x);
                            else
                                val = bf(a.krope, r * a.krs[0] + slot * a.krs[1] + (x - a.d));
                        }
                        k_s[key * a.kstr + x] = val;
                    }
                    for (int e = tid; e < KC * a.d; e += NT) {
                        const int key = e / a.d, x = e % a.d;
                        float val = 0.f;
                        if (key < jn) {
                            const long long slot = j0 + key - o_r;
                            val = bf(a.vd, r * a.vds[0] + slot * a.vds[1] + head * a.vds[2] + x);
                        }
                        v_s[key * a.vstr + x] = val;
                    }
                }
                __syncthreads();

                // Thread (row, key): one score, a sequential fp32 dot product.
                {
                    const int j = j0 + my_key;
                    float sc = -INFINITY;
                    if (my_key < jn && j < nv_s[my_row]) {
                        const float *qq = q_s + my_row * a.qstr + qoff;
                        const float *kk = k_s + my_key * a.kstr;
                        float dot = 0.f;
                        for (int x = 0; x < len; ++x) dot = fmaf(qq[x], kk[x], dot);
                        sc = dot * a.scale;
                    }
                    float *ps = p_s + my_row * KC + my_key;
                    if (pass == 0) *ps = sc;
                    else *ps = sc == -INFINITY ? 0.f : expf(sc - m_s[my_row]);
                }
                __syncthreads();

                if (pass == 0) {
                    if (tid < R) {
                        float m = m_s[tid];
                        for (int key = 0; key < KC; ++key) m = fmaxf(m, p_s[tid * KC + key]);
                        m_s[tid] = m;
                    }
                } else {
                    if (tid < R) {
                        float l = l_s[tid];
                        for (int key = 0; key < KC; ++key) l += p_s[tid * KC + key];
                        l_s[tid] = l;
                    }
                    // acc[row][aoff + c] += sum_key p[row][key] * V[key][c]
                    const int dvp = part == 0 ? a.k : a.d;
                    const int aoff = (DESIGN == D_V6 && part == 1) ? a.k : 0;
                    const float *src = part == 0 ? k_s : v_s;
                    const int sstr = part == 0 ? a.kstr : a.vstr;
                    for (int e = tid; e < R * dvp; e += NT) {
                        const int row = e / dvp, c = e % dvp;
                        float *ap = acc + row * a.dacc + aoff + c;
                        float v = *ap;
                        for (int key = 0; key < jn; ++key)
                            v = fmaf(p_s[row * KC + key], src[key * sstr + c], v);
                        *ap = v;
                    }
                }
                __syncthreads();
            }
        }
    }

    // Epilogue: out = acc / l (var6: (latent acc @ w_uv[h] + value acc) / l), lse = m + log l.
    for (int e = tid; e < R * a.dv; e += NT) {
        const int row = e / a.dv, c = e % a.dv;
        const int i = qi_s[row];
        if (i < 0) continue;
        const int hh = qh_s[row];
        const float l = l_s[row];
        float val;
        if (DESIGN == D_V6) {
            const float *lat = acc + row * a.dacc;
            float sum = lat[a.k + c];
            const bf16 *w = a.w_uv + (long long)hh * a.k * a.d + c;
            for (int x = 0; x < a.k; ++x) sum = fmaf(lat[x], bf(w, (long long)x * a.d), sum);
            val = sum;
        } else {
            val = acc[row * a.dacc + c];
        }
        a.out[(((long long)r * a.s + i) * a.h + hh) * a.dv + c] = l > 0.f ? val / l : 0.f;
    }
    if (a.lse && tid < R) {
        const int i = qi_s[tid];
        if (i >= 0) {
            const float l = l_s[tid];
            a.lse[((long long)r * a.h + qh_s[tid]) * a.s + i] = l > 0.f ? m_s[tid] + logf(l) : -INFINITY;
        }
    }
}

int odd_pad(int x) { return (x % 2 == 0) ? x + 1 : x; }

long long pick(int64_t given, long long packed) { return given != 0 ? (long long)given : packed; }

size_t smem_bytes(const RefArgs &a, int R)
{
    size_t floats = (size_t)R * a.qstr + (size_t)KC * a.kstr + (size_t)KC * a.vstr +
                    (size_t)R * a.dacc + (size_t)R * KC + 2 * (size_t)R;
    return floats * sizeof(float) + 3 * (size_t)R * sizeof(int);
}

template <int DESIGN, int R>
mla_status launch_r(RefArgs &a, size_t smem, cudaStream_t st)
{
    auto fn = gpu_ref_kernel<DESIGN, R>;
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu reference: cudaFuncSetAttribute: %s",
                        cudaGetErrorString(err));
    long long groups = DESIGN == D_MLA ? (long long)a.b : (long long)a.b * a.h;
    a.tiles = DESIGN == D_MLA ? (int)(((long long)a.s * a.h + R - 1) / R) : (a.s + R - 1) / R;
    long long blocks = groups * a.tiles;
    if (blocks > 0x7fffffffLL)
        return mla_fail(MLA_STATUS_UNSUPPORTED, "gpu reference: grid of %lld blocks too large", blocks);
    fn<<<(unsigned)blocks, R * KC, smem, st>>>(a);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu reference: launch: %s", cudaGetErrorString(err));
    return MLA_STATUS_OK;
}

// Pick the widest row group whose shared memory fits the device, then launch.
template <int DESIGN>
mla_status launch(RefArgs &a, void *stream)
{
    int dev = 0, optin = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "gpu reference: device query: %s", cudaGetErrorString(err));
    cudaStream_t st = (cudaStream_t)stream;
    size_t sm;
    if ((sm = smem_bytes(a, 16)) <= (size_t)optin) return launch_r<DESIGN, 16>(a, sm, st);
    if ((sm = smem_bytes(a, 8)) <= (size_t)optin) return launch_r<DESIGN, 8>(a, sm, st);
    if ((sm = smem_bytes(a, 4)) <= (size_t)optin) return launch_r<DESIGN, 4>(a, sm, st);
    if ((sm = smem_bytes(a, 1)) <= (size_t)optin) return launch_r<DESIGN, 1>(a, sm, st);
    return mla_fail(MLA_STATUS_UNSUPPORTED, "gpu reference: needs %zu B of shared memory, device allows %d",
                    sm, optin);
}

mla_status check_problem(const mla_problem *pb, const void *x, const float *out, const char *who)
{
    if (!pb || !x || !out)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: null problem, tensors or output", who);
    if (pb->b < 1 || pb->s < 1 || pb->t < 1 || pb->h < 1 || pb->d < 1 || pb->k < 1 || pb->p < 0 ||
        pb->s > pb->t || !(pb->scale > 0.f) || isinf(pb->scale))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "%s: bad problem b=%d s=%d t=%d h=%d d=%d k=%d p=%d scale=%g", who, pb->b,
                        pb->s, pb->t, pb->h, pb->d, pb->k, pb->p, (double)pb->scale);
    return MLA_STATUS_OK;
}

void base_args(const mla_problem *pb, RefArgs &a)
{
    a = RefArgs{};
    a.b = pb->b; a.s = pb->s; a.t = pb->t; a.h = pb->h;
    a.d = pb->d; a.k = pb->k; a.p = pb->p; a.n = pb->n;
    a.page_size = pb->page_size; a.causal = pb->causal ? 1 : 0;
    a.scale = pb->scale;
}

// Strides of a [B0, B1, B2, D] tensor: given ones, or packed where 0.
void strides3(const int64_t *given, long long b1, long long b2, long long dlast, long long *out)
{
    out[2] = pick(given[2], dlast);
    out[1] = pick(given[1], b2 * dlast);
    out[0] = pick(given[0], b1 * b2 * dlast);
}

}  // namespace

extern "C" mla_status mla_gpu_ref_flash_attention(const mla_problem *pb, const mla_flash_attention_tensors *x,
                                                  float *out, float *lse, void *stream)
{
    mla_status st = check_problem(pb, x, out, "mla_gpu_ref_flash_attention");
    if (st != MLA_STATUS_OK) return st;
    if (!x->q || !x->k || !x->v)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_ref_flash_attention: null q, k or v");
    RefArgs a;
    base_args(pb, a);
    const int dq = pb->d + pb->p;
    a.seqlens = x->seqlens;
    a.q = (const bf16 *)x->q;   strides3(x->q_strides, pb->s, pb->h, dq, a.qs);
    a.kd = (const bf16 *)x->k;  strides3(x->k_strides, pb->t, pb->h, dq, a.kds);
    a.vd = (const bf16 *)x->v;  strides3(x->v_strides, pb->t, pb->h, pb->d, a.vds);
    a.out = out; a.lse = lse;
    a.qd = dq; a.qstr = odd_pad(dq); a.kstr = odd_pad(dq); a.vstr = odd_pad(pb->d);
    a.dacc = pb->d; a.dv = pb->d;
    return launch<D_FA>(a, stream);
}

extern "C" mla_status mla_gpu_ref_flash_mla(const mla_problem *pb, const mla_flash_mla_tensors *x,
                                            float *out, float *lse, void *stream)
{
    mla_status st = check_problem(pb, x, out, "mla_gpu_ref_flash_mla");
    if (st != MLA_STATUS_OK) return st;
    if (!x->q || !x->cache || !x->block_table || pb->page_size < 1 ||
        (long long)x->max_pages * pb->page_size < pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "mla_gpu_ref_flash_mla: null q/cache/block_table or too few pages per request");
    RefArgs a;
    base_args(pb, a);
    const int dq = pb->k + pb->p;
    a.seqlens = x->seqlens;
    a.q = (const bf16 *)x->q;  strides3(x->q_strides, pb->s, pb->h, dq, a.qs);
    a.cache = (const bf16 *)x->cache;
    a.num_pages = x->num_pages;
    a.bt = x->block_table;
    a.bt_stride = pick(x->block_table_stride, x->max_pages);
    a.out = out; a.lse = lse;
    a.qd = dq; a.qstr = odd_pad(dq); a.kstr = odd_pad(dq); a.vstr = 0;
    a.dacc = pb->k; a.dv = pb->k;
    return launch<D_MLA>(a, stream);
}

extern "C" mla_status mla_gpu_ref_var6_plus(const mla_problem *pb, const mla_var6_plus_tensors *x,
                                            float *out, float *lse, void *stream)
{
    mla_status st = check_problem(pb, x, out, "mla_gpu_ref_var6_plus");
    if (st != MLA_STATUS_OK) return st;
    if (pb->n < 0 || pb->n > pb->t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_ref_var6_plus: n=%d not in [0, t=%d]",
                        pb->n, pb->t);
    if (!x->q_lat || !x->q_nope || !x->q_rope || !x->w_uv)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_ref_var6_plus: null q_lat/q_nope/q_rope/w_uv");
    if (pb->n > 0 && (!x->k_nope || !x->v || !x->k_rope))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_ref_var6_plus: n > 0 needs k_nope, v, k_rope");
    if (pb->n < pb->t && (!x->cache || !x->block_table || pb->page_size < 1 ||
                          (long long)x->max_pages * pb->page_size < pb->t - pb->n))
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT,
                        "mla_gpu_ref_var6_plus: n < t needs cache and a block table covering t - n tokens");
    RefArgs a;
    base_args(pb, a);
    a.seqlens = x->seqlens;
    a.q_lat = (const bf16 *)x->q_lat;   strides3(x->q_lat_strides, pb->s, pb->h, pb->k, a.qls);
    a.q_nope = (const bf16 *)x->q_nope; strides3(x->q_nope_strides, pb->s, pb->h, pb->d, a.qns);
    a.q_rope = (const bf16 *)x->q_rope; strides3(x->q_rope_strides, pb->s, pb->h, pb->p, a.qrs);
    a.cache = (const bf16 *)x->cache;
    a.num_pages = x->num_pages;
    a.bt = x->block_table;
    a.bt_stride = pick(x->block_table_stride, x->max_pages);
    a.kd = (const bf16 *)x->k_nope;     strides3(x->k_nope_strides, pb->n, pb->h, pb->d, a.kds);
    a.vd = (const bf16 *)x->v;          strides3(x->v_strides, pb->n, pb->h, pb->d, a.vds);
    a.krope = (const bf16 *)x->k_rope;
    a.krs[1] = pick(x->k_rope_strides[1], pb->p);
    a.krs[0] = pick(x->k_rope_strides[0], (long long)pb->n * pb->p);
    a.w_uv = (const bf16 *)x->w_uv;
    a.out = out; a.lse = lse;
    const int cw = pb->k + pb->p, nw = pb->d + pb->p;
    a.qd = cw + nw; a.qstr = odd_pad(a.qd);
    a.kstr = odd_pad(cw > nw ? cw : nw); a.vstr = odd_pad(pb->d);
    a.dacc = pb->k + pb->d; a.dv = pb->d;
    return launch<D_V6>(a, stream);
}

/* ------------------------------------------------------------------------------------------ */
/* Random bf16 fill for device-generated check inputs: counter-based (splitmix64 of the index),
 * so the values depend only on (seed, index), not on the launch shape. */

namespace {

__device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void fill_randn_bf16_kernel(bf16 *dst, size_t count, unsigned long long seed, float stddev)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        unsigned long long h1 = mix64(seed + (2 * i + 1) * 0x9e3779b97f4a7c15ull);
        unsigned long long h2 = mix64(seed + (2 * i + 2) * 0x9e3779b97f4a7c15ull);
        float u1 = ((float)(h1 >> 40) + 0.5f) * (1.0f / 16777216.0f);   // (0, 1): log finite
        float u2 = (float)(h2 >> 40) * (1.0f / 16777216.0f);
        float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        float v = fminf(fmaxf(z * stddev, -1.0f), 1.0f);
        bf16 bv = __float2bfloat16(v);
        // never an exact zero: an all-zero tensor (or slot) would hide unwritten data
        if ((__bfloat16_as_ushort(bv) & 0x7fff) == 0) bv = __float2bfloat16(u2 < 0.5f ? -0.01f : 0.01f);
        dst[i] = bv;
    }
}

}  // namespace

extern "C" mla_status mla_gpu_fill_randn_bf16(void *dst, size_t count, uint64_t seed, float stddev, void *stream)
{
    if (count == 0) return MLA_STATUS_OK;
    if (!dst) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_gpu_fill_randn_bf16: null pointer");
    size_t blocks = (count + 255) / 256;
    if (blocks > 16384) blocks = 16384;
    fill_randn_bf16_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>((bf16 *)dst, count,
                                                                              (unsigned long long)seed, stddev);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "mla_gpu_fill_randn_bf16: launch: %s", cudaGetErrorString(err));
    return MLA_STATUS_OK;
}
