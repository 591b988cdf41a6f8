// The portable (sm_80+) attention tile shared by the three designs' v0 kernels.
//
// One CTA computes BM query rows against a range of KV tokens (one split of the request's
// visible range), flash-attention style: S = Q K^T with mma.sync m16n8k16 (bf16 in, fp32 acc),
// online softmax in the log2 domain, O += P V. Q (BM x DQK) stays in shared memory; K (and V
// when it is not a view of K) stream through a STAGES-deep cp.async ring of BN tokens.
//
// Warp layout: WM = BM/16 row groups x WN column groups. For S a warp owns 16 rows x BN/WN
// tokens; for O it owns 16 rows x DV/WN output columns, so the 64 x 512 latent output of
// flash_mla fits in registers (128 fp32 per thread with WN = 2). The WN warps sharing rows agree
// on the running max through shared memory, and exchange P through shared memory (bf16).
//
// What a design supplies is a Policy: where row m's query lives, which tokens row m sees, where
// token j's key/value live, and where results go. Rows and tokens beyond the visible range are
// zero-filled by cp.async (never read), so garbage in unused cache slots cannot leak in.
#pragma once
#include <cuda_bf16.h>
#include <math_constants.h>
#include <stdint.h>
#include "ptx.cuh"

namespace mla {

using bf16 = __nv_bfloat16;

template <int DA_, int DB_, int DV_, bool SHARED_V_, int BM_, int BN_, int WN_, int STAGES_>
struct AttnCfg {
    static constexpr int DA = DA_;   // dims of the first key/query part (latent or no-RoPE)
    static constexpr int DB = DB_;   // dims of the second part (RoPE)
    static constexpr int DQK = DA_ + DB_;
    static constexpr int DV = DV_;
    static constexpr bool SHARED_V = SHARED_V_;  // V = the first DV dims of the K tile
    static constexpr int BM = BM_, BN = BN_, WN = WN_, STAGES = STAGES_;
    static constexpr int WM = BM / 16;
    static constexpr int NWARPS = WM * WN;
    static constexpr int NTHREADS = NWARPS * 32;
    // Rows padded by 16 bytes: a row stride that is an odd multiple of 16 bytes modulo 128 makes
    // the 8 row addresses of an ldmatrix hit 8 different 16-byte bank groups.
    static constexpr int KS = DQK + 8;
    static constexpr int VS = SHARED_V ? KS : DV + 8;
    static constexpr int PS = BN + 8;
    static constexpr int TPW = BN / WN;  // tokens per warp in S
    static constexpr int CPW = DV / WN;  // output columns per warp
    static constexpr int S_NT = TPW / 8;
    static constexpr int O_NT = CPW / 8;
    static_assert(BM % 16 == 0 && BN % 16 == 0, "tile shape");
    static_assert(TPW % 16 == 0 && CPW % 16 == 0, "warp tile must be a multiple of 16");
    static_assert(DA % 8 == 0 && DB % 8 == 0 && DQK % 16 == 0 && DV % 8 == 0, "16-byte chunks");
    static_assert(!SHARED_V || DV <= DQK, "shared V must be a prefix of K");
    static constexpr size_t Q_ELEMS = (size_t)BM * KS;
    static constexpr size_t K_ELEMS = (size_t)BN * KS;
    static constexpr size_t V_ELEMS = SHARED_V ? 0 : (size_t)BN * VS;
    static constexpr size_t P_ELEMS = (size_t)BM * PS;
    static constexpr size_t SMEM_BYTES =
        (Q_ELEMS + STAGES * (K_ELEMS + V_ELEMS) + P_ELEMS) * sizeof(bf16) +
        (size_t)2 * WN * BM * sizeof(float);
};

// Visible tokens of query si (0-based) of a request of t_r tokens and s queries (MLA_SPEC.md).
__device__ __forceinline__ int visible_count(int t_r, int s, int si, int causal)
{
    if (!causal) return t_r;
    int v = t_r - s + si + 1;
    return v < 0 ? 0 : (v > t_r ? t_r : v);
}

// Where results go: final (bf16 out + lse) or partial (fp32 per split, merged by a combine).
struct TileOut {
    float *ws_o;     // partial: [rows_global][nsplits][DV]
    float *ws_lse;   // partial: [rows_global][nsplits]
    int partial;
};

template <class Cfg, class Pol>
__device__ __forceinline__ void attn_tile(const Pol &pol, int m0, int split, int nsplits,
                                          float scale_log2, const TileOut &to, char *smem_raw)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, WN = Cfg::WN, KS = Cfg::KS, VS = Cfg::VS;
    constexpr int PS = Cfg::PS, TPW = Cfg::TPW, CPW = Cfg::CPW;
    constexpr int DA = Cfg::DA, DQK = Cfg::DQK, DV = Cfg::DV, NT = Cfg::NTHREADS;

    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sK = sQ + Cfg::Q_ELEMS;
    bf16 *sV = sK + Cfg::STAGES * Cfg::K_ELEMS;
    bf16 *sP = sV + Cfg::STAGES * Cfg::V_ELEMS;
    float *sMax = reinterpret_cast<float *>(sP + Cfg::P_ELEMS);  // [WN][BM]
    float *sSum = sMax + WN * BM;                                // [WN][BM]

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int wm = warp / WN, wn = warp % WN;
    const int g = lane >> 2, q4 = lane & 3;
    const int lr0 = wm * 16 + g, lr1 = lr0 + 8;  // the two CTA-local rows of this thread

