/*
 * Device inputs for timing and autotuning (mla_dev_inputs_create/destroy): `copies` independent
 * sets of a problem's tensors, so a CUDA graph rotating over them does not run out of L2, filled
 * on the device by a hash-based noise kernel. Also mla_dev_fill_random_bf16, which the C host
 * code (devices --measure) uses to fill its GEMM operands.
 *
 * One cudaMalloc per copy (an arena carved into 256-byte aligned tensors) keeps the number of
 * allocations at most MLA_MAX_INPUT_COPIES, within in->allocs. Never managed memory: a page
 * fault in a timed kernel would measure the driver, not the kernel.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "autotune.h"
#include "error.h"

namespace {

__host__ __device__ inline uint64_t mix64(uint64_t x)
{
    /* splitmix64 finaliser: every input bit affects every output bit */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

__global__ void fill_bf16_kernel(__nv_bfloat16 *dst, size_t count, uint64_t key, float amp)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        uint64_t h = mix64(key ^ mix64(i + 0x9e3779b97f4a7c15ull));
        float u = (float)(h >> 40) * (1.0f / 16777216.0f);   /* 24 bits -> [0, 1) */
        dst[i] = __float2bfloat16((2.0f * u - 1.0f) * amp);
    }
}

mla_status launch_fill(void *dst, size_t count, uint64_t key, float amp, cudaStream_t st)
{
    if (count == 0)
        return MLA_STATUS_OK;
    size_t blocks = (count + 255) / 256;
    if (blocks > 8192)
        blocks = 8192;   /* grid-stride: enough blocks to fill every SM several times */
    fill_bf16_kernel<<<(unsigned)blocks, 256, 0, st>>>((__nv_bfloat16 *)dst, count, key, amp);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return mla_fail(MLA_STATUS_CUDA_ERROR, "fill kernel launch: %s", cudaGetErrorString(e));
    return MLA_STATUS_OK;
}

enum slot_kind { K_BF16, K_SEQLENS, K_BLOCKTABLE, K_OUT };

struct slot {
    size_t bytes;
    slot_kind kind;
    size_t off;
};

struct layout {
    std::vector<slot> s;
    size_t add(size_t bytes, slot_kind kind)
    {
        s.push_back(slot{bytes, kind, 0});
        return s.size() - 1;
    }
};

size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

}  // namespace

extern "C" mla_status mla_dev_fill_random_bf16(void *dst, size_t count, uint64_t seed,
                                               float amplitude, void *stream)
{
    if (!dst && count)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_fill_random_bf16: null pointer");
    return launch_fill(dst, count, mix64(seed ^ 0x5bd1e995ull), amplitude, (cudaStream_t)stream);
}

extern "C" void mla_dev_inputs_destroy(mla_dev_inputs *in)
{
    if (!in)
        return;
    for (int i = 0; i < in->num_allocs; i++)
        if (in->allocs[i])
            cudaFree(in->allocs[i]);   /* errors ignored: nothing useful to do on teardown */
    for (int c = 0; c < MLA_MAX_INPUT_COPIES; c++)
        free(in->tensors[c]);
    memset(in, 0, sizeof *in);
}

extern "C" void mla_page_table(int32_t *bt, int64_t num_pages, uint64_t seed, int copy, mla_page_order order)
{
    for (int64_t j = 0; j < num_pages; j++)
        bt[j] = (int32_t)j;
    if (order == MLA_PAGES_SEQUENTIAL)
        return;
    /* Fisher-Yates, seeded per copy */
    uint64_t r = mix64(seed ^ (0x2545f4914f6cdd1dull * (uint64_t)(copy + 1)));
    for (int64_t j = num_pages - 1; j > 0; j--) {
        r = mix64(r + 0x9e3779b97f4a7c15ull);
        const int64_t m = (int64_t)(r % (uint64_t)(j + 1));
        const int32_t tmp = bt[j];
        bt[j] = bt[m];
        bt[m] = tmp;
    }
}

