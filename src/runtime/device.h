/*
 * The device model: the detected GPU (live limits from the driver) matched to conf/devices.json
 * (datasheet peaks, with their source), plus the architecture gate. Library code: no printing.
 */
#ifndef MLA_DEVICE_H
#define MLA_DEVICE_H
#include <stddef.h>
#include "mla_var3.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct mla_device_info {
    int present;                 /* 1: a live CUDA device; 0: a table entry or a fake */
    int ordinal;
    char name[128];              /* "NVIDIA H200" */
    char key[32];                /* devices.json key ("h200"), "" if unknown */
    int cc_major, cc_minor;
    int sm_count;
    size_t smem_per_block_optin; /* bytes a block may opt in to */
    size_t smem_per_sm;
    int regs_per_sm, regs_per_block;
    int max_threads_per_sm, max_threads_per_block;
    int max_blocks_per_sm;
    size_t l2_bytes;
    int sm_clock_mhz, mem_clock_mhz;
    double peak_bf16_tflops;     /* datasheet dense bf16 (0: unknown) */
    double peak_mem_gbs;         /* datasheet memory bandwidth */
    double measured_tflops;      /* devices --measure (0: not measured) */
    double measured_gbs;
    char note[256];              /* e.g. "unknown GPU: live driver properties only" */
} mla_device_info;

/* Query device `ordinal`: live properties, then datasheet numbers from devices.json (path from
 * $MLA_VAR3_DEVICES, else the installed/compiled-in conf path). NO_DEVICE when there is none. */
mla_status mla_device_query(int ordinal, mla_device_info *info);

/* Number of CUDA devices (0 when the driver or device is missing; never fails). */
int mla_device_count(void);

/* Fill `info` from devices.json entry `key` (no live device needed; present = 0). */
mla_status mla_device_from_table(const char *key, mla_device_info *info);

/* Match `info` (name, cc and sm_count as the driver reports them) to devices.json by compute
 * capability and the longest "match" substring, and fill key, peaks and note; the limits in
 * `info` are kept (live limits win). OK with key "" when nothing matches; IO_ERROR if the table
 * cannot be used. mla_device_query uses it; tests call it on made-up names. */
mla_status mla_device_attach_table(mla_device_info *info);

/* Enumerate devices.json: calls fn for each entry in file order; returns the count or -1. */
int mla_device_table_foreach(void (*fn)(const mla_device_info *info, const char *source, void *ctx),
                             void *ctx);

/* The path of devices.json in use. */
const char *mla_devices_json_path(void);

/* Kernel targets and the architecture gate. */
typedef enum mla_target {
    MLA_TARGET_SM80_PLUS = 0,  /* sm_80 and newer: mma.sync, ldmatrix, cp.async */
    MLA_TARGET_SM90A = 1,      /* exactly sm_90a: wgmma, TMA, setmaxnreg */
    MLA_TARGET_SM100A = 2      /* exactly sm_100a (a future Blackwell tier) */
} mla_target;

const char *mla_target_name(mla_target t);   /* "sm_80+", "sm_90a", "sm_100a" */

/* 1 if a kernel built for `target` may be launched on compute capability major.minor; else 0
 * with the reason in `why` ("sm_90a kernel needs compute capability 9.0 exactly; device is 8.0"). */
int mla_arch_allows(mla_target target, int cc_major, int cc_minor, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
