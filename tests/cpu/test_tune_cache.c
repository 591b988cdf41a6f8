/*
 * The tune cache without a GPU: store/load round trip, corrupt and stale files are refused with
 * the right warning, an absent file is quiet, the path layout and device-name sanitising, and
 * problem keys that tell problems apart. Works in a fresh mkdtemp directory under /tmp.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "mla_var3.h"
#include "autotune.h"
#include "plan.h"
#include "registry.h"

#include "check.h"

static char tmpdir[256];

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        printf("cannot write %s\n", path);
        exit(1);
    }
    fwrite(text, 1, n, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static mla_problem mla_problem_ex(void)
{
    mla_problem pb;
    mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA);
    pb.b = 32;
    pb.s = 2;
    pb.t = 4096;
    return pb;
}

static void make_result(mla_tune_result *res, const mla_problem *pb)
{
    memset(res, 0, sizeof *res);
    snprintf(res->kernel, sizeof res->kernel, "flash_mla_v0");
    snprintf(res->device, sizeof res->device, "NVIDIA H200");
    mla_problem_key(pb, res->problem_key, sizeof res->problem_key);
    snprintf(res->date, sizeof res->date, "2026-11-29T12:34:56Z");
    snprintf(res->library_version, sizeof res->library_version, "%s", mla_version_string());
    res->num_entries = 3;
    mla_tiling t0 = {64, 64, 8, 2, 0}, t1 = {64, 32, 4, 3, 8}, t2 = {128, 64, 8, 2, 16};
    res->entries[0].tiling = t0;
    res->entries[0].ok = 1;
    res->entries[0].median_us = 81.123456789;
    res->entries[1].tiling = t1;
    res->entries[1].ok = 1;
    res->entries[1].median_us = 77.0 / 3.0;   /* not representable in few digits: exactness */
    res->entries[2].tiling = t2;
    res->entries[2].ok = 0;
    snprintf(res->entries[2].error, sizeof res->entries[2].error,
             "smem 240 KB > 227 KB opt-in \"quoted\" \\ back");
    res->winner = 1;
}

static int same_tiling(const mla_tiling *a, const mla_tiling *b)
{
    return a->block_m == b->block_m && a->block_n == b->block_n && a->warps == b->warps &&
           a->stages == b->stages && a->splits == b->splits;
}

static void compare_results(const mla_tune_result *a, const mla_tune_result *b, const char *what)
{
    CHECK(strcmp(a->kernel, b->kernel) == 0, "%s: kernel %s vs %s", what, a->kernel, b->kernel);
    CHECK(strcmp(a->device, b->device) == 0, "%s: device %s vs %s", what, a->device, b->device);
    CHECK(strcmp(a->problem_key, b->problem_key) == 0, "%s: key", what);
    CHECK(strcmp(a->date, b->date) == 0, "%s: date %s vs %s", what, a->date, b->date);
    CHECK(strcmp(a->library_version, b->library_version) == 0, "%s: version", what);
    CHECK(a->num_entries == b->num_entries, "%s: %d vs %d entries", what, a->num_entries, b->num_entries);
    CHECK(a->winner == b->winner, "%s: winner %d vs %d", what, a->winner, b->winner);
    for (int i = 0; i < a->num_entries && i < b->num_entries; i++) {
        const mla_tune_entry *x = &a->entries[i], *y = &b->entries[i];
        CHECK(same_tiling(&x->tiling, &y->tiling), "%s: entry %d tiling", what, i);
        CHECK(x->ok == y->ok, "%s: entry %d ok", what, i);
        CHECK(x->median_us == y->median_us, "%s: entry %d median %.17g vs %.17g", what, i,
              x->median_us, y->median_us);
        CHECK(strcmp(x->error, y->error) == 0, "%s: entry %d error '%s' vs '%s'", what, i,
              x->error, y->error);
    }
}

