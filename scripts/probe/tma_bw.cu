// TMA probe (not part of the library or the tests): how long one SM waits for a 72 KB page (nine
// 64 x 64 bf16 boxes, the seesaw's unit of reload) to land in shared memory, alone on the GPU and
// with every SM loading, from L2-resident pages and from DRAM, and how many bytes per SM clock a
// CTA can pull with 1, 2 or 3 pages in flight. The question it answers: is the ~2300-cycle reload
// wait seen by the seesaw timeline probe the memory system's, or the schedule's?
// Usage: tma_bw (no arguments). Built and run by scripts/device_probe.sh.
#include <cstdio>
#include <vector>
#include "flash_mla_hopper.cuh"

using namespace mla;
using namespace mla::fmh;

constexpr int ITERS = 48;
__device__ long long g_cyc[1024];  // per CTA: cycles over the timed pages

// Thread 0 keeps `depth` pages in flight (stage = page % depth, a barrier per stage) and records
// the clock from its wait for page 8 to the landing of the last one. l2: all CTAs read the same 16 pages.
__global__ void __launch_bounds__(32, 1) tma_pages(const __grid_constant__ CUtensorMap tmap, int depth, int l2,
                                                   int pages_total)
{
    extern __shared__ char smem_raw[];
    char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    uint64_t *bar = reinterpret_cast<uint64_t *>(smem + 3 * TILE_BYTES);
    if (threadIdx.x != 0) return;
    for (int d = 0; d < depth; ++d) ptx::mbarrier_init(&bar[d], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    auto page_of = [&](int i) {
        return l2 ? (int)((blockIdx.x * 7 + i) % 16) : (int)(((long long)blockIdx.x * ITERS + i) % pages_total);
    };
    auto issue = [&](int i) {
        const int st = i % depth;
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar[st],
                                       (uint32_t)TILE_BYTES);
        for (int c = 0; c < NBOX; ++c) {
            const int32_t crd[2] = {c * 64, page_of(i) * BN};
            ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, smem + st * TILE_BYTES + c * BOX_BYTES,
                                      &tmap, crd, &bar[st]);
        }
    };
    long long t0 = 0;
    for (int i = 0; i < depth; ++i) issue(i);
    for (int i = 0; i < ITERS; ++i) {
        if (i == 8) t0 = clock64();
        wait_parity(&bar[i % depth], (i / depth) & 1);
        if (i + depth < ITERS) issue(i + depth);
    }
    g_cyc[blockIdx.x] = clock64() - t0;
}

int main()
{
    const int pages_total = 8192;  // 604 MB: DRAM mode streams distinct pages
    bf16 *buf;
    if (cudaMalloc(&buf, (size_t)pages_total * BN * DQK * 2) != cudaSuccess) return 1;
    cudaMemset(buf, 0, (size_t)pages_total * BN * DQK * 2);
    CUtensorMap tmap;
    if (tmap_bf16_2d_sw128(&tmap, buf, DQK, (unsigned long long)pages_total * BN, DQK * 2, 64, 64, "tma_bw") !=
        MLA_STATUS_OK) {
        printf("tensor map failed: %s\n", mla_last_error());
        return 1;
    }
    int sms = 0, clk = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    const size_t smem = 3 * TILE_BYTES + 64 + 1024;
    cudaFuncSetAttribute(tma_pages, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    printf("TMA page probe: 72 KB pages (9 boxes of 64 x 64 bf16), %d pages timed per CTA, SM clock cycles\n",
           ITERS - 8);
    printf("%-5s %-6s %-5s %14s %12s %10s\n", "src", "CTAs", "depth", "cycles/page", "B/clk/SM", "max cyc");
    for (int l2 = 1; l2 >= 0; --l2)
        for (int grid : {1, sms})
            for (int depth = 1; depth <= 3; ++depth) {
                for (int rep = 0; rep < 2; ++rep) tma_pages<<<grid, 32, smem>>>(tmap, depth, l2, pages_total);
                if (cudaDeviceSynchronize() != cudaSuccess) {
                    printf("CUDA error\n");
                    return 1;
                }
                std::vector<long long> c((size_t)grid);
                cudaMemcpyFromSymbol(c.data(), g_cyc, c.size() * 8);
                double sum = 0, mx = 0;
                for (int i = 0; i < grid; ++i) {
                    sum += (double)c[i];
                    mx = c[i] > mx ? (double)c[i] : mx;
                }
                const double per = sum / grid / (ITERS - 8);
                printf("%-5s %-6d %-5d %14.0f %12.1f %10.0f\n", l2 ? "L2" : "DRAM", grid, depth, per, TILE_BYTES / per,
                       mx / (ITERS - 8));
            }
    return 0;
}
