// bar_exit: does a counted named barrier (bar.sync id, 256) wait for its last warp when a third
// warpgroup of the CTA has exited?
//
// The fmpair kernels run 384 threads: warpgroup 0 gives its registers away and exits at once, and
// the two math warpgroups (256 threads) sync on named barriers with a count of 256. The forty-
// first session's transition marks read warpgroup 1 passing `bar.sync 1, 256` 2,470 cycles
// before warpgroup 0's marking thread reached it (flash_mla_v68's walk, b=32,s=8). The PTX ISA
// says a counted barrier waits for its count of threads and that exits release only barriers
// on all threads; this checks it on the card. One CTA of 384 threads:
//   - warpgroup 0 exits (EXIT=1) or waits at the end instead (EXIT=0, the control);
//   - warpgroup 1 syncs on barrier 1 (count 256) at once;
//   - warpgroup 2 spins DELAY cycles, then syncs on barrier 1;
// each warpgroup's thread 0 records the SM clock before and after its sync. If warpgroup 1
// passes before warpgroup 2 arrives, the barrier does not wait for the last warps.
// Also with only warp 0 of warpgroup 2 late (LATE_WARP=1: warps 1-3 of it sync at once), the
// shape of the transition (thread 0's warp the last to arrive).
// Not part of the library or the tests. Usage: bar_exit; prints one line per case.
#include <cuda_runtime.h>
#include <cstdio>

__device__ __forceinline__ unsigned clk()
{
    unsigned c;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
    return c;
}
__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// t[0]: wg1 before, t[1]: wg1 after, t[2]: wg2 (its late warp) before, t[3]: wg2 after
template <bool EXIT, bool LATE_WARP>
__global__ void __launch_bounds__(384, 1) bar_exit(unsigned delay, unsigned *t)
{
    const int wg = threadIdx.x >> 7, own = threadIdx.x & 127;
    if (wg == 0) {
        if (EXIT) return;
        bar_sync(2, 384);  // (the control: stays until the others are done)
        return;
    }
    const bool late = wg == 2 && (!LATE_WARP || own < 32);
    if (late) {
        const unsigned c0 = clk();
        while (clk() - c0 < delay) {
        }
    }
    const unsigned b = clk();
    bar_sync(1, 256);
    const unsigned a = clk();
    if (own == 0) {
        t[(wg - 1) * 2] = b;
        t[(wg - 1) * 2 + 1] = a;
    }
    if (!EXIT) bar_sync(2, 384);
}

template <bool EXIT, bool LATE_WARP>
static void run(const char *name)
{
    unsigned *d, h[4] = {0, 0, 0, 0};
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0, sizeof h);
    bar_exit<EXIT, LATE_WARP><<<1, 384>>>(20000u, d);
    const cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    const int wg1_pass = (int)(h[1] - h[2]);  // wg1 past the barrier, against wg2's late arrival
    printf("%-34s %s: wg1 arrived %d, wg1 passed %d, wg2 arrived 0, wg2 passed %d (cycles from wg2's "
           "arrival) -> %s\n",
           name, cudaGetErrorString(e), (int)(h[0] - h[2]), wg1_pass, (int)(h[3] - h[2]),
           wg1_pass < 0 ? "wg1 did NOT wait" : "wg1 waited");
}

int main()
{
    run<false, false>("control (no exit), wg2 late");
    run<true, false>("wg0 exited, wg2 late");
    run<false, true>("control (no exit), wg2's warp 0 late");
    run<true, true>("wg0 exited, wg2's warp 0 late");
    return 0;
}
