// wgmma_energy: what the wgmma operand paths cost in energy, sustained under the card's power
// cap. The compute-bound flash_mla rows run power-capped (690 W, ~1.6-1.8 GHz sustained against
// 1.98 GHz max; tenth session), so a FLOP's energy sets their speed there. A pair of pages reads
// ~430 KB of wgmma operands from shared memory, two thirds of it in the QK^T's SS m64n64k16 (A =
// Q, 2 KB, and B = K, 2 KB, per 131 kFLOP); a Q kept in registers would make that RS. This probe
// runs each shape alone on every SM (two math warpgroups, one CTA an SM, random bf16 operands
// with random signs, so that the tensor datapath toggles as on real data) for a few seconds and
// prints the sustained TFLOP/s and the kernel's own SM clock; scripts run it under nvidia-smi
// sampling for the power. Same FLOPs, same clock cap: the shape that sustains more TFLOP/s costs
// less energy a FLOP.
//   0: QK^T SS m64n64k16 (the kernels' QK^T: 9 boxes x 4 k-steps, A and B walk 72 KB each)
//   1: QK^T RS m64n64k16 (the same B walk, A from 36 register fragments: a Q held in registers)
//   2: PV SS m64n256k16 (P from shared memory, the other consumer's page)
//   3: PV RS m64n256k16 (P from registers, the own page; 4 fragments, one per k-step)
//   4: QK^T SS m64n128k16 (two pages' tokens in one instruction: A read once per 128 tokens)
//   5: the seesaw's mix, per consumer and page pair: 36 SS n64k16 (QK^T), 4 RS and 4 SS n256k16
//      (PV), at full rate with no softmax between them
// Not part of the library or the tests.
// Usage: wgmma_energy SHAPE SECONDS   (prints one line; SHAPE -1: a 1-launch burst of each)
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>

#include "kernels/common/ptx.cuh"
#include "wgmma_operands.cuh"

using namespace mla;

constexpr int SMEM = 2 * REGION + 1024;  // A region, B region, alignment slack

__device__ unsigned long long g_clk[264][2];  // per CTA: SM cycles, ns of its last launch

// D(64x128, fp32) (+)= A(64x16, smem) * B(16x128, smem), both K-major (shape 4 only)
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,"
        "%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,"
        "%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scale_d));
}

