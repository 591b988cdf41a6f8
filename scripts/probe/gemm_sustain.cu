// Sustained bf16 GEMM (cuBLAS, 8192^3, fp32 accumulate) for a given number of seconds: the
// reference load for scripts/device_probe.sh's power and clock sampling (what the card's clock
// does under a tensor-bound load it was built for). Not part of the library or the tests.
// Usage: gemm_sustain [seconds]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv)
{
    const double secs = argc > 1 ? atof(argv[1]) : 4.0;
    const int n = 8192;
    __nv_bfloat16 *a, *b;
    float *c;
    if (cudaMalloc(&a, (size_t)n * n * 2) || cudaMalloc(&b, (size_t)n * n * 2) || cudaMalloc(&c, (size_t)n * n * 4)) {
        printf("gemm_sustain: cudaMalloc failed\n");
        return 1;
    }
    cudaMemset(a, 0x3c, (size_t)n * n * 2);  // 0x3c3c: a small nonzero bf16 everywhere
    cudaMemset(b, 0x3c, (size_t)n * n * 2);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf("gemm_sustain: cublasCreate failed\n");
        return 1;
    }
    const float one = 1.f, zero = 0.f;
    auto gemm = [&]() {
        return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c,
                            CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    for (int i = 0; i < 3; ++i) gemm();
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    long k = 0;
    double el = 0;
    do {
        for (int i = 0; i < 5; ++i)
            if (gemm() != CUBLAS_STATUS_SUCCESS) {
                printf("gemm_sustain: cublasGemmEx failed\n");
                return 1;
            }
        cudaDeviceSynchronize();
        k += 5;
        el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (el < secs);
    printf("gemm bf16 %d^3 sustained %.1f s: %ld products, %.1f TFLOP/s\n", n, el, k, 2.0 * n * n * (double)n * k / el * 1e-12);
    cublasDestroy(h);
    return 0;
}
