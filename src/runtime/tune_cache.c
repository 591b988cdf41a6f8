/*
 * The tune cache: one JSON file per (device, kernel version, problem shape) holding every
 * candidate's result and the winner, at <dir>/<device>/<kernel>/<problem key>.json.
 * Written atomically (temp file + rename) so a concurrent reader never sees half a file; read
 * with cJSON. A file from another library version, kernel or problem is "stale", one that does
 * not parse or lacks fields is "corrupt": both are reported (warn) and ignored, never trusted.
 * Also the small file helpers the device-measurement cache shares (mkdir -p, atomic write).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "autotune.h"
#include "plan.h"
#include "error.h"

/* ----------------------------------------------------------------------------------------- */
/* Shared file helpers                                                                         */
/* ----------------------------------------------------------------------------------------- */

void mla_sanitize_name(const char *in, char *out, size_t len)
{
    if (!out || len == 0)
        return;
    size_t o = 0;
    int last_us = 1;   /* drop leading '_' and collapse runs: "NVIDIA H200 (SXM)" -> nvidia_h200_sxm */
    for (const char *p = in ? in : ""; *p && o + 1 < len; p++) {
        unsigned char ch = (unsigned char)*p;
        if (isalnum(ch) || ch == '-' || ch == '_') {
            if (ch == '_' && last_us)
                continue;
            out[o++] = (char)tolower(ch);
            last_us = ch == '_';
        } else if (!last_us) {
            out[o++] = '_';
            last_us = 1;
        }
    }
    while (o > 0 && out[o - 1] == '_')
        o--;
    out[o] = '\0';
    if (o == 0)
        snprintf(out, len, "unknown");
}

mla_status mla_mkdir_p(const char *dir)
{
    char buf[1024];
    if (!dir || !dir[0])
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mkdir: empty path");
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return mla_fail(MLA_STATUS_IO_ERROR, "mkdir: path too long: %s", dir);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return mla_fail(MLA_STATUS_IO_ERROR, "mkdir %s: %s", buf, strerror(errno));
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return mla_fail(MLA_STATUS_IO_ERROR, "mkdir %s: not a directory", dir);
    return MLA_STATUS_OK;
}

mla_status mla_write_file_atomic(const char *path, const char *text)
{
    static int counter;   /* distinct temp names for two writers in one process */
    char dir[1024], tmp[1100];
    if (!path || !text)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "write: null argument");
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return mla_fail(MLA_STATUS_IO_ERROR, "write: path too long: %s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        mla_status st = mla_mkdir_p(dir);
        if (st != MLA_STATUS_OK)
            return st;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", path, (long)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    FILE *f = fopen(tmp, "w");
    if (!f)
        return mla_fail(MLA_STATUS_IO_ERROR, "cannot write %s: %s", tmp, strerror(errno));
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad) {
        int err = errno;
        unlink(tmp);
        return mla_fail(MLA_STATUS_IO_ERROR, "cannot write %s: %s", tmp, strerror(err));
    }
    if (rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return mla_fail(MLA_STATUS_IO_ERROR, "cannot rename %s to %s: %s", tmp, path, strerror(err));
    }
    return MLA_STATUS_OK;
}

/* ----------------------------------------------------------------------------------------- */
/* Paths                                                                                       */
/* ----------------------------------------------------------------------------------------- */

const char *mla_tune_cache_default_dir(void)
{
    const char *env = getenv("MLA_VAR3_CACHE_DIR");
    return (env && env[0]) ? env : ".cache/kernel-autotune";
}

void mla_tune_cache_path(const char *dir, const mla_device_info *dev, const char *kernel,
                         const mla_problem *pb, char *buf, size_t len)
{
    char devname[128], kname[128], key[160] = "unknown";
    if (!buf || len == 0)
        return;
    mla_sanitize_name(dev ? (dev->key[0] ? dev->key : dev->name) : NULL, devname, sizeof devname);
    mla_sanitize_name(kernel, kname, sizeof kname);
    if (pb)
        mla_problem_key(pb, key, sizeof key);
    snprintf(buf, len, "%s/%s/%s/%s.json", (dir && dir[0]) ? dir : mla_tune_cache_default_dir(),
             devname, kname, key);
}

/* ----------------------------------------------------------------------------------------- */
/* Store                                                                                       */
/* ----------------------------------------------------------------------------------------- */

static cJSON *tiling_json(const mla_tiling *t)
{
    cJSON *o = cJSON_CreateObject();
    mla_tiling copy = *t;
    for (int i = 0; o && i < MLA_TILING_NUM_FIELDS; i++)
        cJSON_AddNumberToObject(o, mla_tiling_field_names[i], *mla_tiling_field(&copy, i));
    return o;
}