template <int SHAPE>
__global__ void __launch_bounds__(256, 1) energy(int iters, float *sink)
{
    extern __shared__ char raw[];
    char *sm = raw + ((1024 - (saddr(raw) & 1023)) & 1023);
    for (int i = threadIdx.x; i < 2 * REGION / 4; i += blockDim.x)
        reinterpret_cast<uint32_t *>(sm)[i] = rnd_pair((uint32_t)i + 977u * blockIdx.x);
    __syncthreads();
    const uint32_t a0 = saddr(sm), b0 = saddr(sm + REGION);
    const int t = threadIdx.x & 127;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    // register A fragments (run-time values from shared memory): 36 for the QK^T, 4 for the PV
    constexpr int NF = SHAPE == 1 ? 36 : 4;
    uint32_t fa[NF][4];
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
        for (int i = 0; i < 4; ++i) fa[f][i] = reinterpret_cast<const uint32_t *>(sm)[(f * 512 + t * 4 + i) % (REGION / 4)];
    __syncthreads();
    unsigned long long g0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    const long long c0 = clock64();
    for (int it = 0; it < iters; ++it) {
        wgmma_fence();
        if (SHAPE == 4) {
            // a QK^T over two pages at once (128 tokens, the B rows of boxes c and c + 1): the same
            // FLOPs as shape 0 in half the instructions, A read once per 128 tokens
            const uint64_t qd = gmma_desc_sw128(a0, 16, 1024), kd = gmma_desc_sw128(b0, 16, 1024);
            float(&s)[64] = *reinterpret_cast<float(*)[64]>(acc);
#pragma unroll
            for (int c = 0; c < 9; ++c)
#pragma unroll
                for (int k2 = 0; k2 < 2; ++k2) {
                    // (B: 128 rows = two boxes, within the 72 KB region)
                    wgmma_m64n128k16_ss(s, gmma_desc_add(qd, c * BOX + k2 * 32),
                                        gmma_desc_add(kd, (c & 3) * 2 * BOX + k2 * 32), c + k2 > 0);
                }
        } else if (SHAPE == 5) {
            // the seesaw's tensor mix a consumer issues per page pair: one page's QK^T (36 x SS
            // n64k16) and its PV half of both pages (4 x RS n256k16, 4 x SS n256k16)
            const uint64_t pd = gmma_desc_sw128(a0 + 8 * BOX, 16, 1024), vd = gmma_desc_sw128(b0, BOX, 1024);
            qk_page<false>(*reinterpret_cast<float(*)[32]>(acc), a0, b0, fa);
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                wgmma_m64n256k16_rs<1>(acc, fa[kk], gmma_desc_add(vd, kk * 16 * 128), 1);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                wgmma_m64n256k16_ss<1>(acc, gmma_desc_add(pd, kk * 32), gmma_desc_add(vd, 4 * BOX + kk * 16 * 128), 1);
        } else if (SHAPE <= 1) {
            qk_page<SHAPE == 1>(*reinterpret_cast<float(*)[32]>(acc), a0, b0, fa);
        } else {
            pv_group<SHAPE == 2>(acc, a0, b0, fa);
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
    if (threadIdx.x == 0 && blockIdx.x < 264) {
        g_clk[blockIdx.x][0] = (unsigned long long)(c1 - c0);
        g_clk[blockIdx.x][1] = g1 - g0;
    }
}

static const char *kName[6] = {"QK^T SS m64n64k16", "QK^T RS m64n64k16", "PV SS m64n256k16",
                               "PV RS m64n256k16",  "QK^T SS m64n128k16", "seesaw mix"};

template <int SHAPE>
static int run(double secs, int sms, float *sink)
{
    cudaFuncSetAttribute(energy<SHAPE>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    // a group, both warpgroups: 36 x n64k16, 18 x n128k16 or 9 x n256k16 each; the mix 36 x
    // n64k16 + 8 x n256k16 each
    const double flop_group = SHAPE == 5 ? 2.0 * (36 * 2.0 * 64 * 64 * 16 + 8 * 2.0 * 64 * 256 * 16)
                                         : 2.0 * 64 * 64 * 576 * 2;
    const int iters = secs > 0 ? 2000 : 200;           // ~2000 groups: a few ms a launch
    energy<SHAPE><<<sms, 256, SMEM>>>(iters, sink);    // warm-up
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("%s: %s\n", kName[SHAPE], cudaGetErrorString(e));
        return 1;
    }
    const auto w0 = std::chrono::steady_clock::now();
    long n = 0;
    double el = 0;
    do {
        for (int k = 0; k < 4; ++k) energy<SHAPE><<<sms, 256, SMEM>>>(iters, sink);
        e = cudaDeviceSynchronize();
        n += 4;
        el = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    } while (e == cudaSuccess && el < secs);
    unsigned long long h[264][2];
    cudaMemcpyFromSymbol(h, g_clk, sizeof h);
    double cyc = 0, ns = 0;
    for (int i = 0; i < sms; ++i) {
        cyc += (double)h[i][0];
        ns += (double)h[i][1];
    }
    printf("%-18s %s %5.1f s, %5ld launches: %6.1f TFLOP/s, own SM clock %.3f GHz (last launch), %.0f FLOP per SM cycle\n",
           kName[SHAPE], e == cudaSuccess ? "ok" : cudaGetErrorString(e), el, n,
           flop_group * iters * sms * n / el * 1e-12, ns > 0 ? cyc / ns : 0.0,
           cyc > 0 ? flop_group * iters * sms / cyc : 0.0);
    return e != cudaSuccess;
}

int main(int argc, char **argv)
{
    const int shape = argc > 1 ? atoi(argv[1]) : -1;
    const double secs = argc > 2 ? atof(argv[2]) : 5.0;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (sms > 264) sms = 264;
    float *sink;
    cudaMalloc(&sink, 256 * sizeof(float));
    int rc = 0;
    if (shape < 0 || shape == 0) rc |= run<0>(shape < 0 ? 0 : secs, sms, sink);
    if (shape < 0 || shape == 1) rc |= run<1>(shape < 0 ? 0 : secs, sms, sink);
    if (shape < 0 || shape == 2) rc |= run<2>(shape < 0 ? 0 : secs, sms, sink);
    if (shape < 0 || shape == 3) rc |= run<3>(shape < 0 ? 0 : secs, sms, sink);
    if (shape < 0 || shape == 4) rc |= run<4>(shape < 0 ? 0 : secs, sms, sink);
    if (shape < 0 || shape == 5) rc |= run<5>(shape < 0 ? 0 : secs, sms, sink);
    return rc;
}
