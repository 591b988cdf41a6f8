// softmax_pipe: what an instruction of the pair's softmax costs one warp a scheduler while a wgmma
// chain of another warpgroup runs on the same SM. Not part of the library or the tests.
//
// Why (thirty-sixth session): flash_mla_v68's softmax B (own_exp's 122-instruction fast path,
// then the publish, fence and stores) takes ~1100 cycles with PV(A,L) under it; v76-v78 (s35)
// showed ~5 cycles an added instruction whatever the instruction (FFMA, MUFU, FADD). Whether
// that is the warp's own dependency chains (true with no wgmma too) or a cost the running wgmma
// puts on the softmax warp's issue (register-file ports, the tensor core's operand reads) decides
// the next move: more warps a scheduler for the softmax (a third math warpgroup) helps the
// former, operand placement the latter.
//
// One CTA an SM, warpgroup 0 runs a wgmma chain (TMODE) in groups of 1152 tensor cycles (commit,
// wait for the group before last) until the mix warpgroups finish, or GROUPS0 groups alone
// (NMIX = 0); NMIX (1 or 2) warpgroups run MIX on 32 / NMIX values a thread, REPS times, each warp
// timing its own loop by clock64. Warp w of every warpgroup sits on scheduler w % 4.
//   TMODE: 0 warpgroup 0 exits at once, 1 RS m64n256k16 (PV with P in registers, 9 a group),
//   2 SS m64n256k16, 3 SS m64n64k16 (a page's QK^T: 9 boxes x 4 k-steps), 4 a spin on a shared
//   flag (issue slots taken, no tensor work).
//   MIX: 0 own_exp's fast path (page_exp: FFMA, MUFU.EX2, FADD sums, F2FP packs; 127 SASS
//   instructions a rep, 32 MUFU) plus the four STSM of P and the NOMAX vote; 1 four dependent FFMA
//   a value (131); 2 one FFMA and one MUFU.EX2 a value (65.5); 3 and 4: 0 and 1 with a
//   `nanosleep 0` after every 8 values (does yielding the scheduler feed the wgmma warps?);
//   5 and 6: 0 with 8 or 16 of the 32 exponentials by the thirty-fifth session's polynomial
//   (flash_mla_v77 / v78; 199 and 271 instructions a rep).
// Prints, per (TMODE, MIX, NMIX): median cycles a rep over every mix warp of every SM; warpgroup
// 0's tensor FLOP a cycle while the mix ran (its own count: a lower rate there is the mix's cost
// on the tensor side); and the cycles warpgroup 0 spends issuing a group (from its first HGMMA to
// past its last: how far ahead of the tensor pipe a warpgroup can issue).
// Usage: softmax_pipe [reps]   (every combination main() lists; one line each). Run in the
// thirty-sixth session (docs/bench/h200-2026-12-03-s36/call*_softmax_pipe_*.txt; call 1 had
// MIX 0-2 and no NMIX = 0 lines); results and readings in docs/kernels/flash_mla.md.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/common/ptx.cuh"
#include "wgmma_operands.cuh"

using namespace mla;

constexpr int SCRATCH = 2048;            // a mix warp's P stores: 4 STSM x 512 bytes
constexpr int SMEM = 2 * REGION + 8 * SCRATCH + 64 + 1024;  // + the flag and its two slots
constexpr int MAXW = 8;                  // mix warps a CTA (two warpgroups)
constexpr int STRIDE = MAXW + 3;         // per CTA: the mix warps' cycles, wg0's groups, cycles, issue cycles
constexpr int GROUPS0 = 200;             // wg0's groups when there is no mix (NMIX = 0)

__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// MIX 3 and 4's would-be yield: the warp sleeps (~70 cycles measured) and the scheduler may pick another.
__device__ __forceinline__ void nap() { asm volatile("nanosleep.u32 0;" ::: "memory"); }