extern "C" mla_status mla_dev_inputs_create(const mla_problem *pb, int copies, uint64_t seed,
                                            const mla_device_info *dev, mla_dev_inputs *in)
{
    return mla_dev_inputs_create_paged(pb, copies, seed, MLA_PAGES_RANDOM, dev, in);
}

extern "C" mla_status mla_dev_inputs_create_paged(const mla_problem *pb, int copies, uint64_t seed,
                                                  mla_page_order pages, const mla_device_info *dev,
                                                  mla_dev_inputs *in)
{
    if (!pb || !in)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: null argument");
    memset(in, 0, sizeof *in);
    if (pages != MLA_PAGES_RANDOM && pages != MLA_PAGES_SEQUENTIAL)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: page order %d", (int)pages);
    if (copies < 0 || copies > MLA_MAX_INPUT_COPIES)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: copies %d not in 0..%d",
                        copies, MLA_MAX_INPUT_COPIES);
    const int64_t b = pb->b, s = pb->s, t = pb->t, h = pb->h, d = pb->d, k = pb->k, p = pb->p;
    const int64_t n = pb->n;
    if (b < 1 || s < 1 || t < 1 || h < 1 || d < 0 || k < 0 || p < 0 || n < 0 || n > t)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: bad problem sizes");
    const bool paged = pb->design == MLA_DESIGN_FLASH_MLA || pb->design == MLA_DESIGN_MLA_VAR6_PLUS;
    if (pb->design != MLA_DESIGN_FLASH_ATTENTION && !paged)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: unknown design %d",
                        (int)pb->design);
    if (paged && pb->page_size < 1)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: page_size %d",
                        pb->page_size);

    /* Pages: every request owns ceil(t / page) pages (for mla_var6_plus too, so that the block
     * table is valid for any o <= t); the table orders all of them as `pages` says. */
    const int64_t page = paged ? pb->page_size : 1;
    const int64_t max_pages = paged ? (t + page - 1) / page : 0;
    const int64_t num_pages = b * max_pages;
    if (num_pages > INT32_MAX)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_dev_inputs_create: %lld pages",
                        (long long)num_pages);

    const size_t B2 = 2;   /* bytes of a bf16 */
    layout L;
    size_t i_q = 0, i_k = 0, i_v = 0, i_qlat = 0, i_qnope = 0, i_qrope = 0, i_cache = 0, i_bt = 0,
           i_knope = 0, i_krope = 0, i_wuv = 0;
    size_t i_seq = 0, i_out = 0, i_lse = 0;
    switch (pb->design) {
    case MLA_DESIGN_FLASH_ATTENTION:
        i_q = L.add(B2 * b * s * h * (d + p), K_BF16);
        i_k = L.add(B2 * b * t * h * (d + p), K_BF16);
        i_v = L.add(B2 * b * t * h * d, K_BF16);
        i_out = L.add(B2 * b * s * h * d, K_OUT);
        break;
    case MLA_DESIGN_FLASH_MLA:
        i_q = L.add(B2 * b * s * h * (k + p), K_BF16);
        i_cache = L.add(B2 * num_pages * page * (k + p), K_BF16);
        i_bt = L.add(4 * b * max_pages, K_BLOCKTABLE);
        i_out = L.add(B2 * b * s * h * k, K_OUT);
        break;
    default:
        i_qlat = L.add(B2 * b * s * h * k, K_BF16);
        i_qnope = L.add(B2 * b * s * h * d, K_BF16);
        i_qrope = L.add(B2 * b * s * h * p, K_BF16);
        i_cache = L.add(B2 * num_pages * page * (k + p), K_BF16);
        i_bt = L.add(4 * b * max_pages, K_BLOCKTABLE);
        i_knope = L.add(B2 * b * n * h * d, K_BF16);
        i_v = L.add(B2 * b * n * h * d, K_BF16);
        i_krope = L.add(B2 * b * n * p, K_BF16);
        i_wuv = L.add(B2 * h * k * d, K_BF16);
        i_out = L.add(B2 * b * s * h * d, K_OUT);
        break;
    }
    i_seq = L.add(4 * b, K_SEQLENS);
    i_lse = L.add(4 * b * h * s, K_OUT);

    /* Arena offsets; a zero-sized tensor (n = 0) still gets 256 bytes so no pointer is NULL. */
    size_t per_copy = 0, input_bytes = 0;
    for (auto &sl : L.s) {
        sl.off = per_copy;
        per_copy += align256(sl.bytes ? sl.bytes : 1);
        if (sl.kind != K_OUT)
            input_bytes += sl.bytes;
    }

    const size_t l2 = (dev && dev->l2_bytes) ? dev->l2_bytes : (size_t)50 << 20;
    const size_t mem_cap = (size_t)16 << 30;   /* keep the rotation within ~16 GB */
    if (copies == 0) {
        size_t need = input_bytes ? 2 * l2 / input_bytes + 1 : 2;   /* total > 2x L2 */
        copies = (int)(need < 2 ? 2 : need > MLA_MAX_INPUT_COPIES ? MLA_MAX_INPUT_COPIES : need);
        size_t fit = per_copy ? mem_cap / per_copy : (size_t)copies;
        if (fit < 1)
            fit = 1;   /* one copy larger than the cap: it is what the problem needs */
        if ((size_t)copies > fit)
            copies = (int)fit;
    }

    in->pb = *pb;
    mla_status st = MLA_STATUS_OK;
    std::vector<int32_t> host_seq((size_t)b, (int32_t)t);
    std::vector<int32_t> perm((size_t)num_pages);

    for (int c = 0; c < copies; c++) {
        void *arena = nullptr;
        cudaError_t e = cudaMalloc(&arena, per_copy);
        if (e != cudaSuccess) {
            cudaGetLastError();   /* an allocation failure is not sticky: clear it */
            st = mla_fail(e == cudaErrorMemoryAllocation ? MLA_STATUS_OUT_OF_MEMORY : MLA_STATUS_CUDA_ERROR,
                          "mla_dev_inputs_create: cudaMalloc of %zu bytes (copy %d of %d): %s",
                          per_copy, c + 1, copies, cudaGetErrorString(e));
            goto fail;
        }
        in->allocs[in->num_allocs++] = arena;
        in->copies = c + 1;
        char *base = (char *)arena;
        auto ptr = [&](size_t i) { return (void *)(base + L.s[i].off); };

        /* Fill: bf16 inputs by the hash kernel (key = seed, copy, tensor), outputs zeroed. */
        for (size_t i = 0; i < L.s.size(); i++) {
            const slot &sl = L.s[i];
            if (sl.kind == K_BF16) {
                uint64_t key = mix64(seed) ^ mix64(((uint64_t)c << 32) | (uint64_t)(i + 1));
                st = launch_fill(ptr(i), sl.bytes / 2, key, 0.2f, 0);
                if (st != MLA_STATUS_OK)
                    goto fail;
            } else if (sl.kind == K_OUT) {
                e = cudaMemset(ptr(i), 0, align256(sl.bytes ? sl.bytes : 1));
                if (e != cudaSuccess) {
                    st = mla_fail(MLA_STATUS_CUDA_ERROR, "mla_dev_inputs_create: cudaMemset: %s",
                                  cudaGetErrorString(e));
                    goto fail;
                }
            }
        }
        e = cudaMemcpy(ptr(i_seq), host_seq.data(), 4 * (size_t)b, cudaMemcpyHostToDevice);
        if (e == cudaSuccess && paged) {
            mla_page_table(perm.data(), num_pages, seed, c, pages);
            e = cudaMemcpy(ptr(i_bt), perm.data(), 4 * (size_t)num_pages, cudaMemcpyHostToDevice);
        }
        if (e != cudaSuccess) {
            st = mla_fail(MLA_STATUS_CUDA_ERROR, "mla_dev_inputs_create: cudaMemcpy: %s",
                          cudaGetErrorString(e));
            goto fail;
        }

        /* The tensor struct of this copy (host memory), packed strides written explicitly. */
        switch (pb->design) {
        case MLA_DESIGN_FLASH_ATTENTION: {
            auto *x = (mla_flash_attention_tensors *)calloc(1, sizeof(mla_flash_attention_tensors));
            if (!x)
                goto host_oom;
            x->q = ptr(i_q);
            x->q_strides[0] = s * h * (d + p); x->q_strides[1] = h * (d + p); x->q_strides[2] = d + p;
            x->k = ptr(i_k);
            x->k_strides[0] = t * h * (d + p); x->k_strides[1] = h * (d + p); x->k_strides[2] = d + p;
            x->v = ptr(i_v);
            x->v_strides[0] = t * h * d; x->v_strides[1] = h * d; x->v_strides[2] = d;
            x->seqlens = (const int32_t *)ptr(i_seq);
            x->out = ptr(i_out);
            x->out_strides[0] = s * h * d; x->out_strides[1] = h * d; x->out_strides[2] = d;
            x->lse = (float *)ptr(i_lse);
            in->tensors[c] = x;
            break;
        }
        case MLA_DESIGN_FLASH_MLA: {
            auto *x = (mla_flash_mla_tensors *)calloc(1, sizeof(mla_flash_mla_tensors));
            if (!x)
                goto host_oom;
            x->q = ptr(i_q);
            x->q_strides[0] = s * h * (k + p); x->q_strides[1] = h * (k + p); x->q_strides[2] = k + p;
            x->cache = ptr(i_cache);
            x->num_pages = (int)num_pages;
            x->block_table = (const int32_t *)ptr(i_bt);
            x->max_pages = (int)max_pages;
            x->block_table_stride = max_pages;
            x->seqlens = (const int32_t *)ptr(i_seq);
            x->out = ptr(i_out);
            x->out_strides[0] = s * h * k; x->out_strides[1] = h * k; x->out_strides[2] = k;
            x->lse = (float *)ptr(i_lse);
            in->tensors[c] = x;
            break;
        }
        default: {
            auto *x = (mla_var6_plus_tensors *)calloc(1, sizeof(mla_var6_plus_tensors));
            if (!x)
                goto host_oom;
            x->q_lat = ptr(i_qlat);
            x->q_lat_strides[0] = s * h * k; x->q_lat_strides[1] = h * k; x->q_lat_strides[2] = k;
            x->q_nope = ptr(i_qnope);
            x->q_nope_strides[0] = s * h * d; x->q_nope_strides[1] = h * d; x->q_nope_strides[2] = d;
            x->q_rope = ptr(i_qrope);
            x->q_rope_strides[0] = s * h * p; x->q_rope_strides[1] = h * p; x->q_rope_strides[2] = p;
            x->cache = ptr(i_cache);
            x->num_pages = (int)num_pages;
            x->block_table = (const int32_t *)ptr(i_bt);
            x->max_pages = (int)max_pages;
            x->block_table_stride = max_pages;
            x->k_nope = ptr(i_knope);
            x->k_nope_strides[0] = n * h * d; x->k_nope_strides[1] = h * d; x->k_nope_strides[2] = d;
            x->v = ptr(i_v);
            x->v_strides[0] = n * h * d; x->v_strides[1] = h * d; x->v_strides[2] = d;
            x->k_rope = ptr(i_krope);
            x->k_rope_strides[0] = n * p; x->k_rope_strides[1] = p;
            x->w_uv = ptr(i_wuv);
            x->seqlens = (const int32_t *)ptr(i_seq);
            x->out = ptr(i_out);
            x->out_strides[0] = s * h * d; x->out_strides[1] = h * d; x->out_strides[2] = d;
            x->lse = (float *)ptr(i_lse);
            in->tensors[c] = x;
            break;
        }
        }
    }
    {
        /* The fills ran on the legacy stream; callers time on their own non-blocking streams. */
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            st = mla_fail(MLA_STATUS_CUDA_ERROR, "mla_dev_inputs_create: filling inputs: %s",
                          cudaGetErrorString(e));
            goto fail;
        }
    }
    return MLA_STATUS_OK;

host_oom:
    st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_dev_inputs_create: host malloc failed");
fail:
    mla_dev_inputs_destroy(in);
    return st;
}
