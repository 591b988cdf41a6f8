/*
 * The device model: live CUDA limits of a GPU, matched to conf/devices.json for its datasheet
 * peaks, table-only devices for tests and the CLI, and the architecture gate (which kernel
 * target may run on which compute capability). Library code: returns a status, never prints.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include <cuda_runtime_api.h>
#include "device.h"
#include "error.h"

#ifndef MLA_DEVICES_JSON
#define MLA_DEVICES_JSON "conf/devices.json"
#endif
#ifndef MLA_DEVICES_JSON_INSTALLED
#define MLA_DEVICES_JSON_INSTALLED "/usr/local/share/mla_var3/devices.json"
#endif

#define DEV_MAX_MATCH 8
#define DEV_FILE_MAX (4 << 20)   /* a device table is a few KB; refuse anything absurd */

/* One parsed devices.json entry. */
typedef struct dev_entry {
    mla_device_info info;
    char match[DEV_MAX_MATCH][64];
    int num_match;
    char source[512];
} dev_entry;

typedef struct dev_table {
    dev_entry *e;
    int n;
} dev_table;

/* dst = a + b, cut to fit: notes and names are truncated on purpose (no -Wformat-truncation). */
static void join_trunc(char *dst, size_t len, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (!len) return;
    if (la >= len) la = len - 1;
    memcpy(dst, a, la);
    if (lb > len - 1 - la) lb = len - 1 - la;
    memcpy(dst + la, b, lb);
    dst[la + lb] = '\0';
}

/* <dir of the binary holding this code>/../share/mla_var3/devices.json: an installed copy
 * found wherever the prefix was moved to (the library in lib/, the CLI in bin/). */
static const char *relative_install_path(void)
{
    static _Thread_local char buf[4096];
    Dl_info info;
    if (!dladdr((const void *)&relative_install_path, &info) || !info.dli_fname) return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash) return NULL;
    int n = snprintf(buf, sizeof buf, "%.*s/../share/mla_var3/devices.json",
                     (int)(slash - info.dli_fname), info.dli_fname);
    return (n > 0 && (size_t)n < sizeof buf && access(buf, R_OK) == 0) ? buf : NULL;
}

const char *mla_devices_json_path(void)
{
    const char *env = getenv("MLA_VAR3_DEVICES");
    if (env && env[0]) return env;
    const char *rel = relative_install_path();
    if (rel) return rel;
    if (access(MLA_DEVICES_JSON, R_OK) == 0) return MLA_DEVICES_JSON;
    return MLA_DEVICES_JSON_INSTALLED;
}

/* ---- loading ------------------------------------------------------------------------------- */

static mla_status read_file(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return mla_fail(MLA_STATUS_IO_ERROR, "devices.json: cannot open %s: %s", path, strerror(errno));
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices.json: out of host memory");
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= DEV_FILE_MAX) {
                free(buf);
                fclose(f);
                return mla_fail(MLA_STATUS_IO_ERROR, "devices.json: %s is larger than %d bytes", path,
                                DEV_FILE_MAX);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices.json: out of host memory");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json: read error on %s", path);
    }
    buf[len] = '\0';
    *out = buf;
    return MLA_STATUS_OK;
}

/* A required (or optional, with default) non-negative number field of entry `idx`. */
static mla_status get_num(const cJSON *obj, const char *field, int required, double def, double *out,
                          const char *path, int idx)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!it) {
        if (!required) {
            *out = def;
            return MLA_STATUS_OK;
        }
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d lacks \"%s\"", path, idx, field);
    }
    if (!cJSON_IsNumber(it) || it->valuedouble < 0)
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d: \"%s\" must be a non-negative number",
                        path, idx, field);
    *out = it->valuedouble;
    return MLA_STATUS_OK;
}

static mla_status get_str(const cJSON *obj, const char *field, char *dst, size_t len, const char *path,
                          int idx)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0])
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d: \"%s\" must be a non-empty string",
                        path, idx, field);
    join_trunc(dst, len, "", it->valuestring);
    return MLA_STATUS_OK;
}