    const int m_last = min(m0 + BM, pol.rows) - 1;
    // Row limits grow with the row index (later query tokens see more), so the last row bounds
    // the tokens this CTA must read.
    const int kv_lim = (m_last >= m0) ? pol.row_limit(m_last) : 0;
    const int n_tiles = (kv_lim + BN - 1) / BN;
    const int per = (n_tiles + nsplits - 1) / nsplits;
    const int t_begin = split * per;
    const int n_it = max(min(n_tiles, t_begin + per) - t_begin, 0);
    const int lim0 = (m0 + lr0 <= m_last) ? pol.row_limit(m0 + lr0) : 0;
    const int lim1 = (m0 + lr1 <= m_last) ? pol.row_limit(m0 + lr1) : 0;
    const bf16 *any = pol.any_ptr();  // a valid address for zero-fill copies

    // Q tile (its copies join the first commit group).
    constexpr int QCH = DQK / 8;
    for (int idx = tid; idx < BM * QCH; idx += NT) {
        const int r = idx / QCH, c = idx % QCH, m = m0 + r;
        const bool ok = m <= m_last;
        const bf16 *src = any;
        if (ok) src = (c < DA / 8) ? pol.q_row(m, 0) + c * 8 : pol.q_row(m, 1) + (c - DA / 8) * 8;
        cp_async_16(sQ + r * KS + c * 8, src, ok ? 16 : 0);
    }

    auto load_tile = [&](int tile, int stage) {
        const int j0 = tile * BN;
        bf16 *dK = sK + stage * Cfg::K_ELEMS;
        for (int idx = tid; idx < BN * QCH; idx += NT) {
            const int r = idx / QCH, c = idx % QCH, j = j0 + r;
            const bool ok = j < kv_lim;
            const bf16 *src = any;
            if (ok) src = (c < DA / 8) ? pol.k_tok(j, 0) + c * 8 : pol.k_tok(j, 1) + (c - DA / 8) * 8;
            cp_async_16(dK + r * KS + c * 8, src, ok ? 16 : 0);
        }
        if constexpr (!Cfg::SHARED_V) {
            constexpr int VCH = DV / 8;
            bf16 *dV = sV + stage * Cfg::V_ELEMS;
            for (int idx = tid; idx < BN * VCH; idx += NT) {
                const int r = idx / VCH, c = idx % VCH, j = j0 + r;
                const bool ok = j < kv_lim;
                cp_async_16(dV + r * VS + c * 8, ok ? pol.v_tok(j) + c * 8 : any, ok ? 16 : 0);
            }
        }
    };

