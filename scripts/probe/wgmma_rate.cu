// wgmma_rate: the tensor rate of the wgmma shapes the seesaw kernels use, alone, with both
// operands in shared memory (SS) or A in registers (RS), one CTA per SM, 1 or 2 math
// warpgroups. The question it answers: is an SS m64n64k16 (QK^T over a 64-token page: A = Q,
// B = K, 4 KB of operands per 131 kFLOP) or m64n32k16 (a 32-token half page: 3 KB per 65 kFLOP)
// held back by shared-memory bandwidth (128 B per cycle per SM), against m64n256k16 (PV: 10 KB
// per 524 kFLOP SS, 8 KB RS)? Each warpgroup repeats a group of wgmmas that walks a 72 KB A
// region and a 72 KB B region like the kernels do (9 boxes of 64 dims x 4 k-steps), commits and
// waits. Prints FLOP per SM cycle (4096 is the dense bf16 peak: 989 TFLOP/s at 1830 MHz on 132
// SMs) and TFLOP/s. Not part of the library or the tests.
// Usage: wgmma_rate   (runs every shape with 1 and 2 warpgroups)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>

#include "kernels/common/ptx.cuh"

using namespace mla;

constexpr int BOX = 8192;                 // 64 rows x 128 bytes, swizzled
constexpr int REGION = 9 * BOX;           // 72 KB: one Q tile or one page
constexpr int SMEM = 2 * REGION + 1024;   // A region, B region, alignment slack
constexpr int ITERS = 200;

__device__ __forceinline__ uint32_t saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// SHAPE 0: m64n64k16 SS (QK^T); 1: m64n32k16 SS (QK^T on half pages); 2: m64n256k16 SS (PV from
// the P box); 3: m64n256k16 RS (PV from registers); 4: the RS PV as four m64n64k16 groups, one
// per 64-column box of V (what a box-by-box release of V needs).
template <int SHAPE>
__global__ void __launch_bounds__(256, 1) rate(long long *cycles, unsigned long long *ns, float *sink)
{
    extern __shared__ char raw[];
    char *sm = raw + ((1024 - (saddr(raw) & 1023)) & 1023);
    for (int i = threadIdx.x; i < 2 * REGION / 4; i += blockDim.x)  // small finite bf16 pairs
        reinterpret_cast<uint32_t *>(sm)[i] = 0x3c003c00u ^ ((i * 2654435761u) & 0x00ff00ffu);
    __syncthreads();
    const uint32_t a0 = saddr(sm), b0 = saddr(sm + REGION);
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    uint32_t ra[4];  // A fragments from shared memory: run-time values, as the kernels' P
#pragma unroll
    for (int i = 0; i < 4; ++i) ra[i] = reinterpret_cast<const uint32_t *>(sm)[threadIdx.x * 4 + i];
    __syncthreads();
    unsigned long long g0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    const long long c0 = clock64();
    for (int it = 0; it < ITERS; ++it) {
        wgmma_fence();
        if (SHAPE == 0 || SHAPE == 1) {
            // one page's QK^T: 9 boxes x 4 k-steps (n32: the page's two halves, 72 wgmmas)
            const uint64_t qd = gmma_desc_sw128(a0, 16, 1024), kd = gmma_desc_sw128(b0, 16, 1024);
#pragma unroll
            for (int c = 0; c < 9; ++c)
#pragma unroll
                for (int k4 = 0; k4 < 4; ++k4) {
                    const uint32_t off = c * BOX + k4 * 32;
                    if (SHAPE == 0) {
                        wgmma_m64n64k16_ss(*reinterpret_cast<float(*)[32]>(acc), gmma_desc_add(qd, off),
                                           gmma_desc_add(kd, off), 1);
                    } else {
                        wgmma_m64n32k16_ss<0>(*reinterpret_cast<float(*)[16]>(acc), gmma_desc_add(qd, off),
                                              gmma_desc_add(kd, off), 1);
                        wgmma_m64n32k16_ss<0>(*reinterpret_cast<float(*)[16]>(acc + 16), gmma_desc_add(qd, off),
                                              gmma_desc_add(kd, off + 4 * 1024), 1);
                    }
                }
        } else {
            // one page's PV half: 4 k-steps of 16 tokens over 256 columns (V token-major), done
            // 9 times so that a group has as many FLOPs as the QK^T group
            const uint64_t pd = gmma_desc_sw128(a0, 16, 1024), vd = gmma_desc_sw128(b0, BOX, 1024);
#pragma unroll
            for (int r = 0; r < 9; ++r)
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {
                    if (SHAPE == 2)
                        wgmma_m64n256k16_ss<1>(acc, gmma_desc_add(pd, kk * 32), gmma_desc_add(vd, kk * 16 * 128), 1);
                    else if (SHAPE == 3)
                        wgmma_m64n256k16_rs<1>(acc, ra, gmma_desc_add(vd, kk * 16 * 128), 1);
                    else
#pragma unroll
                        for (int g = 0; g < 4; ++g) {
                            float(&ag)[32] = *reinterpret_cast<float(*)[32]>(&acc[32 * g]);
                            if (SHAPE == 4)
                                wgmma_m64n64k16_rs<1>(ag, ra, gmma_desc_add(vd, g * BOX + kk * 16 * 128));
                            else
                                wgmma_m64n64k16_ss<1>(ag, gmma_desc_add(pd, kk * 32),
                                                      gmma_desc_add(vd, g * BOX + kk * 16 * 128), 1);
                        }
                }
        }
        wgmma_commit();
        wgmma_wait<0>();
    }
    const long long c1 = clock64();
    unsigned long long g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 128; ++i) s += acc[i];
    if (s == 12345.f) sink[threadIdx.x] = s;  // keeps the accumulators live
    if ((threadIdx.x & 127) == 0) {
        cycles[blockIdx.x * 2 + threadIdx.x / 128] = c1 - c0;
        ns[blockIdx.x * 2 + threadIdx.x / 128] = g1 - g0;
    }
}

