// bar_exit: does a counted named barrier (bar.sync id, 256) wait for its last warp when a third
// warpgroup of the CTA has exited?
//
// The fmpair kernels run 384 threads: warpgroup 0 gives its registers away and exits at once, and
// the two math warpgroups (256 threads) sync on named barriers with a count of 256. The forty-
// first session's transition marks read warpgroup 1 passing `bar.sync 1, 256` 2,470 cycles
// before warpgroup 0's marking thread reached it (flash_mla_v68's walk, b=32,s=8). One CTA of 384
// threads:
//   - warpgroup 0 exits (EXIT=1) or waits at the end instead (EXIT=0, the control);
//   - warpgroup 1 syncs on barrier 1 (count N) at once;
//   - warpgroup 2 spins DELAY cycles, writes a flag into shared memory, then syncs on barrier 1;
//   - each warpgroup's thread 0 records the SM clock before and after its sync, and warpgroup 1
//     the flag it reads after the sync.
// The flag is the test: warpgroup 2 writes it only after its spin, so warpgroup 1 reads 1 only if
// the barrier held it until warpgroup 2 arrived. The clocks alone are not: the forty-second
// session's first run read warpgroup 1's clock after the barrier 20,000 cycles before warpgroup
// 2 arrived, in the control too. ptxas emits BAR.SYNC.DEFER_BLOCKING, and a clock read (CS2R)
// that follows it is not held by it; the flag's shared load is. N = 128 is the case where the
// barrier must not wait (warpgroup 1 alone completes it): there the flag must read 0, which
// shows that the test can fail.
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

// t[0]: wg1 before, t[1]: wg1 after, t[2]: wg2 (its late warp) before, t[3]: wg2 after, t[4]: the
// flag wg1's thread 0 read after its sync, t[5]: the flag it read before.
template <bool EXIT, bool LATE_WARP>
__global__ void __launch_bounds__(384, 1) bar_exit(unsigned delay, int n, unsigned *t)
{
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
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
        flag = 1;
    }
    const int f0 = wg == 1 ? flag : 0;
    const unsigned b = clk();
    bar_sync(1, n);  // (with n = 128 each warpgroup completes a phase of its own)
    const int f1 = wg == 1 ? flag : 0;
    const unsigned a = clk();
    if (own == 0) {
        t[(wg - 1) * 2] = b;
        t[(wg - 1) * 2 + 1] = a;
        if (wg == 1) {
            t[4] = (unsigned)f1;
            t[5] = (unsigned)f0;
        }
    }
    if (!EXIT) bar_sync(2, 384);
}

template <bool EXIT, bool LATE_WARP>
static void run(const char *name, int n)
{
    unsigned *d, h[6] = {0, 0, 0, 0, 0, 0};
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0xff, sizeof h);
    bar_exit<EXIT, LATE_WARP><<<1, 384>>>(20000u, n, d);
    const cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    printf("%-38s count %3d %s: flag before %d, after %d -> %s | clocks from wg2's arrival: wg1 arrived %d, "
           "wg1's clock after %d, wg2 passed %d\n",
           name, n, cudaGetErrorString(e), (int)h[5], (int)h[4],
           h[4] == 1 ? "wg1 waited for wg2" : h[4] == 0 ? "wg1 did NOT wait" : "no result", (int)(h[0] - h[2]),
           (int)(h[1] - h[2]), (int)(h[3] - h[2]));
}

int main()
{
    run<false, false>("control (no exit), wg2 late", 256);
    run<true, false>("wg0 exited, wg2 late", 256);
    run<false, true>("control (no exit), wg2's warp 0 late", 256);
    run<true, true>("wg0 exited, wg2's warp 0 late", 256);
    run<true, false>("wg0 exited, wg2 late (must not wait)", 128);
    return 0;
}