mla_status mla_tune_cache_store_problem(const char *path, const mla_tune_result *res,
                                        const mla_problem *pb)
{
    if (!path || !res)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_tune_cache_store: null argument");
    if (res->num_entries < 0 || res->num_entries > MLA_MAX_CANDIDATES ||
        res->winner < -1 || res->winner >= res->num_entries)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_tune_cache_store: bad result (%d entries, winner %d)",
                        res->num_entries, res->winner);
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_tune_cache_store: out of memory");
    cJSON_AddStringToObject(root, "kernel", res->kernel);
    cJSON_AddStringToObject(root, "device", res->device);
    if (pb) {
        cJSON *p = cJSON_AddObjectToObject(root, "problem");
        if (p) {
            cJSON_AddNumberToObject(p, "b", pb->b);
            cJSON_AddNumberToObject(p, "s", pb->s);
            cJSON_AddNumberToObject(p, "t", pb->t);
            cJSON_AddNumberToObject(p, "h", pb->h);
            cJSON_AddNumberToObject(p, "d", pb->d);
            cJSON_AddNumberToObject(p, "k", pb->k);
            cJSON_AddNumberToObject(p, "p", pb->p);
            cJSON_AddNumberToObject(p, "n", pb->n);
            cJSON_AddNumberToObject(p, "page_size", pb->page_size);
            cJSON_AddNumberToObject(p, "causal", pb->causal);
            cJSON_AddNumberToObject(p, "scale", (double)pb->scale);   /* float -> double: exact */
            cJSON_AddStringToObject(p, "design", mla_design_name(pb->design));
        }
    }
    cJSON_AddStringToObject(root, "problem_key", res->problem_key);
    cJSON_AddStringToObject(root, "date", res->date);
    cJSON_AddStringToObject(root, "library_version", res->library_version);
    cJSON *cands = cJSON_AddArrayToObject(root, "candidates");
    for (int i = 0; cands && i < res->num_entries; i++) {
        const mla_tune_entry *e = &res->entries[i];
        cJSON *c = cJSON_CreateObject();
        if (!c)
            break;
        cJSON_AddItemToObject(c, "tiling", tiling_json(&e->tiling));
        cJSON_AddBoolToObject(c, "ok", e->ok != 0);
        cJSON_AddNumberToObject(c, "median_us", e->median_us);
        cJSON_AddStringToObject(c, "error", e->error);
        cJSON_AddItemToArray(cands, c);
    }
    cJSON_AddNumberToObject(root, "winner", res->winner);
    if (res->winner >= 0)
        cJSON_AddItemToObject(root, "winner_tiling", tiling_json(&res->entries[res->winner].tiling));
    else
        cJSON_AddNullToObject(root, "winner_tiling");

    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_tune_cache_store: out of memory");
    size_t n = strlen(text);
    char *withnl = malloc(n + 2);
    mla_status st;
    if (!withnl) {
        st = mla_fail(MLA_STATUS_OUT_OF_MEMORY, "mla_tune_cache_store: out of memory");
    } else {
        memcpy(withnl, text, n);
        withnl[n] = '\n';
        withnl[n + 1] = '\0';
        st = mla_write_file_atomic(path, withnl);
        free(withnl);
    }
    cJSON_free(text);
    return st;
}

mla_status mla_tune_cache_store(const char *path, const mla_tune_result *res)
{
    return mla_tune_cache_store_problem(path, res, NULL);
}

/* ----------------------------------------------------------------------------------------- */
/* Load                                                                                        */
/* ----------------------------------------------------------------------------------------- */

static char *read_file(const char *path, int *absent)
{
    *absent = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *absent = errno == ENOENT;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap > ((size_t)16 << 20)) {   /* a tune file is a few KB: refuse monsters */
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static const cJSON *get_string(const cJSON *o, const char *name)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(it) && it->valuestring ? it : NULL;
}

static int get_int(const cJSON *o, const char *name, int *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(it))
        return 0;
    double v = it->valuedouble;
    if (v != (double)(int)v)
        return 0;
    *out = (int)v;
    return 1;
}

static int parse_tiling(const cJSON *o, mla_tiling *t)
{
    if (!cJSON_IsObject(o))
        return 0;
    memset(t, 0, sizeof *t);
    for (int i = 0; i < MLA_TILING_NUM_FIELDS; i++)
        if (!get_int(o, mla_tiling_field_names[i], mla_tiling_field(t, i)))
            return 0;
    return 1;
}

#define SET_WARN(...)                                                                         \
    do {                                                                                      \
        if (warn && warn_len)                                                                 \
            snprintf(warn, warn_len, __VA_ARGS__);                                            \
    } while (0)