template <int SHAPE>
static void run(const char *name, double flop_per_group, int wgs, int sms)
{
    long long *cyc;
    unsigned long long *ns;
    float *sink;
    cudaMalloc(&cyc, sms * 2 * sizeof(long long));
    cudaMalloc(&ns, sms * 2 * sizeof(unsigned long long));
    cudaMalloc(&sink, 256 * sizeof(float));
    cudaFuncSetAttribute(rate<SHAPE>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    for (int rep = 0; rep < 2; ++rep) rate<SHAPE><<<sms, 128 * wgs, SMEM>>>(cyc, ns, sink);  // 2nd is measured
    const cudaError_t e = cudaDeviceSynchronize();
    long long hc[264] = {};
    unsigned long long hn[264] = {};
    cudaMemcpy(hc, cyc, sms * 2 * sizeof(long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(hn, ns, sms * 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    double cmax = 0, nmax = 0, csum = 0;
    for (int i = 0; i < sms; ++i)
        for (int w = 0; w < wgs; ++w) {
            const double c = (double)hc[2 * i + w], n = (double)hn[2 * i + w];
            cmax = c > cmax ? c : cmax;
            nmax = n > nmax ? n : nmax;
            csum += c;
        }
    const double per_sm = flop_per_group * ITERS * wgs;  // FLOPs one CTA does
    printf("%-26s %d WG: %s | %7.0f FLOP per SM cycle (slowest CTA), %6.1f TFLOP/s, SM clock %.3f GHz\n", name, wgs,
           cudaGetErrorString(e), per_sm / cmax, per_sm * sms / nmax * 1e-3, cmax / nmax);
    cudaFree(cyc);
    cudaFree(ns);
    cudaFree(sink);
}

int main()
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (sms > 132) sms = 132;
    const double qk = 2.0 * 64 * 64 * 576, pv = 2.0 * 64 * 256 * 64 * 9;
    for (int w = 1; w <= 2; ++w) {
        run<0>("m64n64k16 SS (QK^T)", qk, w, sms);
        run<1>("m64n32k16 SS (QK^T half)", qk, w, sms);
        run<2>("m64n256k16 SS (PV, P smem)", pv, w, sms);
        run<3>("m64n256k16 RS (PV, P regs)", pv, w, sms);
        run<4>("4 x m64n64k16 RS (PV boxes)", pv, w, sms);
        run<5>("4 x m64n64k16 SS (PV boxes)", pv, w, sms);
    }
    return 0;
}
