// Host side of TMA: tensor maps (CUtensorMap) for hopper-tier kernels. The encoder is a driver
// API entry point; it is fetched through the runtime (cudaGetDriverEntryPointByVersion) so that
// the library needs no -lcuda link and loads on machines whose driver lacks it (the call then
// fails with a message instead).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include "kernel_host.cuh"

namespace mla {

typedef CUresult (*TmapEncodeTiledFn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                      const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                      const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                      CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline TmapEncodeTiledFn tmap_encoder()
{
    // A benign race: every thread that gets here stores the same pointer.
    static TmapEncodeTiledFn fn = nullptr;
    if (!fn) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (TmapEncodeTiledFn)p;
    }
    return fn;
}

// A bf16 tensor of `rank` (2..5) dimensions, innermost first (dims[0] contiguous), with the byte
// strides of dims 1.. in `strides`, read in boxes `box` with the 128-byte swizzle (box[0] * 2
// must be <= 128). Out-of-range box elements read as zero.
inline mla_status tmap_bf16_sw128(CUtensorMap *map, const void *base, unsigned rank, const unsigned long long *dims,
                                  const unsigned long long *strides, const unsigned *box, const char *who)
{
    TmapEncodeTiledFn enc = tmap_encoder();
    if (!enc) return mla_fail(MLA_STATUS_UNSUPPORTED, "%s: cuTensorMapEncodeTiled unavailable (driver too old?)", who);
    if ((uintptr_t)base & 15u) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: TMA needs a 16-byte aligned base", who);
    cuuint64_t d[5], st[4];
    cuuint32_t bx[5], estr[5];
    for (unsigned i = 0; i < rank; ++i) {
        d[i] = dims[i];
        bx[i] = box[i];
        estr[i] = 1;
        if (i > 0) {
            if (strides[i - 1] & 15u)
                return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: TMA needs strides that are multiples of 16 bytes", who);
            st[i - 1] = strides[i - 1];
        }
    }
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, const_cast<void *>(base), d, st, bx, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "%s: cuTensorMapEncodeTiled failed (CUresult %d)", who, (int)r);
    return MLA_STATUS_OK;
}

// A 2-D bf16 tensor [rows][cols] with a row pitch of `pitch_bytes`, read in boxes of
// box_rows x box_cols with the 128-byte swizzle (box_cols * 2 must be <= 128).
inline mla_status tmap_bf16_2d_sw128(CUtensorMap *map, const void *base, unsigned long long cols,
                                     unsigned long long rows, unsigned long long pitch_bytes,
                                     unsigned box_cols, unsigned box_rows, const char *who)
{
    const unsigned long long dims[2] = {cols, rows};
    const unsigned box[2] = {box_cols, box_rows};
    return tmap_bf16_sw128(map, base, 2, dims, &pitch_bytes, box, who);
}

}  // namespace mla