// 2^x on the FMA pipe, as the thirty-fifth session's v77/v78 computed it (NaN-propagating clamps
// to [-126, 127], round by 1.5 * 2^23, degree-3 polynomial on [-0.5, 0.5], 2^j in the exponent bits)
__device__ __forceinline__ float exp2_poly(float x)
{
    float c;
    asm("max.NaN.f32 %0, %1, 0fC2FC0000;" : "=f"(c) : "f"(x));
    asm("min.NaN.f32 %0, %0, 0f42FE0000;" : "+f"(c));
    const float t = c + 12582912.f;
    const float f = c - (t - 12582912.f);
    const float p = fmaf(fmaf(fmaf(0.055171627551317215f, f, 0.24261116981506348f), f, 0.6932609677314758f), f,
                         0.9999280571937561f);
    return p * __int_as_float((__float_as_int(t) << 23) + 0x3f800000);
}
// element 4n + e of the fast path: MIX 5 sends e == 1 to the polynomial (8 of 32, v77), MIX 6 odd e (16, v78)
template <int MIX>
__device__ __forceinline__ float ex2_el(float x, int e)
{
    if ((MIX == 5 && e == 1) || (MIX == 6 && (e & 1))) return exp2_poly(x);
    return ex2(x);
}

// The mix a thread runs once a rep on NV values (NV = 32: own_exp's fast path for two rows).
template <int MIX, int NV>
__device__ __forceinline__ void mix_rep(float (&s)[NV], float &mu0, float &mu1, uint32_t sc, int &votes)
{
    if (MIX == 0 || MIX == 3 || MIX == 5 || MIX == 6) {
        float ps0 = 0.f, ps1 = 0.f;
        uint32_t pa[NV / 2];
#pragma unroll
        for (int n = 0; n < NV / 4; ++n) {
            const float p0 = ex2_el<MIX>(fmaf(s[4 * n], 1.4427f, -mu0), 0), p1 = ex2_el<MIX>(fmaf(s[4 * n + 1], 1.4427f, -mu0), 1);
            const float p2 = ex2_el<MIX>(fmaf(s[4 * n + 2], 1.4427f, -mu1), 2), p3 = ex2_el<MIX>(fmaf(s[4 * n + 3], 1.4427f, -mu1), 3);
            ps0 += p0 + p1;
            ps1 += p2 + p3;
            pa[2 * n] = pack_bf16x2(p0, p1);
            pa[2 * n + 1] = pack_bf16x2(p2, p3);
            if (MIX == 3 && (n & 1)) nap();
        }
#pragma unroll
        for (int k = 0; k < NV / 8; ++k) stmatrix_x4(sc + 512 * k, pa[4 * k], pa[4 * k + 1], pa[4 * k + 2], pa[4 * k + 3]);
        votes += __all_sync(0xffffffffu, ps0 <= 65536.f && ps1 <= 65536.f);
        // the next rep's max depends on this rep's sums (a chain across reps, as page to page)
        mu0 = fmaf(ps0, 1e-30f, mu0);
        mu1 = fmaf(ps1, 1e-30f, mu1);
    } else if (MIX == 1 || MIX == 4) {
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            float x = s[i];
#pragma unroll
            for (int k = 0; k < 4; ++k) x = fmaf(x, 0.9999f, mu0);
            s[i] = x;
            if (MIX == 4 && (i & 7) == 7) nap();
        }
    } else {
#pragma unroll
        for (int i = 0; i < NV; ++i) s[i] = ex2(fmaf(s[i], -0.5f, mu1));
    }
}