    float o[Cfg::O_NT][4];
#pragma unroll
    for (int i = 0; i < Cfg::O_NT; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    float m_run[2] = {-CUDART_INF_F, -CUDART_INF_F};
    float l_run[2] = {0.f, 0.f};

#pragma unroll
    for (int st = 0; st < Cfg::STAGES - 1; ++st) {
        if (st < n_it) load_tile(t_begin + st, st);
        cp_async_commit();
    }

    for (int it = 0; it < n_it; ++it) {
        {
            const int nt = it + Cfg::STAGES - 1;
            if (nt < n_it) load_tile(t_begin + nt, nt % Cfg::STAGES);
            cp_async_commit();
        }
        cp_async_wait<Cfg::STAGES - 1>();
        __syncthreads();

        const bf16 *cK = sK + (it % Cfg::STAGES) * Cfg::K_ELEMS;
        const bf16 *cV = Cfg::SHARED_V ? cK : sV + (it % Cfg::STAGES) * Cfg::V_ELEMS;

        // S = Q K^T: 16 rows x TPW tokens per warp.
        float s[Cfg::S_NT][4];
#pragma unroll
        for (int i = 0; i < Cfg::S_NT; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
        const int mi = lane >> 3, r8 = lane & 7;
#pragma unroll 4
        for (int kk = 0; kk < DQK / 16; ++kk) {
            uint32_t a[4];
            ldmatrix_x4(a[0], a[1], a[2], a[3],
                        sQ + (wm * 16 + (mi & 1) * 8 + r8) * KS + kk * 16 + (mi >> 1) * 8);
#pragma unroll
            for (int n2 = 0; n2 < Cfg::S_NT / 2; ++n2) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4(b0, b1, b2, b3,
                            cK + (wn * TPW + n2 * 16 + (mi >> 1) * 8 + r8) * KS + kk * 16 + (mi & 1) * 8);
                mma_bf16_16816(s[2 * n2], a, b0, b1);
                mma_bf16_16816(s[2 * n2 + 1], a, b2, b3);
            }
        }

        // Mask, scale to the log2 domain, row max of this warp's tokens.
        const int j_base = (t_begin + it) * BN + wn * TPW;
        float mx[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int nt = 0; nt < Cfg::S_NT; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int j = j_base + nt * 8 + q4 * 2 + (e & 1);
                const int lim = (e >> 1) ? lim1 : lim0;
                float v = s[nt][e] * scale_log2;
                if (j >= lim) v = -CUDART_INF_F;
                s[nt][e] = v;
                mx[e >> 1] = fmaxf(mx[e >> 1], v);
            }
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        }
        if (WN > 1) {
            if (q4 == 0) {
                sMax[wn * BM + lr0] = mx[0];
                sMax[wn * BM + lr1] = mx[1];
            }
            __syncthreads();
#pragma unroll
            for (int w = 0; w < WN; ++w) {
                mx[0] = fmaxf(mx[0], sMax[w * BM + lr0]);
                mx[1] = fmaxf(mx[1], sMax[w * BM + lr1]);
            }
        }
        float base[2], alpha[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float m_new = fmaxf(m_run[r], mx[r]);
            // A row with nothing visible yet keeps m = -inf; exponentiate against 0 so that
            // masked entries give exp2(-inf) = 0 instead of NaN.
            base[r] = (m_new == -CUDART_INF_F) ? 0.f : m_new;
            alpha[r] = exp2f(m_run[r] - base[r]);
            m_run[r] = m_new;
        }

        // P = exp2(S - m), written to shared memory as bf16 for the PV product.
        float rs[2] = {0.f, 0.f};
#pragma unroll
        for (int nt = 0; nt < Cfg::S_NT; ++nt) {
            const float p0 = exp2f(s[nt][0] - base[0]), p1 = exp2f(s[nt][1] - base[0]);
            const float p2 = exp2f(s[nt][2] - base[1]), p3 = exp2f(s[nt][3] - base[1]);
            rs[0] += p0 + p1;
            rs[1] += p2 + p3;
            const int col = wn * TPW + nt * 8 + q4 * 2;
            *reinterpret_cast<uint32_t *>(sP + lr0 * PS + col) = pack_bf16x2(p0, p1);
            *reinterpret_cast<uint32_t *>(sP + lr1 * PS + col) = pack_bf16x2(p2, p3);
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) l_run[r] = l_run[r] * alpha[r] + rs[r];
#pragma unroll
        for (int i = 0; i < Cfg::O_NT; ++i) {
            o[i][0] *= alpha[0];
            o[i][1] *= alpha[0];
            o[i][2] *= alpha[1];
            o[i][3] *= alpha[1];
        }
        __syncthreads();

        // O += P V: 16 rows x CPW columns per warp, K-loop over the BN tokens.
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            uint32_t a[4];
            ldmatrix_x4(a[0], a[1], a[2], a[3],
                        sP + (wm * 16 + (mi & 1) * 8 + r8) * PS + kk * 16 + (mi >> 1) * 8);
#pragma unroll
            for (int n2 = 0; n2 < Cfg::O_NT / 2; ++n2) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3,
                                  cV + (kk * 16 + (mi & 1) * 8 + r8) * VS + wn * CPW + n2 * 16 + (mi >> 1) * 8);
                mma_bf16_16816(o[2 * n2], a, b0, b1);
                mma_bf16_16816(o[2 * n2 + 1], a, b2, b3);
            }
        }
        __syncthreads();  // the stage and sP/sMax are reused next iteration
    }
    cp_async_wait<0>();

    // Row sums: quad, then across the WN warps sharing the rows.
    float lt[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float l = l_run[r];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        lt[r] = l;
    }
    if (WN > 1) {
        if (q4 == 0) {
            sSum[wn * BM + lr0] = lt[0];
            sSum[wn * BM + lr1] = lt[1];
        }
        __syncthreads();
        lt[0] = lt[1] = 0.f;
#pragma unroll
        for (int w = 0; w < WN; ++w) {
            lt[0] += sSum[w * BM + lr0];
            lt[1] += sSum[w * BM + lr1];
        }
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int m = m0 + (r ? lr1 : lr0);
        if (m > m_last) continue;
        const bool empty = !(lt[r] > 0.f);
        const float inv = empty ? 0.f : 1.f / lt[r];
        const float lse = empty ? -CUDART_INF_F : (m_run[r] + log2f(lt[r])) * 0.69314718055994531f;
        if (to.partial) {
            const long long pr = pol.row_global(m) * nsplits + split;
            float *dst = to.ws_o + pr * DV;
#pragma unroll
            for (int i = 0; i < Cfg::O_NT; ++i) {
                const int col = wn * CPW + i * 8 + q4 * 2;
                *reinterpret_cast<float2 *>(dst + col) =
                    make_float2(o[i][2 * r] * inv, o[i][2 * r + 1] * inv);
            }
            if (wn == 0 && q4 == 0) to.ws_lse[pr] = lse;
        } else {
            bf16 *dst = pol.out_row(m);
#pragma unroll
            for (int i = 0; i < Cfg::O_NT; ++i) {
                const int col = wn * CPW + i * 8 + q4 * 2;
                *reinterpret_cast<uint32_t *>(dst + col) =
                    pack_bf16x2(o[i][2 * r] * inv, o[i][2 * r + 1] * inv);
            }
            float *lp = pol.lse_at(m);
            if (lp && wn == 0 && q4 == 0) *lp = lse;
        }
    }
}