static mla_status parse_entry(const cJSON *obj, dev_entry *e, const char *path, int idx)
{
    mla_status st;
    memset(e, 0, sizeof *e);
    e->info.ordinal = -1;
    if (!cJSON_IsObject(obj))
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d is not an object", path, idx);
    if ((st = get_str(obj, "key", e->info.key, sizeof e->info.key, path, idx))) return st;
    if ((st = get_str(obj, "name", e->info.name, sizeof e->info.name, path, idx))) return st;
    if ((st = get_str(obj, "source", e->source, sizeof e->source, path, idx))) return st;

    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "match");
    if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) < 1)
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d (%s): \"match\" must be a non-empty list",
                        path, idx, e->info.key);
    const cJSON *s;
    cJSON_ArrayForEach(s, m) {
        if (!cJSON_IsString(s) || !s->valuestring[0] || e->num_match == DEV_MAX_MATCH)
            return mla_fail(MLA_STATUS_IO_ERROR,
                            "devices.json %s: device %d (%s): \"match\" must hold 1..%d non-empty strings",
                            path, idx, e->info.key, DEV_MAX_MATCH);
        join_trunc(e->match[e->num_match++], sizeof e->match[0], "", s->valuestring);
    }

    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(obj, "cc");
    if (!cJSON_IsArray(cc) || cJSON_GetArraySize(cc) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(cc, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(cc, 1)) || cJSON_GetArrayItem(cc, 0)->valueint < 1 ||
        cJSON_GetArrayItem(cc, 1)->valueint < 0)
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: device %d (%s): \"cc\" must be [major, minor]",
                        path, idx, e->info.key);
    e->info.cc_major = cJSON_GetArrayItem(cc, 0)->valueint;
    e->info.cc_minor = cJSON_GetArrayItem(cc, 1)->valueint;

    double v;
#define NUM(field, req, def, expr)                                                   \
    do {                                                                             \
        if ((st = get_num(obj, field, req, def, &v, path, idx))) return st;          \
        expr;                                                                        \
    } while (0)
    NUM("sm_count", 1, 0, e->info.sm_count = (int)v);
    NUM("smem_per_block_optin_kb", 1, 0, e->info.smem_per_block_optin = (size_t)(v * 1024.0));
    NUM("smem_per_sm_kb", 1, 0, e->info.smem_per_sm = (size_t)(v * 1024.0));
    NUM("regs_per_sm", 1, 0, e->info.regs_per_sm = (int)v);
    NUM("l2_mb", 1, 0, e->info.l2_bytes = (size_t)(v * 1024.0 * 1024.0));
    NUM("bf16_dense_tflops", 1, 0, e->info.peak_bf16_tflops = v);
    NUM("mem_gbs", 1, 0, e->info.peak_mem_gbs = v);
    /* Same on every sm_80+ GPU so far: optional, with the common values as defaults. */
    NUM("regs_per_block", 0, 65536, e->info.regs_per_block = (int)v);
    NUM("max_threads_per_sm", 0, 2048, e->info.max_threads_per_sm = (int)v);
    NUM("max_threads_per_block", 0, 1024, e->info.max_threads_per_block = (int)v);
    NUM("max_blocks_per_sm", 0, 32, e->info.max_blocks_per_sm = (int)v);
    NUM("sm_clock_mhz", 0, 0, e->info.sm_clock_mhz = (int)v);
    NUM("mem_clock_mhz", 0, 0, e->info.mem_clock_mhz = (int)v);
#undef NUM
    if (e->info.sm_count <= 0 || e->info.smem_per_block_optin == 0 || e->info.regs_per_sm <= 0)
        return mla_fail(MLA_STATUS_IO_ERROR,
                        "devices.json %s: device %d (%s): sm_count, smem_per_block_optin_kb and regs_per_sm "
                        "must be positive", path, idx, e->info.key);
    return MLA_STATUS_OK;
}

static void table_free(dev_table *t)
{
    free(t->e);
    t->e = NULL;
    t->n = 0;
}

/* Parse devices.json afresh each time: it is small, and re-reading honours a changed
 * $MLA_VAR3_DEVICES without any global state (thread-safe). */