template <int TMODE, int MIX, int NMIX>
__global__ void __launch_bounds__(128 * (1 + NMIX), 1) pipe(int reps, unsigned long long *out, float *sink)
{
    extern __shared__ char raw[];
    char *sm = raw + ((1024 - (saddr(raw) & 1023)) & 1023);
    volatile int *done = reinterpret_cast<volatile int *>(sm + 2 * REGION + MAXW * SCRATCH);
    for (int i = threadIdx.x; i < 2 * REGION / 4; i += blockDim.x)
        reinterpret_cast<uint32_t *>(sm)[i] = rnd_pair((uint32_t)i + 977u * blockIdx.x);
    if (threadIdx.x == 0) *done = 0;
    __syncthreads();
    const int wg = threadIdx.x >> 7, t = threadIdx.x & 127;
    if (wg == 0) {
        if (TMODE == 0) return;
        const uint32_t a0 = saddr(sm), b0 = saddr(sm + REGION);
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.f;
        uint32_t fa[2][4];  // two A fragments, alternated: 4 would spill at 384 threads
#pragma unroll
        for (int f = 0; f < 2; ++f)
#pragma unroll
            for (int i = 0; i < 4; ++i) fa[f][i] = reinterpret_cast<const uint32_t *>(sm)[f * 512 + t * 4 + i];
        volatile int *slot = done + 1;  // thread 0's reading of `done`, for the whole warpgroup
        long long groups = 0, issue = 0;
        int stop = 0;
        const long long c0 = clock64();
        // wgmma is warpgroup-aligned: every warp must leave the loop after the same group, so one
        // thread reads the flag and a named barrier hands its reading to the rest (two slots, by
        // parity: a slot is rewritten only after everyone has passed the next barrier)
        for (int it = 0; !stop; ++it) {
            if (TMODE == 4) {
                ++groups;
                if (t == 0) slot[it & 1] = NMIX ? *done >= NMIX * 4 : it + 1 >= GROUPS0;
                named_bar_sync(1, 128);
                stop = slot[it & 1];
                continue;
            }
            const long long ci0 = clock64();
            wgmma_fence();
            if (TMODE == 3)
                qk_page<false>(*reinterpret_cast<float(*)[32]>(acc), a0, b0, fa);  // (fa unused: SS)
            else
                pv_group<TMODE == 2>(acc, a0, b0, fa);  // the FLOPs of shape 3's group
            issue += clock64() - ci0;  // the group's issue: how many HGMMAs the tensor pipe takes ahead
            wgmma_commit();
            wgmma_wait<1>();
            ++groups;
            if (t == 0) slot[it & 1] = NMIX ? *done >= NMIX * 4 : it + 1 >= GROUPS0;
            named_bar_sync(1, 128);
            stop = slot[it & 1];
        }
        wgmma_wait<0>();
        const long long c1 = clock64();
        float x = 0.f;
#pragma unroll
        for (int i = 0; i < 128; ++i) x += acc[i];
        if (x == 12345.f) sink[threadIdx.x] = x;
        if (t == 0) {
            out[blockIdx.x * STRIDE + MAXW] = (unsigned long long)groups;
            out[blockIdx.x * STRIDE + MAXW + 1] = (unsigned long long)(c1 - c0);
            out[blockIdx.x * STRIDE + MAXW + 2] = (unsigned long long)issue;
        }
        return;
    }
    // a mix warpgroup
    constexpr int NV = 32 / (NMIX ? NMIX : 1);
    const int mw = (wg - 1) * 4 + (t >> 5), lane = t & 31;
    const uint32_t sc = saddr(sm + 2 * REGION + mw * SCRATCH) + lane * 16;
    float s[NV];
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        const uint32_t u = reinterpret_cast<const uint32_t *>(sm)[(t * 37 + i * 131) % (REGION / 4)];
        s[i] = __uint_as_float(u << 16) * 2.f;  // bf16 low half: about [-4, 4]
    }
    float mu0 = 3.f, mu1 = 2.5f;
    int votes = 0;
    for (int r = 0; r < 8; ++r) mix_rep<MIX, NV>(s, mu0, mu1, sc, votes);  // the wgmma chain starts meanwhile
    __syncwarp();
    const long long c0 = clock64();
    for (int r = 0; r < reps; ++r) mix_rep<MIX, NV>(s, mu0, mu1, sc, votes);
    __syncwarp();
    const long long c1 = clock64();
    float x = mu0 + mu1 + (float)votes;
#pragma unroll
    for (int i = 0; i < NV; ++i) x += s[i];
    if (x == 12345.f) sink[threadIdx.x] = x;
    if (lane == 0) {
        out[blockIdx.x * STRIDE + mw] = (unsigned long long)(c1 - c0);
        atomicAdd(const_cast<int *>(done), 1);
    }
}