static void test_round_trip(void)
{
    mla_problem pb = mla_problem_ex();
    mla_tune_result res, got;
    char path[512], warn[512];
    make_result(&res, &pb);

    snprintf(path, sizeof path, "%s/rt/a/b/c.json", tmpdir);   /* nested dirs: mkdir -p */
    CHECK(mla_tune_cache_store_problem(path, &res, &pb) == MLA_STATUS_OK, "store: %s", mla_last_error());
    memset(&got, 0x5a, sizeof got);
    snprintf(warn, sizeof warn, "junk");
    mla_status st = mla_tune_cache_load(path, "flash_mla_v0", &pb, &got, warn, sizeof warn);
    CHECK(st == MLA_STATUS_OK, "load: %s (%s)", mla_status_name(st), mla_last_error());
    CHECK(warn[0] == '\0', "warning on a good load: %s", warn);
    if (st == MLA_STATUS_OK)
        compare_results(&res, &got, "round trip");

    /* The JSON has the documented fields. */
    char *text = read_text(path);
    CHECK(text != NULL, "read back %s", path);
    if (text) {
        const char *fields[] = {"\"kernel\"", "\"device\"", "\"problem\"", "\"page_size\"",
                                "\"scale\"", "\"design\"", "\"problem_key\"", "\"date\"",
                                "\"library_version\"", "\"candidates\"", "\"tiling\"",
                                "\"block_m\"", "\"median_us\"", "\"error\"", "\"winner\"",
                                "\"winner_tiling\""};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            CHECK(strstr(text, fields[i]) != NULL, "field %s missing in the file", fields[i]);
        free(text);
    }

    /* No temp file is left behind. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rt/a/b", tmpdir);
    DIR *dp = opendir(dir);
    int files = 0;
    struct dirent *de;
    while (dp && (de = readdir(dp)))
        if (de->d_name[0] != '.')
            files++;
    if (dp)
        closedir(dp);
    CHECK(files == 1, "%d files in %s (temp file left?)", files, dir);

    /* Without a problem object (mla_tune_cache_store) and with no winner. */
    res.winner = -1;
    res.entries[0].ok = res.entries[1].ok = 0;
    snprintf(path, sizeof path, "%s/rt/noproblem.json", tmpdir);
    CHECK(mla_tune_cache_store(path, &res) == MLA_STATUS_OK, "store: %s", mla_last_error());
    st = mla_tune_cache_load(path, "flash_mla_v0", &pb, &got, warn, sizeof warn);
    CHECK(st == MLA_STATUS_OK, "load without problem: %s (%s)", mla_status_name(st), mla_last_error());
    if (st == MLA_STATUS_OK)
        compare_results(&res, &got, "no problem, no winner");

    /* Overwriting an existing file works (rename over it). */
    make_result(&res, &pb);
    res.winner = 0;
    CHECK(mla_tune_cache_store(path, &res) == MLA_STATUS_OK, "overwrite: %s", mla_last_error());
    st = mla_tune_cache_load(path, "flash_mla_v0", &pb, &got, warn, sizeof warn);
    CHECK(st == MLA_STATUS_OK && got.winner == 0, "overwrite then load: winner %d", got.winner);
}

static void expect_refused(const char *path, const char *kernel, const mla_problem *pb,
                           const char *word, const char *what)
{
    mla_tune_result got;
    char warn[1024] = "";
    mla_status st = mla_tune_cache_load(path, kernel, pb, &got, warn, sizeof warn);
    CHECK(st == MLA_STATUS_IO_ERROR, "%s: status %s", what, mla_status_name(st));
    if (word[0])
        CHECK(strstr(warn, word) != NULL && strstr(warn, path) != NULL,
              "%s: warning '%s' lacks '%s' or the path", what, warn, word);
    else
        CHECK(warn[0] == '\0', "%s: unexpected warning '%s'", what, warn);
}

