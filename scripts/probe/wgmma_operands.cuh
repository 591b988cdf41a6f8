// Shared by the wgmma probes (wgmma_energy.cu, softmax_pipe.cu): the operand regions of one page's
// QK^T / PV in shared memory, the random bf16 data they hold, and the two instruction groups both
// probes issue. Not part of the library.
#pragma once
#include <cstdint>

#include "kernels/common/ptx.cuh"

constexpr int BOX = 8192;        // 64 rows x 128 bytes, swizzled
constexpr int REGION = 9 * BOX;  // 72 KB: one Q tile or one page

__device__ __forceinline__ uint32_t saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// A random bf16 pair in about [-2, 2]: random sign, exponent 126-127, random mantissa (so that the
// tensor datapath toggles as on real data).
__device__ __forceinline__ uint32_t rnd_pair(uint32_t i)
{
    uint32_t h = i * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const uint32_t lo = 0x3f00u | (h & 0x807fu) | ((h >> 8) & 0x80u), hi = 0x3f00u | ((h >> 16) & 0x807fu) | ((h >> 1) & 0x80u);
    return lo | (hi << 16);
}

// One page's QK^T as the kernels issue it: 9 boxes x 4 k-steps of m64n64k16, A from shared
// memory (SS, the first k-step overwrites S) or from the 36 register fragments fa (RS).
template <bool RS, int NF>
__device__ __forceinline__ void qk_page(float (&s)[32], uint32_t a0, uint32_t b0, const uint32_t (&fa)[NF][4])
{
    const uint64_t qd = mla::gmma_desc_sw128(a0, 16, 1024), kd = mla::gmma_desc_sw128(b0, 16, 1024);
#pragma unroll
    for (int c = 0; c < 9; ++c)
#pragma unroll
        for (int k4 = 0; k4 < 4; ++k4) {
            const uint32_t off = c * BOX + k4 * 32;
            if (RS)
                mla::wgmma_m64n64k16_rs<0>(s, fa[(4 * c + k4) % NF], mla::gmma_desc_add(kd, off));
            else
                mla::wgmma_m64n64k16_ss(s, mla::gmma_desc_add(qd, off), mla::gmma_desc_add(kd, off), c + k4 > 0);
        }
}

// Nine k-steps of a page's PV half (16 tokens x 256 columns each), walking both V halves and the
// P box: as many FLOPs as the QK^T's 36 m64n64k16. P from shared memory (SS) or from the register
// fragments fa (RS, fragment kk % NF).
template <bool SS, int NF>
__device__ __forceinline__ void pv_group(float (&acc)[128], uint32_t a0, uint32_t b0, const uint32_t (&fa)[NF][4])
{
    const uint64_t pd = mla::gmma_desc_sw128(a0, 16, 1024), vd = mla::gmma_desc_sw128(b0, BOX, 1024);
#pragma unroll
    for (int r = 0; r < 9; ++r) {
        const int kk = r & 3;
        const uint64_t v = mla::gmma_desc_add(vd, kk * 16 * 128 + (r & 1) * 4 * BOX);
        if (SS)
            mla::wgmma_m64n256k16_ss<1>(acc, mla::gmma_desc_add(pd, kk * 32 + (r >> 2) * 1024), v, 1);
        else
            mla::wgmma_m64n256k16_rs<1>(acc, fa[kk % NF], v, 1);
    }
}