static const char *kT[5] = {"none", "RS n256", "SS n256", "SS n64 (QK^T)", "spin"};
static const char *kM[7] = {"own_exp fast path", "4 FFMA a value", "FFMA + MUFU a value", "own_exp, 4 naps", "4 FFMA, 4 naps", "own_exp, 8 poly exp", "own_exp, 16 poly exp"};

template <int TMODE, int MIX, int NMIX>
static void run(int reps, int sms, unsigned long long *d_out, float *sink)
{
    auto k = pipe<TMODE, MIX, NMIX>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    const int nt = 128 * (1 + NMIX);
    k<<<sms, nt, SMEM>>>(reps, d_out, sink);  // warm-up
    k<<<sms, nt, SMEM>>>(reps, d_out, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("T%d M%d N%d: %s\n", TMODE, MIX, NMIX, cudaGetErrorString(e));
        return;
    }
    std::vector<unsigned long long> h((size_t)sms * STRIDE);
    cudaMemcpy(h.data(), d_out, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    std::vector<double> cyc;
    double fl = 0, tc = 0, ic = 0;
    for (int b = 0; b < sms; ++b) {
        for (int w = 0; w < 4 * NMIX; ++w) cyc.push_back((double)h[(size_t)b * STRIDE + w] / reps);
        fl += (double)h[(size_t)b * STRIDE + MAXW];
        tc += (double)h[(size_t)b * STRIDE + MAXW + 1];
        ic += (double)h[(size_t)b * STRIDE + MAXW + 2];
    }
    if (cyc.empty()) cyc.push_back(0.0);
    std::sort(cyc.begin(), cyc.end());
    const double flop_group = 2.0 * 64 * 64 * 576;  // both tensor modes' groups
    const bool tens = TMODE >= 1 && TMODE <= 3 && tc > 0;
    printf("tensor %-14s | mix %-20s | %d mix warp(s)/scheduler | %7.1f cycles/rep (p10 %7.1f, p90 %7.1f) | wg0 %6.0f FLOP/cycle, "
           "%6.1f cycles to issue a group\n",
           kT[TMODE], NMIX ? kM[MIX] : "(none)", NMIX, cyc[cyc.size() / 2], cyc[cyc.size() / 10], cyc[cyc.size() * 9 / 10],
           tens ? fl * flop_group / tc : 0.0, tens && fl > 0 ? ic / fl : 0.0);
}

template <int MIX, int NMIX>
static void all_t(int reps, int sms, unsigned long long *d, float *sink)
{
    run<1, MIX, NMIX>(reps, sms, d, sink);
    run<2, MIX, NMIX>(reps, sms, d, sink);
    run<3, MIX, NMIX>(reps, sms, d, sink);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 512;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    unsigned long long *d;
    float *sink;
    cudaMalloc(&d, (size_t)sms * STRIDE * sizeof(unsigned long long));
    cudaMalloc(&sink, 384 * sizeof(float));
    all_t<0, 0>(reps, sms, d, sink);  // wg0 alone: GROUPS0 groups
    run<0, 0, 1>(reps, sms, d, sink);
    run<4, 0, 1>(reps, sms, d, sink);
    all_t<0, 1>(reps, sms, d, sink);
    all_t<3, 1>(reps, sms, d, sink);
    all_t<1, 1>(reps, sms, d, sink);
    all_t<4, 1>(reps, sms, d, sink);
    all_t<2, 1>(reps, sms, d, sink);
    all_t<5, 1>(reps, sms, d, sink);
    all_t<6, 1>(reps, sms, d, sink);
    run<0, 5, 1>(reps, sms, d, sink);
    run<0, 6, 1>(reps, sms, d, sink);
    run<0, 0, 2>(reps, sms, d, sink);
    all_t<0, 2>(reps, sms, d, sink);
    all_t<3, 2>(reps, sms, d, sink);
    return 0;
}