static void test_corrupt(void)
{
    mla_problem pb = mla_problem_ex();
    mla_tune_result res;
    char path[512], good[512];
    make_result(&res, &pb);
    snprintf(good, sizeof good, "%s/corrupt/good.json", tmpdir);
    CHECK(mla_tune_cache_store_problem(good, &res, &pb) == MLA_STATUS_OK, "store: %s", mla_last_error());
    char *text = read_text(good);
    if (!text) {
        CHECK(0, "cannot read back %s", good);
        return;
    }

    snprintf(path, sizeof path, "%s/corrupt/garbage.json", tmpdir);
    const unsigned char garbage[] = {0xff, 0x00, 0x13, 0x37, '{', 0x80, 0xfe, 'x'};
    write_text(path, (const char *)garbage, sizeof garbage);
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "garbage bytes");

    snprintf(path, sizeof path, "%s/corrupt/truncated.json", tmpdir);
    write_text(path, text, strlen(text) / 2);
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "truncated JSON");

    snprintf(path, sizeof path, "%s/corrupt/empty.json", tmpdir);
    write_text(path, "", 0);
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "empty file");

    snprintf(path, sizeof path, "%s/corrupt/array.json", tmpdir);
    write_text(path, "[1, 2, 3]", 9);
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "a JSON array");

    /* Valid JSON, each required field removed in turn. */
    const char *fields[] = {"\"kernel\"", "\"device\"", "\"problem_key\"", "\"date\"",
                            "\"library_version\"", "\"candidates\"", "\"winner\"", "\"median_us\"",
                            "\"block_m\"", "\"ok\"", "\"error\""};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char *copy = strdup(text);
        char *at = strstr(copy, fields[i]);
        CHECK(at != NULL, "field %s not in the stored file", fields[i]);
        if (!at) {
            free(copy);
            continue;
        }
        at[1] = 'X';   /* "kernel" -> "Xernel": still valid JSON, the field is gone */
        snprintf(path, sizeof path, "%s/corrupt/missing_%zu.json", tmpdir, i);
        write_text(path, copy, strlen(copy));
        char what[80];
        snprintf(what, sizeof what, "missing field %s", fields[i]);
        expect_refused(path, "flash_mla_v0", &pb, "corrupt", what);
        free(copy);
    }

    /* A field of the wrong type, and a winner that points nowhere. */
    snprintf(path, sizeof path, "%s/corrupt/types.json", tmpdir);
    const char *wrong = "{\"kernel\":\"flash_mla_v0\",\"device\":\"x\",\"problem_key\":\"k\","
                        "\"date\":\"d\",\"library_version\":\"v\",\"candidates\":{},\"winner\":0}";
    write_text(path, wrong, strlen(wrong));
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "candidates not an array");
    res.winner = 2;   /* the failed one */
    snprintf(path, sizeof path, "%s/corrupt/badwinner.json", tmpdir);
    CHECK(mla_tune_cache_store_problem(path, &res, &pb) == MLA_STATUS_OK, "store: %s", mla_last_error());
    expect_refused(path, "flash_mla_v0", &pb, "corrupt", "winner not timed");
    free(text);
}

static void test_stale_and_absent(void)
{
    mla_problem pb = mla_problem_ex();
    mla_tune_result res;
    char path[512];

    make_result(&res, &pb);
    snprintf(res.library_version, sizeof res.library_version, "0.0.0-old");
    snprintf(path, sizeof path, "%s/stale/version.json", tmpdir);
    CHECK(mla_tune_cache_store_problem(path, &res, &pb) == MLA_STATUS_OK, "store: %s", mla_last_error());
    expect_refused(path, "flash_mla_v0", &pb, "stale", "stale library version");

    make_result(&res, &pb);
    snprintf(path, sizeof path, "%s/stale/kernel.json", tmpdir);
    CHECK(mla_tune_cache_store_problem(path, &res, &pb) == MLA_STATUS_OK, "store: %s", mla_last_error());
    expect_refused(path, "flash_mla_v1", &pb, "stale", "stale kernel");

    mla_problem other = pb;
    other.b = 64;
    expect_refused(path, "flash_mla_v0", &other, "stale", "stale problem key");
    other = pb;
    other.s = 1;
    expect_refused(path, "flash_mla_v0", &other, "stale", "stale problem key (s)");

    /* Same key, but the problem object disagrees (a hand-edited or colliding key). */
    snprintf(path, sizeof path, "%s/stale/object.json", tmpdir);
    mla_problem skewed = pb;
    skewed.scale = pb.scale * 0.5f;
    CHECK(mla_tune_cache_store_problem(path, &res, &skewed) == MLA_STATUS_OK, "store: %s", mla_last_error());
    expect_refused(path, "flash_mla_v0", &pb, "stale", "stale problem object");

    snprintf(path, sizeof path, "%s/stale/does_not_exist.json", tmpdir);
    expect_refused(path, "flash_mla_v0", &pb, "", "absent file");
    snprintf(path, sizeof path, "%s/no/such/dir/x.json", tmpdir);
    expect_refused(path, "flash_mla_v0", &pb, "", "absent directory");
}

