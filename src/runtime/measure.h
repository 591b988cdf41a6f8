/* devices --measure: achievable copy bandwidth and bf16 tensor-core rate of this GPU. */
#ifndef MLA_MEASURE_H
#define MLA_MEASURE_H
#include "device.h"
#ifdef __cplusplus
extern "C" {
#endif
/* Measure (a large device-to-device copy, bytes read + written; a bf16 GEMM 8192^3 through
 * cuBLAS loaded with dlopen) and cache in <cache root>/devices/<key>.json; with force == 0 a
 * cached measurement is reused. Fills dev->measured_gbs / measured_tflops. tflops is 0 with a
 * note when cuBLAS cannot be loaded. */
mla_status mla_device_measure(mla_device_info *dev, int force);
/* Load a cached measurement only (OK if found). */
mla_status mla_device_measure_load(mla_device_info *dev);
#ifdef __cplusplus
}
#endif
#endif
