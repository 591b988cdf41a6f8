// Policies for attn_tile (attn_core.cuh): where queries, keys, values and results of one CTA
// live. LatentPolicy: absorbed attention over the paged latent cache, rows = (query, head) pairs
// of one request sharing every key (flash_mla, the old part of mla_var6_plus). DensePolicy: one
// head's own keys and values, rows = the s queries (flash_attention, the new part of mla_var6_plus).
#pragma once
#include "attn_core.cuh"

namespace mla {

struct LatentArgs {
    const bf16 *qa; long long qa_s[3];   // [b, s, h, DA] (latent part of the query)
    const bf16 *qb; long long qb_s[3];   // [b, s, h, DB] (RoPE part)
    const bf16 *cache;                   // [num_pages, page, DA + DB]
    const int *block_table; long long bt_stride;
    int page;
    const int *seqlens;                  // NULL: every request has t tokens
    int s, h, t, causal;
    int n_new;                           // mla_var6_plus: newest tokens held elsewhere (0 here)
    bf16 *out; long long os[3];          // final output [b, s, h, DA] (when not partial)
    float *lse;                          // [b, h, s] or NULL
};

template <int DA, int DB>
struct LatentPolicy {
    const LatentArgs *a;
    int r, t_r, o_lim, rows;
    __device__ LatentPolicy(const LatentArgs *a_, int r_) : a(a_), r(r_)
    {
        t_r = a->seqlens ? min(max(a->seqlens[r], 0), a->t) : a->t;
        o_lim = max(t_r - a->n_new, 0);
        rows = a->s * a->h;
    }
    __device__ int row_limit(int m) const
    {
        return min(visible_count(t_r, a->s, m / a->h, a->causal), o_lim);
    }
    __device__ const bf16 *q_row(int m, int part) const
    {
        const int si = m / a->h, hi = m % a->h;
        return part == 0 ? a->qa + r * a->qa_s[0] + si * a->qa_s[1] + hi * a->qa_s[2]
                         : a->qb + r * a->qb_s[0] + si * a->qb_s[1] + hi * a->qb_s[2];
    }
    __device__ const bf16 *k_tok(int j, int part) const
    {
        const int pg = __ldg(a->block_table + r * a->bt_stride + j / a->page);
        const bf16 *base = a->cache + ((long long)pg * a->page + j % a->page) * (DA + DB);
        return part == 0 ? base : base + DA;
    }
    __device__ const bf16 *v_tok(int j) const { return k_tok(j, 0); }
    __device__ long long row_global(int m) const
    {
        return ((long long)r * a->s + m / a->h) * a->h + m % a->h;
    }
    __device__ bf16 *out_row(int m) const
    {
        const int si = m / a->h, hi = m % a->h;
        return a->out + r * a->os[0] + si * a->os[1] + hi * a->os[2];
    }
    __device__ float *lse_at(int m) const
    {
        const int si = m / a->h, hi = m % a->h;
        return a->lse ? a->lse + ((long long)r * a->h + hi) * a->s + si : nullptr;
    }
    __device__ const bf16 *any_ptr() const { return a->qa; }
};

struct DenseArgs {
    const bf16 *qa; long long qa_s[3];   // [b, s, h, DA]
    const bf16 *qb; long long qb_s[3];   // [b, s, h, DB]
    const bf16 *ka; long long ka_s[3];   // [b, T, h, DA]
    const bf16 *kb; long long kb_s[3];   // [b, T, h, DB] (head stride 0: shared by all heads)
    const bf16 *v;  long long v_s[3];    // [b, T, h, DV]
    const int *seqlens;
    int s, h, t, causal;
    int hybrid, n_new;  // hybrid: slot j is position o_r + j, o_r = max(t_r - n_new, 0)
    bf16 *out; long long os[3];
    float *lse;
};

struct DensePolicy {
    const DenseArgs *a;
    int r, hi, t_r, off, count, rows;
    __device__ DensePolicy(const DenseArgs *a_, int r_, int hi_) : a(a_), r(r_), hi(hi_)
    {
        t_r = a->seqlens ? min(max(a->seqlens[r], 0), a->t) : a->t;
        off = a->hybrid ? max(t_r - a->n_new, 0) : 0;
        count = t_r - off;
        rows = a->s;
    }
    __device__ int row_limit(int m) const
    {
        return min(max(visible_count(t_r, a->s, m, a->causal) - off, 0), count);
    }
    __device__ const bf16 *q_row(int m, int part) const
    {
        return part == 0 ? a->qa + r * a->qa_s[0] + m * a->qa_s[1] + hi * a->qa_s[2]
                         : a->qb + r * a->qb_s[0] + m * a->qb_s[1] + hi * a->qb_s[2];
    }
    __device__ const bf16 *k_tok(int j, int part) const
    {
        return part == 0 ? a->ka + r * a->ka_s[0] + (long long)j * a->ka_s[1] + hi * a->ka_s[2]
                         : a->kb + r * a->kb_s[0] + (long long)j * a->kb_s[1] + hi * a->kb_s[2];
    }
    __device__ const bf16 *v_tok(int j) const
    {
        return a->v + r * a->v_s[0] + (long long)j * a->v_s[1] + hi * a->v_s[2];
    }
    __device__ long long row_global(int m) const
    {
        return ((long long)r * a->s + m) * a->h + hi;
    }
    __device__ bf16 *out_row(int m) const
    {
        return a->out + r * a->os[0] + m * a->os[1] + hi * a->os[2];
    }
    __device__ float *lse_at(int m) const
    {
        return a->lse ? a->lse + ((long long)r * a->h + hi) * a->s + m : nullptr;
    }
    __device__ const bf16 *any_ptr() const { return a->qa; }
};

// Decode a global row (r * s + si) * h + hi into the output address of a [b, s, h, DV] tensor.
__device__ __forceinline__ bf16 *out_at(bf16 *out, const long long os[3], long long row, int s,
                                        int h)
{
    const int hi = (int)(row % h);
    const long long rs = row / h;
    const int si = (int)(rs % s);
    const long long r = rs / s;
    return out + r * os[0] + si * os[1] + hi * os[2];
}

__device__ __forceinline__ float *lse_at_row(float *lse, long long row, int s, int h)
{
    if (!lse) return nullptr;
    const int hi = (int)(row % h);
    const long long rs = row / h;
    const int si = (int)(rs % s);
    const long long r = rs / s;
    return lse + (r * h + hi) * s + si;
}

}  // namespace mla