static void test_paths(void)
{
    mla_problem pb = mla_problem_ex();
    mla_device_info dev;
    char path[1024], want[1024], key[160];
    mla_problem_key(&pb, key, sizeof key);

    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "NVIDIA H200");
    snprintf(dev.key, sizeof dev.key, "h200");
    mla_tune_cache_path("/c", &dev, "flash_mla_v0", &pb, path, sizeof path);
    snprintf(want, sizeof want, "/c/h200/flash_mla_v0/%s.json", key);
    CHECK(strcmp(path, want) == 0, "path with key: %s, want %s", path, want);

    dev.key[0] = '\0';
    mla_tune_cache_path("/c", &dev, "flash_mla_v0", &pb, path, sizeof path);
    snprintf(want, sizeof want, "/c/nvidia_h200/flash_mla_v0/%s.json", key);
    CHECK(strcmp(path, want) == 0, "path by name: %s, want %s", path, want);

    snprintf(dev.name, sizeof dev.name, "NVIDIA GeForce RTX 4090 (Laptop)/../x");
    mla_tune_cache_path("/c", &dev, "flash_mla_v0", &pb, path, sizeof path);
    snprintf(want, sizeof want, "/c/nvidia_geforce_rtx_4090_laptop_x/flash_mla_v0/%s.json", key);
    CHECK(strcmp(path, want) == 0, "sanitized name: %s, want %s", path, want);

    const struct { const char *in, *out; } names[] = {
        {"NVIDIA H200", "nvidia_h200"}, {"A100-SXM4-80GB", "a100-sxm4-80gb"},
        {"  weird//name..", "weird_name"}, {"", "unknown"}, {"///", "unknown"},
        {"Tesla_V100", "tesla_v100"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char out[64];
        mla_sanitize_name(names[i].in, out, sizeof out);
        CHECK(strcmp(out, names[i].out) == 0, "sanitize '%s' -> '%s', want '%s'", names[i].in, out,
              names[i].out);
        for (const char *p = out; *p; p++)
            CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-',
                  "sanitized '%s' has '%c'", out, *p);
    }

    /* Default directory: the environment variable, else .cache/kernel-autotune. */
    setenv("MLA_VAR3_CACHE_DIR", "/tmp/somewhere", 1);
    CHECK(strcmp(mla_tune_cache_default_dir(), "/tmp/somewhere") == 0, "env dir: %s",
          mla_tune_cache_default_dir());
    mla_tune_cache_path(NULL, &dev, "k", &pb, path, sizeof path);
    CHECK(strncmp(path, "/tmp/somewhere/", 15) == 0, "NULL dir uses the default: %s", path);
    unsetenv("MLA_VAR3_CACHE_DIR");
    CHECK(strcmp(mla_tune_cache_default_dir(), ".cache/kernel-autotune") == 0, "default dir: %s",
          mla_tune_cache_default_dir());
}

static void test_problem_keys(void)
{
    mla_problem base[3];
    mla_problem_init(&base[0], MLA_DESIGN_FLASH_ATTENTION);
    mla_problem_init(&base[1], MLA_DESIGN_FLASH_MLA);
    mla_problem_init(&base[2], MLA_DESIGN_MLA_VAR6_PLUS);
    base[2].n = 128;
    enum { MAXP = 40 };
    mla_problem all[MAXP];
    int np = 0;
    for (int d = 0; d < 3; d++) {
        mla_problem p = base[d];
        all[np++] = p;
        p = base[d]; p.b = 64; all[np++] = p;
        p = base[d]; p.s = 16; all[np++] = p;
        p = base[d]; p.t = 8192; all[np++] = p;
        p = base[d]; p.h = 16; all[np++] = p;
        p = base[d]; p.causal = 0; all[np++] = p;
    }
    mla_problem p = base[2];
    p.n = 256;
    all[np++] = p;
    char keys[MAXP][160];
    for (int i = 0; i < np; i++) {
        mla_problem_key(&all[i], keys[i], sizeof keys[i]);
        CHECK(keys[i][0] != '\0' && strchr(keys[i], '/') == NULL, "key '%s' of problem %d", keys[i], i);
    }
    /* Flash attention and flash_mla default problems differ only in the design: the key must
     * still differ (the path has the kernel name too, but the file must stand alone). */
    for (int i = 0; i < np; i++)
        for (int j = i + 1; j < np; j++)
            CHECK(strcmp(keys[i], keys[j]) != 0, "problems %d and %d share the key %s", i, j, keys[i]);
    char again[160];
    mla_problem_key(&all[3], again, sizeof again);
    CHECK(strcmp(again, keys[3]) == 0, "key not deterministic: %s vs %s", again, keys[3]);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mla_tune_cache_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("mkdtemp failed\n");
        return 1;
    }
    test_round_trip();
    test_corrupt();
    test_stale_and_absent();
    test_paths();
    test_problem_keys();

    if (failed == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            printf("note: could not remove %s\n", tmpdir);
    } else {
        printf("files kept in %s\n", tmpdir);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
