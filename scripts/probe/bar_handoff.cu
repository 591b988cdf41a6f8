// bar_handoff: does compute-sanitizer's racecheck follow a bar.arrive -> bar.sync handoff?
//
// The seesaw kernels pass each page's row maxima between their two consumer warpgroups through
// shared memory, ordered by named barriers used one way only (PTX ISA, "Memory Consistency
// Model": a bar.arrive synchronizes with a bar.sync on the same barrier): consumer 0 writes,
// arrives on barrier 2, consumer 1 syncs on 2 and reads; consumer 1 writes its own buffer,
// arrives on 3, consumer 0 syncs on 3 and reads. The next round's writes are ordered after the
// other side's reads through the other barrier. Racecheck reported hazards there (flash_mla_v12,
// ninth session). This probe has the same handoff alone, in three kernels:
//   arrive: the seesaw's pattern (only one thread of four writes, as own_commit does);
//   sync:   the same with bar.sync on both sides (the control that should be clean);
//   racy:   the same with no barrier at all (the control that must be flagged).
// Each reader checks the values it reads (they depend on the round), so a real race shows up
// as mismatches as well. Not part of the library or the tests.
// Usage: bar_handoff [arrive|sync|racy] (default arrive); prints the mismatch count.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

// MODE 0 = arrive/sync, 1 = sync/sync, 2 = no barrier
template <int MODE>
__global__ void handoff(int rounds, unsigned *bad)
{
    __shared__ float m0[64], m1[64];
    const int tid = threadIdx.x, w = tid >> 7, own = tid & 127;
    const int row = own >> 1, writer = (own & 1) == 0;  // two threads a row, one writes it
    unsigned nbad = 0;
    for (int k = 0; k < rounds; ++k) {
        if (w == 0) {
            if (writer) m0[row] = (float)(k * 64 + row);
            if (MODE == 0) bar_arrive(2, 256);
            if (MODE == 1) bar_sync(2, 256);
            if (MODE == 0 || MODE == 1) bar_sync(3, 256);
            if (m1[row] != (float)(k * 64 + row + 1)) ++nbad;
        } else {
            if (MODE == 0 || MODE == 1) bar_sync(2, 256);
            if (m0[row] != (float)(k * 64 + row)) ++nbad;
            if (writer) m1[row] = (float)(k * 64 + row + 1);
            if (MODE == 0) bar_arrive(3, 256);
            if (MODE == 1) bar_sync(3, 256);
        }
    }
    if (nbad) atomicAdd(bad, nbad);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "arrive";
    unsigned *bad = nullptr, h = 0;
    cudaMalloc(&bad, sizeof *bad);
    cudaMemset(bad, 0, sizeof *bad);
    const int rounds = 64;
    if (!strcmp(mode, "arrive"))
        handoff<0><<<8, 256>>>(rounds, bad);
    else if (!strcmp(mode, "sync"))
        handoff<1><<<8, 256>>>(rounds, bad);
    else
        handoff<2><<<8, 256>>>(rounds, bad);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost);
    printf("bar_handoff %s: %s, %u mismatched reads\n", mode, cudaGetErrorString(e), h);
    return e != cudaSuccess;
}