static mla_status table_load(dev_table *t)
{
    const char *path = mla_devices_json_path();
    char *text = NULL;
    t->e = NULL;
    t->n = 0;
    mla_status st = read_file(path, &text);
    if (st) return st;

    /* ParseWithOpts reports the error position through `at` (cJSON_GetErrorPtr is a global). */
    const char *at = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &at, 0);
    if (!root) {
        long off = (at && at >= text && at <= text + strlen(text)) ? (long)(at - text) : -1;
        free(text);
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: not valid JSON (near byte %ld)", path, off);
    }
    free(text);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(devs)) {
        cJSON_Delete(root);
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: expected an object {\"devices\": [...]}", path);
    }
    int n = cJSON_GetArraySize(devs);
    if (n <= 0) {
        cJSON_Delete(root);
        return mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: the \"devices\" list is empty", path);
    }
    t->e = calloc((size_t)n, sizeof *t->e);
    if (!t->e) {
        cJSON_Delete(root);
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "devices.json: out of host memory");
    }
    const cJSON *d;
    cJSON_ArrayForEach(d, devs) {
        st = parse_entry(d, &t->e[t->n], path, t->n);
        if (st) break;
        for (int j = 0; j < t->n; j++)
            if (strcmp(t->e[j].info.key, t->e[t->n].info.key) == 0) {
                st = mla_fail(MLA_STATUS_IO_ERROR, "devices.json %s: key \"%s\" appears twice", path,
                              t->e[j].info.key);
                break;
            }
        if (st) break;
        t->n++;
    }
    cJSON_Delete(root);
    if (st) table_free(t);
    return st;
}

/* ---- queries ------------------------------------------------------------------------------- */

int mla_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();   /* do not leave the error for the next CUDA call to report */
        return 0;
    }
    return n;
}

/* Best table entry for a live device: same cc, longest case-insensitive "match" substring of the
 * CUDA name; a tie goes to the entry with the same SM count. -1 if none. */
static int table_match(const dev_table *t, const mla_device_info *info)
{
    int best = -1, best_len = 0, best_sm = 0;
    for (int i = 0; i < t->n; i++) {
        const dev_entry *e = &t->e[i];
        if (e->info.cc_major != info->cc_major || e->info.cc_minor != info->cc_minor) continue;
        int len = 0;
        for (int j = 0; j < e->num_match; j++)
            if (strcasestr(info->name, e->match[j]) && (int)strlen(e->match[j]) > len)
                len = (int)strlen(e->match[j]);
        if (len == 0) continue;
        int sm = e->info.sm_count == info->sm_count;
        if (len > best_len || (len == best_len && sm && !best_sm)) {
            best = i;
            best_len = len;
            best_sm = sm;
        }
    }
    return best;
}

mla_status mla_device_attach_table(mla_device_info *info)
{
    if (!info) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_device_attach_table: info is NULL");
    dev_table t;
    mla_status st = table_load(&t);
    if (st) return st;
    int i = table_match(&t, info);
    if (i < 0) {
        info->key[0] = '\0';
        info->peak_bf16_tflops = 0;
        info->peak_mem_gbs = 0;
        snprintf(info->note, sizeof info->note, "unknown GPU: live driver properties only");
    } else {
        const dev_entry *e = &t.e[i];
        join_trunc(info->key, sizeof info->key, "", e->info.key);
        info->peak_bf16_tflops = e->info.peak_bf16_tflops;
        info->peak_mem_gbs = e->info.peak_mem_gbs;
        join_trunc(info->note, sizeof info->note, "peaks: ", e->source);
    }
    table_free(&t);
    return MLA_STATUS_OK;
}

#define CUDA_TRY(call, what)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            (void)cudaGetLastError();                                                           \
            return mla_fail(MLA_STATUS_CUDA_ERROR, "device %d: %s failed: %s", ordinal, what,   \
                            cudaGetErrorString(e_));                                            \
        }                                                                                       \
    } while (0)