// Merge the split partials of one row (a warp per row): weights exp(lse_i - max), renormalised.
// Split i of the row is at o0 + i * o_stride (DV floats) with its lse at lse0[i * lse_stride].
template <int DV>
__device__ __forceinline__ void combine_splits(const float *o0, long long o_stride, const float *lse0,
                                               long long lse_stride, int nsplits, bf16 *out, float *lse_out)
{
    const int lane = threadIdx.x & 31;
    float mx = -CUDART_INF_F;
    for (int i = lane; i < nsplits; i += 32) mx = fmaxf(mx, lse0[i * lse_stride]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (mx == -CUDART_INF_F) {  // nothing visible in any split
        for (int c = lane * 2; c < DV; c += 64)
            *reinterpret_cast<uint32_t *>(out + c) = pack_bf16x2(0.f, 0.f);
        if (lse_out && lane == 0) *lse_out = -CUDART_INF_F;
        return;
    }
    float den = 0.f;
    for (int i = 0; i < nsplits; ++i) den += __expf(lse0[i * lse_stride] - mx);
    const float inv = 1.f / den;
    for (int c = lane * 2; c < DV; c += 64) {
        float a0 = 0.f, a1 = 0.f;
        for (int i = 0; i < nsplits; ++i) {
            const float w = __expf(lse0[i * lse_stride] - mx);
            if (w == 0.f) continue;  // an empty split holds zeros with lse = -inf
            const float2 v = *reinterpret_cast<const float2 *>(o0 + i * o_stride + c);
            a0 += w * v.x;
            a1 += w * v.y;
        }
        *reinterpret_cast<uint32_t *>(out + c) = pack_bf16x2(a0 * inv, a1 * inv);
    }
    if (lse_out && lane == 0) *lse_out = mx + logf(den);
}

// The row-major partial layout of the static split grid: row r's splits are contiguous,
// ws_o[(row * nsplits + i) * DV], ws_lse[row * nsplits + i]. Rows are numbered
// (r * s + si) * h + hi; out is bf16 [b, s, h, DV] with strides.
template <int DV>
__device__ __forceinline__ void combine_row(const float *ws_o, const float *ws_lse, int nsplits,
                                            long long row, bf16 *out, float *lse_out)
{
    combine_splits<DV>(ws_o + row * nsplits * (long long)DV, DV, ws_lse + row * nsplits, 1, nsplits, out, lse_out);
}

}  // namespace mla