/* Fill *res from the parsed document; NULL on success, else what is missing or wrong. */
static const char *parse_result(const cJSON *root, mla_tune_result *res)
{
    static const char *const str_fields[] = {"kernel", "device", "problem_key", "date",
                                             "library_version"};
    char *const str_dst[] = {res->kernel, res->device, res->problem_key, res->date,
                             res->library_version};
    const size_t str_len[] = {sizeof res->kernel, sizeof res->device, sizeof res->problem_key,
                              sizeof res->date, sizeof res->library_version};
    if (!cJSON_IsObject(root))
        return "not a JSON object";
    for (int i = 0; i < 5; i++) {
        const cJSON *s = get_string(root, str_fields[i]);
        if (!s)
            return str_fields[i];
        if (strlen(s->valuestring) >= str_len[i])
            return "a string field is too long";
        snprintf(str_dst[i], str_len[i], "%s", s->valuestring);
    }
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(root, "candidates");
    if (!cJSON_IsArray(cands))
        return "candidates";
    int n = cJSON_GetArraySize(cands);
    if (n > MLA_MAX_CANDIDATES)
        return "too many candidates";
    res->num_entries = n;
    for (int i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cands, i);
        mla_tune_entry *e = &res->entries[i];
        if (!cJSON_IsObject(c) || !parse_tiling(cJSON_GetObjectItemCaseSensitive(c, "tiling"), &e->tiling))
            return "candidates[].tiling";
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(c, "ok");
        if (!cJSON_IsBool(ok))
            return "candidates[].ok";
        e->ok = cJSON_IsTrue(ok);
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(c, "median_us");
        if (!cJSON_IsNumber(med))
            return "candidates[].median_us";
        e->median_us = med->valuedouble;
        const cJSON *err = get_string(c, "error");
        if (!err)
            return "candidates[].error";
        snprintf(e->error, sizeof e->error, "%s", err->valuestring);
    }
    if (!get_int(root, "winner", &res->winner))
        return "winner";
    if (res->winner < -1 || res->winner >= n || (res->winner >= 0 && !res->entries[res->winner].ok))
        return "winner (not a timed candidate)";
    return NULL;
}

/* NULL if the file's "problem" object (when present) matches pb, else the first differing field. */
static const char *problem_mismatch(const cJSON *root, const mla_problem *pb)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "problem");
    if (!p || cJSON_IsNull(p))
        return NULL;   /* written by mla_tune_cache_store without a problem: the key decides */
    if (!cJSON_IsObject(p))
        return "problem";
    const struct { const char *name; int v; } ints[] = {
        {"b", pb->b}, {"s", pb->s}, {"t", pb->t}, {"h", pb->h}, {"d", pb->d}, {"k", pb->k},
        {"p", pb->p}, {"n", pb->n}, {"page_size", pb->page_size}, {"causal", pb->causal}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int v;
        if (!get_int(p, ints[i].name, &v) || v != ints[i].v)
            return ints[i].name;
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(p, "scale");
    if (!cJSON_IsNumber(sc) || (float)sc->valuedouble != pb->scale)
        return "scale";
    const cJSON *ds = get_string(p, "design");
    if (!ds || strcmp(ds->valuestring, mla_design_name(pb->design)) != 0)
        return "design";
    return NULL;
}

mla_status mla_tune_cache_load(const char *path, const char *kernel, const mla_problem *pb,
                               mla_tune_result *res, char *warn, size_t warn_len)
{
    SET_WARN("%s", "");
    if (!path || !res)
        return mla_fail(MLA_STATUS_INVALID_ARGUMENT, "mla_tune_cache_load: null argument");
    int absent = 0;
    char *text = read_file(path, &absent);
    if (!text) {
        if (absent)   /* the normal first-run case: no warning */
            return mla_fail(MLA_STATUS_IO_ERROR, "no tune cache at %s", path);
        SET_WARN("corrupt tune cache %s: cannot read it (%s)", path, strerror(errno));
        return mla_fail(MLA_STATUS_IO_ERROR, "corrupt tune cache %s: cannot read it", path);
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) {
        SET_WARN("corrupt tune cache %s: not valid JSON", path);
        return mla_fail(MLA_STATUS_IO_ERROR, "corrupt tune cache %s: not valid JSON", path);
    }
    mla_tune_result tmp;
    memset(&tmp, 0, sizeof tmp);
    const char *bad = parse_result(root, &tmp);
    if (bad) {
        cJSON_Delete(root);
        SET_WARN("corrupt tune cache %s: missing or invalid field '%s'", path, bad);
        return mla_fail(MLA_STATUS_IO_ERROR, "corrupt tune cache %s: missing or invalid field '%s'",
                        path, bad);
    }

    /* Stale: results of another library build, kernel or problem are not evidence for this one. */
    char why[400] = "";
    const char *now_version = mla_version_string();
    if (strcmp(tmp.library_version, now_version) != 0) {
        snprintf(why, sizeof why, "library_version %s, this library is %s", tmp.library_version,
                 now_version);
    } else if (kernel && strcmp(tmp.kernel, kernel) != 0) {
        snprintf(why, sizeof why, "kernel %s, asked for %s", tmp.kernel, kernel);
    } else if (pb) {
        char key[160];
        mla_problem_key(pb, key, sizeof key);
        const char *field = problem_mismatch(root, pb);
        if (strcmp(tmp.problem_key, key) != 0)
            snprintf(why, sizeof why, "problem_key %s, asked for %s", tmp.problem_key, key);
        else if (field)
            snprintf(why, sizeof why, "problem field '%s' differs", field);
    }
    cJSON_Delete(root);
    if (why[0]) {
        SET_WARN("stale tune cache %s: %s", path, why);
        return mla_fail(MLA_STATUS_IO_ERROR, "stale tune cache %s: %s", path, why);
    }
    *res = tmp;
    return MLA_STATUS_OK;
}