mla_status mla_device_query(int ordinal, mla_device_info *info)
{
    if (!info) return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_device_query: info is NULL");
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        return mla_fail(MLA_STATUS_NO_DEVICE, "no CUDA device: %s", cudaGetErrorString(ce));
    }
    if (n <= 0) return mla_fail(MLA_STATUS_NO_DEVICE, "no CUDA device is present");
    if (ordinal < 0 || ordinal >= n)
        return mla_fail(MLA_STATUS_NO_DEVICE, "CUDA device %d does not exist (%d device%s present)", ordinal,
                        n, n == 1 ? "" : "s");

    struct cudaDeviceProp p;
    CUDA_TRY(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
    int clock_khz = 0, mem_khz = 0;
    /* CUDA 13 removed clockRate/memoryClockRate from cudaDeviceProp: use the attributes. */
    CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal), "cudaDevAttrClockRate");
    CUDA_TRY(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ordinal),
             "cudaDevAttrMemoryClockRate");

    info->present = 1;
    join_trunc(info->name, sizeof info->name, "", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->smem_per_block_optin = p.sharedMemPerBlockOptin;
    info->smem_per_sm = p.sharedMemPerMultiprocessor;
    info->regs_per_sm = p.regsPerMultiprocessor;
    info->regs_per_block = p.regsPerBlock;
    info->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    info->max_threads_per_block = p.maxThreadsPerBlock;
    info->max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
    info->l2_bytes = p.l2CacheSize > 0 ? (size_t)p.l2CacheSize : 0;
    info->sm_clock_mhz = clock_khz / 1000;
    info->mem_clock_mhz = mem_khz / 1000;

    /* The table only adds peaks; a missing or broken table must not hide a working GPU. */
    mla_status st = mla_device_attach_table(info);
    if (st) {
        snprintf(info->note, sizeof info->note, "unknown GPU: live driver properties only (%s)",
                 mla_last_error());
        mla_clear_error();
    }
    return MLA_STATUS_OK;
}

mla_status mla_device_from_table(const char *key, mla_device_info *info)
{
    if (!key || !info)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_device_from_table: key and info must not be NULL");
    dev_table t;
    mla_status st = table_load(&t);
    if (st) return st;
    for (int i = 0; i < t.n; i++)
        if (strcmp(t.e[i].info.key, key) == 0) {
            *info = t.e[i].info;
            info->present = 0;
            info->ordinal = -1;
            join_trunc(info->note, sizeof info->note, "table entry (no live device): ", t.e[i].source);
            table_free(&t);
            return MLA_STATUS_OK;
        }
    char keys[512] = "";
    size_t used = 0;
    for (int i = 0; i < t.n && used < sizeof keys; i++) {
        int w = snprintf(keys + used, sizeof keys - used, "%s%s", i ? ", " : "", t.e[i].info.key);
        if (w < 0) break;
        used += (size_t)w;
    }
    table_free(&t);
    return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "unknown device key \"%s\" in %s (known: %s)", key,
                    mla_devices_json_path(), keys);
}

int mla_device_table_foreach(void (*fn)(const mla_device_info *info, const char *source, void *ctx),
                             void *ctx)
{
    dev_table t;
    if (table_load(&t)) return -1;
    int n = t.n;
    for (int i = 0; i < n; i++) {
        mla_device_info info = t.e[i].info;
        info.present = 0;
        info.ordinal = -1;
        if (fn) fn(&info, t.e[i].source, ctx);
    }
    table_free(&t);
    return n;
}

/* ---- architecture gate --------------------------------------------------------------------- */

const char *mla_target_name(mla_target t)
{
    switch (t) {
    case MLA_TARGET_SM80_PLUS: return "sm_80+";
    case MLA_TARGET_SM90A: return "sm_90a";
    case MLA_TARGET_SM100A: return "sm_100a";
    }
    return "unknown";
}

int mla_arch_allows(mla_target target, int cc_major, int cc_minor, char *why, size_t why_len)
{
    int ok;
    const char *need;
    switch (target) {
    case MLA_TARGET_SM80_PLUS:
        /* sm_80 SASS + compute_80 PTX: runs on any later GPU (the driver JITs the PTX). */
        ok = cc_major >= 8;
        need = "compute capability 8.0 or newer";
        break;
    case MLA_TARGET_SM90A:
        /* "a" targets use arch-specific instructions (wgmma, setmaxnreg): exact match only. */
        ok = cc_major == 9 && cc_minor == 0;
        need = "compute capability 9.0 exactly";
        break;
    case MLA_TARGET_SM100A:
        ok = cc_major == 10 && cc_minor == 0;
        need = "compute capability 10.0 exactly";
        break;
    default:
        if (why && why_len) snprintf(why, why_len, "unknown kernel target %d", (int)target);
        return 0;
    }
    if (why && why_len) {
        if (ok)
            why[0] = '\0';
        else
            snprintf(why, why_len, "%s kernel needs %s; this device is %d.%d", mla_target_name(target), need,
                     cc_major, cc_minor);
    }
    return ok;
}
