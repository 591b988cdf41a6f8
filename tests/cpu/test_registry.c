/*
 * The registry and tilings without a GPU: tiling text <-> struct round trips, bad keys/values are
 * rejected naming them, mla_check_stage_resources gives the right reasons on made-up kernels and
 * devices, mla_validate_tiling's order of checks, and every linked registry entry is well formed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "registry.h"
#include "error.h"

#include "check.h"

static int same_tiling(const mla_tiling *a, const mla_tiling *b)
{
    return a->block_m == b->block_m && a->block_n == b->block_n && a->warps == b->warps &&
           a->stages == b->stages && a->splits == b->splits;
}

static void test_tiling(void)
{
    mla_tiling t = {64, 32, 8, 2, 0}, u, keep;
    char buf[128];
    mla_tiling_format(&t, buf, sizeof buf);
    CHECK(strcmp(buf, "block_m=64,block_n=32,warps=8,stages=2,splits=0") == 0, "format: %s", buf);
    memset(&u, 0x7f, sizeof u);
    CHECK(mla_tiling_parse(buf, &u) == MLA_STATUS_OK && same_tiling(&t, &u), "round trip of %s: %s", buf,
          mla_last_error());

    /* Partial override keeps the other fields. */
    u = t;
    CHECK(mla_tiling_parse("block_m=16, splits=8", &u) == MLA_STATUS_OK, "partial: %s", mla_last_error());
    CHECK(u.block_m == 16 && u.splits == 8 && u.block_n == 32 && u.warps == 8 && u.stages == 2, "partial result");
    CHECK(mla_tiling_parse("", &u) == MLA_STATUS_OK && u.block_m == 16, "empty text changes nothing");

    /* Field accessors. */
    for (int i = 0; i < MLA_TILING_NUM_FIELDS; i++) {
        int *f = mla_tiling_field(&u, i);
        CHECK(f != NULL, "field %d", i);
        char one[64];
        snprintf(one, sizeof one, "%s=%d", mla_tiling_field_names[i], 100 + i);
        CHECK(mla_tiling_parse(one, &u) == MLA_STATUS_OK && f && *f == 100 + i, "%s", one);
    }
    CHECK(mla_tiling_field(&u, MLA_TILING_NUM_FIELDS) == NULL && mla_tiling_field(&u, -1) == NULL,
          "out-of-range field");

    /* Rejections name the culprit and leave the tiling as it was. */
    static const struct { const char *text, *name; } bad[] = {
        {"blockm=64", "blockm"},     {"block_m=abc", "abc"},         {"warps=-2", "-2"},
        {"stages=", "stages"},       {"block_n=64x", "64x"},         {"splits", "splits"},
        {"block_m=64,bogus=1", "bogus"}, {"warps=99999999999", "99999999999"}, {"block_m=1.5", "1.5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        u = t;
        keep = t;
        mla_clear_error();
        mla_status st = mla_tiling_parse(bad[i].text, &u);
        CHECK(st == MLA_STATUS_INVALID_ARGUMENT, "\"%s\" gave %s", bad[i].text, mla_status_name(st));
        CHECK(strstr(mla_last_error(), bad[i].name) != NULL, "\"%s\": message \"%s\" does not name \"%s\"",
              bad[i].text, mla_last_error(), bad[i].name);
        CHECK(same_tiling(&u, &keep), "\"%s\" modified the tiling", bad[i].text);
    }
    CHECK(mla_tiling_parse(NULL, &u) == MLA_STATUS_INVALID_ARGUMENT, "NULL text");
}

/* A synthetic sm_90-like device, so that these checks do not depend on devices.json. */
static mla_device_info fake_hopper(void)
{
    mla_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "fake sm_90");
    d.cc_major = 9;
    d.sm_count = 132;
    d.smem_per_block_optin = 227 * 1024;
    d.smem_per_sm = 228 * 1024;
    d.regs_per_sm = 65536;
    d.regs_per_block = 65536;
    d.max_threads_per_sm = 2048;
    d.max_threads_per_block = 1024;
    d.max_blocks_per_sm = 32;
    return d;
}

static mla_stage_config cfg_of(unsigned threads, size_t smem)
{
    mla_stage_config c;
    memset(&c, 0, sizeof c);
    c.grid[0] = 132;
    c.grid[1] = c.grid[2] = 1;
    c.block[0] = threads;
    c.block[1] = c.block[2] = 1;
    c.smem_dynamic = smem;
    return c;
}

static void test_resources(void)
{
    mla_device_info h = fake_hopper();
    mla_func_attrs a = {.num_regs = 128, .smem_static = 0, .local_bytes = 0, .max_threads_per_block = 1024};
    char why[256];

    mla_stage_config c = cfg_of(256, 100 * 1024);
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 1, "fitting config: %s", why);
    CHECK(why[0] == '\0', "a pass leaves no reason: %s", why);

    /* Spills are slow, not wrong. */
    a.local_bytes = 64;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 1, "local bytes rejected: %s", why);
    a.local_bytes = 0;

    /* Shared memory over the opt-in limit, counting static smem too. */
    c = cfg_of(256, 240 * 1024);
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0, "240 KB accepted");
    CHECK(strstr(why, "smem") && strstr(why, "opt-in") && strstr(why, "240 KB") && strstr(why, "227 KB") &&
              strstr(why, "main"),
          "reason: %s", why);
    printf("  smem:    %s\n", why);
    c = cfg_of(256, 226 * 1024);
    a.smem_static = 2048;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0, "static + dynamic over opt-in");
    a.smem_static = 0;
    c = cfg_of(256, 227 * 1024);
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 1, "exactly opt-in: %s", why);

    /* Registers: 255 x 512 exceeds the 64K register file. */
    c = cfg_of(512, 0);
    a.num_regs = 255;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0, "255 regs x 512 accepted");
    CHECK(strstr(why, "255 regs") && strstr(why, "512 threads") && strstr(why, "65536"), "reason: %s", why);
    printf("  regs:    %s\n", why);
    a.num_regs = 128;   /* 128 x 512 = 65536: exactly fits */
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 1, "128 x 512: %s", why);
    /* Allocation granularity: 113 regs x 576 threads = 65088 fits the raw count, but registers
     * go out per warp in units of 256 (3616 -> 3840), and 18 warps x 3840 = 69120 > 65536. */
    c = cfg_of(576, 0);
    a.num_regs = 113;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0 && strstr(why, "per SM"),
          "granularity: %s", why);
    printf("  alloc:   %s\n", why);

    /* Threads: over the device limit, and over what the compiled kernel allows. */
    a.num_regs = 32;
    c = cfg_of(2048, 0);
    CHECK(mla_check_stage_resources("combine", &c, &a, &h, why, sizeof why) == 0, "2048 threads accepted");
    CHECK(strstr(why, "threads") && strstr(why, "2048") && strstr(why, "combine"), "reason: %s", why);
    printf("  threads: %s\n", why);
    c = cfg_of(1024, 0);
    a.max_threads_per_block = 512;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0, "over attrs max threads");
    CHECK(strstr(why, "compiled kernel") != NULL, "reason: %s", why);
    a.max_threads_per_block = 1024;
    c = cfg_of(128, 0);
    c.block[1] = 4;
    c.block[2] = 4;   /* 2048 threads as 128 x 4 x 4 */
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0, "3-D block over limit");

    /* Empty / impossible grids. */
    c = cfg_of(128, 0);
    c.grid[0] = 0;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0 && why[0], "empty grid");
    c = cfg_of(128, 0);
    c.grid[1] = 70000;
    CHECK(mla_check_stage_resources("main", &c, &a, &h, why, sizeof why) == 0 && why[0], "grid.y > 65535");

    /* Without attrs, dynamic smem alone is checked. */
    c = cfg_of(128, 300 * 1024);
    CHECK(mla_check_stage_resources("main", &c, NULL, &h, why, sizeof why) == 0, "NULL attrs, 300 KB");
    /* NULL why is allowed. */
    CHECK(mla_check_stage_resources("main", &c, NULL, &h, NULL, 0) == 0, "NULL why");

    /* The same 200 KB stage fits an H200 but not an A100 (163 KB) or L40S (99 KB) from the table. */
    mla_device_info d;
    c = cfg_of(256, 200 * 1024);
    a.num_regs = 96;
    if (mla_device_from_table("h200", &d) == MLA_STATUS_OK) {
        CHECK(mla_check_stage_resources("main", &c, &a, &d, why, sizeof why) == 1, "h200 200 KB: %s", why);
    } else {
        CHECK(0, "h200 from table: %s", mla_last_error());
    }
    if (mla_device_from_table("a100", &d) == MLA_STATUS_OK) {
        CHECK(mla_check_stage_resources("main", &c, &a, &d, why, sizeof why) == 0 && strstr(why, "163 KB"),
              "a100 200 KB: %s", why);
    } else {
        CHECK(0, "a100 from table: %s", mla_last_error());
    }
    if (mla_device_from_table("l40s", &d) == MLA_STATUS_OK) {
        CHECK(mla_check_stage_resources("main", &c, &a, &d, why, sizeof why) == 0 && strstr(why, "99 KB"),
              "l40s 200 KB: %s", why);
    } else {
        CHECK(0, "l40s from table: %s", mla_last_error());
    }
}

/* A made-up two-stage kernel to exercise mla_validate_tiling's order of checks. */
static int fk_validate(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, char *why,
                       size_t len)
{
    if (t->block_m % 16) {
        snprintf(why, len, "block_m %d is not a multiple of 16", t->block_m);
        return 0;
    }
    return 1;
}
static int fk_stage_config(const mla_tiling *t, const mla_problem *pb, const mla_device_info *dev, int stage,
                           mla_stage_config *cfg)
{
    if (stage == 1 && t->splits <= 1) return 0;   /* no combine without splits */
    *cfg = cfg_of(stage == 0 ? (unsigned)t->warps * 32 : 128, stage == 0 ? (size_t)t->block_n * 1024 : 0);
    cfg->func = (const void *)fk_validate;          /* never called: the device is fake */
    return 1;
}
static const mla_tiling fk_cands[] = {{64, 64, 8, 2, 0}};
static const mla_kernel_version fake_kv = {
    .name = "fake_v0", .design = MLA_DESIGN_FLASH_MLA, .version = 0, .tier = MLA_TIER_PORTABLE,
    .target = MLA_TARGET_SM80_PLUS, .note = "test", .num_stages = 2, .stage_names = {"main", "combine"},
    .num_candidates = 1, .candidates = fk_cands, .validate = fk_validate, .stage_config = fk_stage_config,
};

static void test_validate(void)
{
    mla_device_info h = fake_hopper();
    mla_problem pb;
    memset(&pb, 0, sizeof pb);
    mla_func_attrs a = {.num_regs = 128, .max_threads_per_block = 1024};
    char why[256];
    mla_tiling t = fk_cands[0];
    CHECK(mla_validate_tiling(&fake_kv, &t, &pb, &h, &a, why, sizeof why) == 1, "default: %s", why);
    t.block_m = 24;
    CHECK(mla_validate_tiling(&fake_kv, &t, &pb, &h, &a, why, sizeof why) == 0 && strstr(why, "multiple of 16"),
          "kernel rule: %s", why);
    t = fk_cands[0];
    t.block_n = 240;   /* 240 KB */
    CHECK(mla_validate_tiling(&fake_kv, &t, &pb, &h, &a, why, sizeof why) == 0 && strstr(why, "opt-in") &&
              strstr(why, "main"),
          "smem: %s", why);
    /* No attrs on a fake device: the resource step is skipped. */
    CHECK(mla_validate_tiling(&fake_kv, &t, &pb, &h, NULL, why, sizeof why) == 1, "skip w/o attrs: %s", why);
    t = fk_cands[0];
    t.warps = 16;      /* 512 threads x 255 regs */
    a.num_regs = 255;
    CHECK(mla_validate_tiling(&fake_kv, &t, &pb, &h, &a, why, sizeof why) == 0 && strstr(why, "regs"),
          "regs: %s", why);
}

static void test_table(void)
{
    int n = mla_registry_count();
    printf("registry: %d version(s) linked\n", n);
    CHECK(mla_registry_get(-1) == NULL && mla_registry_get(n) == NULL, "get out of range");
    CHECK(mla_registry_find("no_such_kernel_v9") == NULL && mla_registry_find(NULL) == NULL, "find unknown");
    for (int i = 0; i < n; i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        CHECK(kv != NULL, "entry %d is NULL", i);
        if (!kv) continue;
        CHECK(kv->name != NULL, "entry %d has no name", i);
        if (!kv->name) continue;
        printf("  %-24s %-9s %-8s %s\n", kv->name, mla_tier_name(kv->tier), mla_target_name(kv->target),
               kv->note ? kv->note : "");
        char want[96];
        snprintf(want, sizeof want, "%s_v%d", mla_design_name(kv->design), kv->version);
        CHECK(strcmp(kv->name, want) == 0, "name %s, expected %s", kv->name, want);
        CHECK(mla_registry_find(kv->name) == kv, "find(%s)", kv->name);
        for (int j = 0; j < i; j++) {
            const mla_kernel_version *o = mla_registry_get(j);
            CHECK(!o || !o->name || strcmp(o->name, kv->name) != 0, "duplicate name %s", kv->name);
            CHECK(!o || o->design != kv->design || o->version != kv->version, "duplicate %s version %d",
                  mla_design_name(kv->design), kv->version);
        }
        CHECK(kv->num_stages >= 1 && kv->num_stages <= MLA_MAX_STAGES, "%s: %d stages", kv->name, kv->num_stages);
        for (int s = 0; s < kv->num_stages && s < MLA_MAX_STAGES; s++)
            CHECK(kv->stage_names[s] && kv->stage_names[s][0], "%s: stage %d unnamed", kv->name, s);
        CHECK(kv->num_candidates >= 1 && kv->num_candidates <= MLA_MAX_CANDIDATES && kv->candidates,
              "%s: %d candidates", kv->name, kv->num_candidates);
        CHECK(kv->validate && kv->stage_config && kv->workspace_bytes && kv->prepare && kv->launch,
              "%s: a function pointer is NULL", kv->name);
        CHECK(kv->tier == MLA_TIER_PORTABLE ? kv->target == MLA_TARGET_SM80_PLUS : kv->target != MLA_TARGET_SM80_PLUS,
              "%s: tier %s with target %s", kv->name, mla_tier_name(kv->tier), mla_target_name(kv->target));
        CHECK(kv->note && kv->note[0], "%s: no note", kv->name);
        /* The default candidate must pass the kernel's own rules on DeepSeek-V3's default shape on
         * an H200 from the table (resources as compiled need a GPU: skipped here). */
        mla_problem pb;
        mla_device_info h200;
        if (mla_problem_init(&pb, kv->design) == MLA_STATUS_OK &&
            mla_device_from_table("h200", &h200) == MLA_STATUS_OK && kv->candidates && kv->validate) {
            char why[256] = "";
            CHECK(mla_validate_tiling(kv, &kv->candidates[0], &pb, &h200, NULL, why, sizeof why) == 1,
                  "%s: default candidate rejected on the default problem: %s", kv->name, why);
        }
    }
}

/* The hopper flash_mla versions' split planners must see the shared memory of the kernel that
 * runs. At the headline decode shape (b=32, s=1, h=128: 64 row blocks of one CTA per SM) the
 * plan must fill an H200 in one wave: enough splits to reach ~all SMs, not more CTAs than fit at
 * once. flash_mla_v11's first cut left its main kernel's shared memory out of the planner's view
 * (0 bytes: "228 CTAs per SM") and planned 16 splits, 1024 CTAs and a combine 8x larger. The main
 * stage is the one with the most dynamic shared memory. */
static void test_fill(void)
{
    mla_device_info h200;
    mla_problem pb;
    if (mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "h200 / problem init: %s", mla_last_error());
        return;
    }
    pb.b = 32, pb.s = 1, pb.h = 128, pb.t = 4096;
    int n = 0;
    for (int i = 0; i < mla_registry_count(); i++) {
        const mla_kernel_version *kv = mla_registry_get(i);
        if (!kv || kv->design != MLA_DESIGN_FLASH_MLA || kv->tier != MLA_TIER_HOPPER) continue;
        char why[256] = "";
        if (!kv->validate(&kv->candidates[0], &pb, &h200, why, sizeof why)) continue;
        size_t best = 0;
        unsigned long long ctas = 0;
        for (int st = 0; st < kv->num_stages; st++) {
            mla_stage_config c;
            memset(&c, 0, sizeof c);
            if (!kv->stage_config(&kv->candidates[0], &pb, &h200, st, &c) || c.smem_dynamic < best) continue;
            best = c.smem_dynamic;
            ctas = (unsigned long long)c.grid[0] * c.grid[1] * c.grid[2];
        }
        const unsigned long long per_sm = best ? h200.smem_per_sm / (best + 1024) : 0;
        CHECK(best > 0 && ctas * 100 >= 95ull * (unsigned)h200.sm_count && ctas <= per_sm * h200.sm_count,
              "%s: main stage %llu CTAs (%zu B of shared memory each, %llu per SM) on %d SMs at b=32,s=1,h=128",
              kv->name, ctas, best, per_sm, h200.sm_count);
        n++;
    }
    printf("fill: %d hopper flash_mla version(s) checked at b=32,s=1,h=128,t=4096\n", n);
    CHECK(n > 0, "no hopper flash_mla version checked");
}

/* flash_mla_v12 merges two splits in the main kernel's cluster: at b=32,s=1 (two splits) no
 * combine stage and no workspace; with four splits the workspace and the combine come back. */
static void test_cmerge(void)
{
    const mla_kernel_version *kv = mla_registry_find("flash_mla_v12");
    mla_device_info h200;
    mla_problem pb;
    if (!kv || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v12 / h200 / problem init: %s", mla_last_error());
        return;
    }
    pb.b = 32, pb.s = 1, pb.h = 128, pb.t = 4096;
    const int want[3] = {0, 2, 4};
    for (int i = 0; i < 3; i++) {
        mla_tiling t = kv->candidates[0];
        t.splits = want[i];
        char why[256] = "";
        CHECK(kv->validate(&t, &pb, &h200, why, sizeof why), "v12 splits=%d refused: %s", want[i], why);
        mla_stage_config c0, c1;
        memset(&c0, 0, sizeof c0);
        memset(&c1, 0, sizeof c1);
        const int has0 = kv->stage_config(&t, &pb, &h200, 0, &c0), has1 = kv->stage_config(&t, &pb, &h200, 1, &c1);
        const size_t ws = kv->workspace_bytes(&t, &pb, &h200);
        const int merged = want[i] != 4;  /* auto plans two splits here */
        CHECK(has0 && c0.grid[1] == (unsigned)(want[i] ? want[i] : 2), "v12 splits=%d: main grid y %u", want[i],
              c0.grid[1]);
        CHECK(merged ? !has1 && ws == 0 : has1 && ws > 0, "v12 splits=%d: combine stage %d, workspace %zu B",
              want[i], has1, ws);
    }
}

/* flash_mla_v47 walks (one CTA an SM, grid x = 132 on an H200) only the one-split plans with more
 * row blocks than SMs and at most four a CTA; the others keep v41's static grid (row blocks,
 * splits, b). flash_mla_v42 (no limit) walks every one-split plan. */
static void test_walk_max(void)
{
    const mla_kernel_version *v47 = mla_registry_find("flash_mla_v47"), *v42 = mla_registry_find("flash_mla_v42");
    mla_device_info h200;
    mla_problem pb;
    if (!v47 || !v42 || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v47 / v42 / h200 / problem init: %s", mla_last_error());
        return;
    }
    /* b, s, h, t; the main grid v47 must plan */
    const int cases[][7] = {{32, 2, 128, 4096, 4, 1, 32},  {32, 4, 128, 4096, 132, 1, 1},
                            {32, 8, 128, 4096, 132, 1, 1}, {32, 16, 128, 4096, 32, 1, 32},
                            {128, 1, 128, 4096, 132, 1, 1}, {128, 2, 128, 8192, 132, 1, 1},
                            {64, 16, 128, 4096, 32, 1, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int *k = cases[i];
        pb.b = k[0], pb.s = k[1], pb.h = k[2], pb.t = k[3];
        char why[256] = "";
        mla_stage_config c;
        memset(&c, 0, sizeof c);
        const int ok = v47->validate(&v47->candidates[0], &pb, &h200, why, sizeof why) &&
                       v47->stage_config(&v47->candidates[0], &pb, &h200, 0, &c);
        CHECK(ok && c.grid[0] == (unsigned)k[4] && c.grid[1] == (unsigned)k[5] && c.grid[2] == (unsigned)k[6],
              "v47 b=%d s=%d h=%d t=%d: main grid %ux%ux%u, want %dx%dx%d (%s)", k[0], k[1], k[2], k[3], c.grid[0],
              c.grid[1], c.grid[2], k[4], k[5], k[6], why);
    }
    pb.b = 32, pb.s = 16, pb.h = 128, pb.t = 4096;
    mla_stage_config c;
    memset(&c, 0, sizeof c);
    CHECK(v42->stage_config(&v42->candidates[0], &pb, &h200, 0, &c) && c.grid[0] == 132 && c.grid[2] == 1,
          "v42 b=32 s=16: main grid %ux%ux%u, want the walk's 132x1x1", c.grid[0], c.grid[1], c.grid[2]);
}

/* flash_mla_v56 runs the FlashMLA-schedule pair (its own static-grid and walk kernels, more shared
 * memory) for one-split plans where s * h > 128 and v47's kernels elsewhere, on v47's grids. */
static void test_pair_rule(void)
{
    const mla_kernel_version *v56 = mla_registry_find("flash_mla_v56"), *v47 = mla_registry_find("flash_mla_v47");
    mla_device_info h200;
    mla_problem pb;
    if (!v56 || !v47 || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v56 / v47 / h200 / problem init: %s", mla_last_error());
        return;
    }
    /* b, s, h, t: static s*h <= 128, static pair, walk s*h <= 128, walk pair, h=16 static, split plan */
    const int cases[][4] = {{64, 1, 128, 4096}, {32, 2, 128, 4096}, {128, 1, 128, 4096},
                            {32, 4, 128, 4096}, {128, 1, 16, 8192}, {32, 1, 128, 4096}};
    mla_stage_config c[6], w[6];
    for (int i = 0; i < 6; i++) {
        pb.b = cases[i][0], pb.s = cases[i][1], pb.h = cases[i][2], pb.t = cases[i][3];
        char why[256] = "";
        memset(&c[i], 0, sizeof c[i]);
        memset(&w[i], 0, sizeof w[i]);
        const int ok = v56->validate(&v56->candidates[0], &pb, &h200, why, sizeof why) &&
                       v56->stage_config(&v56->candidates[0], &pb, &h200, 0, &c[i]) &&
                       v47->stage_config(&v47->candidates[0], &pb, &h200, 0, &w[i]);
        CHECK(ok && memcmp(c[i].grid, w[i].grid, sizeof c[i].grid) == 0 && c[i].func,
              "v56 b=%d s=%d h=%d: grid %ux%ux%u, v47's %ux%ux%u (%s)", pb.b, pb.s, pb.h, c[i].grid[0], c[i].grid[1],
              c[i].grid[2], w[i].grid[0], w[i].grid[1], w[i].grid[2], why);
    }
    /* four one-split kernels: seesaw static (0, 4), pair static (1), seesaw walk (2), pair walk (3) */
    CHECK(c[0].func == c[4].func && c[0].func != c[1].func && c[2].func != c[3].func && c[1].func != c[3].func &&
              c[0].func != c[2].func && c[5].func != c[0].func && c[5].func != c[1].func,
          "v56: the pair where s*h > 128, v47's kernels elsewhere");
    CHECK(c[1].smem_dynamic > c[0].smem_dynamic && c[3].smem_dynamic == c[1].smem_dynamic &&
              c[0].smem_dynamic == w[0].smem_dynamic,
          "v56: the pair's shared memory %zu, v47's kernels' %zu", c[1].smem_dynamic, c[0].smem_dynamic);
}

/* flash_mla_v61-v66, v68, v97 and v99 change only how v56's kernels load (an L2 policy hint; v64-v66,
 * v68: the walk's next Q earlier; v68: no hint where a page feeds one row block; v97, v99: the static
 * grid's Q and first block-table entries beside the request's length) and wait (v63, v65, v66, v68: mbarrier waits with a suspend-time hint): the same plans,
 * grids and shared memory as v56 on every plan kind, kernels of their own (no two of the versions
 * share a kernel), and v99 (the default from the forty-third session) is the version the registry
 * picks for sm_90. */
static void test_evict_rule(void)
{
    const char *names[] = {"flash_mla_v61", "flash_mla_v62", "flash_mla_v63", "flash_mla_v64",
                           "flash_mla_v65", "flash_mla_v66", "flash_mla_v68", "flash_mla_v97",
                           "flash_mla_v99"};
    const char *default_name = "flash_mla_v99";
    enum { NV = sizeof names / sizeof names[0] };
    const mla_kernel_version *v56 = mla_registry_find("flash_mla_v56"), *vs[NV];
    for (int k = 0; k < NV; k++) {
        vs[k] = mla_registry_find(names[k]);
        CHECK(vs[k] != NULL, "%s is not registered", names[k]);
        if (!vs[k]) return;
    }
    mla_device_info h200;
    mla_problem pb;
    if (!v56 || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v56 / h200 / problem init: %s", mla_last_error());
        return;
    }
    char why[256] = "";
    const mla_kernel_version *def = mla_registry_default(MLA_DESIGN_FLASH_MLA, 9, 0, why, sizeof why);
    CHECK(def && strcmp(def->name, default_name) == 0, "the sm_90 default flash_mla version is %s, not %s (%s)",
          def ? def->name : "none", default_name, why);
    /* b, s, h, t: static s*h <= 128, static pair, walk s*h <= 128, walk pair, h=16 static, split plan */
    const int cases[][4] = {{64, 1, 128, 4096}, {32, 2, 128, 4096}, {128, 1, 128, 4096},
                            {32, 4, 128, 4096}, {128, 1, 16, 8192}, {32, 1, 128, 4096}};
    for (int i = 0; i < 6; i++) {
        pb.b = cases[i][0], pb.s = cases[i][1], pb.h = cases[i][2], pb.t = cases[i][3];
        mla_stage_config w, c[NV];
        memset(&w, 0, sizeof w);
        why[0] = 0;
        const int okw = v56->stage_config(&v56->candidates[0], &pb, &h200, 0, &w);
        CHECK(okw, "v56 b=%d s=%d h=%d: no stage config (%s)", pb.b, pb.s, pb.h, mla_last_error());
        for (int k = 0; k < NV; k++) {
            memset(&c[k], 0, sizeof c[k]);
            const int ok = vs[k]->validate(&vs[k]->candidates[0], &pb, &h200, why, sizeof why) &&
                           vs[k]->stage_config(&vs[k]->candidates[0], &pb, &h200, 0, &c[k]);
            int shared = c[k].func == w.func;
            for (int q = 0; q < k; q++) shared |= c[k].func == c[q].func;
            CHECK(okw && ok && memcmp(c[k].grid, w.grid, sizeof w.grid) == 0 && c[k].smem_dynamic == w.smem_dynamic &&
                      c[k].func && !shared,
                  "%s b=%d s=%d h=%d: grid %ux%ux%u smem %zu, v56's %ux%ux%u smem %zu, own kernel %d (%s)", names[k],
                  pb.b, pb.s, pb.h, c[k].grid[0], c[k].grid[1], c[k].grid[2], c[k].smem_dynamic, w.grid[0], w.grid[1],
                  w.grid[2], w.smem_dynamic, !shared, why);
        }
    }
}

/* flash_mla_v68 is v65 with a second kernel set picked by the host where a page feeds one row block
 * (s * h <= 64): there its kernels are not the ones it runs for h = 128, and on every problem its
 * grids, shared memory and workspace are v65's. */
static void test_narrow_rule(void)
{
    const mla_kernel_version *v68 = mla_registry_find("flash_mla_v68"), *v65 = mla_registry_find("flash_mla_v65");
    mla_device_info h200;
    mla_problem pb;
    if (!v68 || !v65 || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v68 / v65 / h200 / problem init: %s", mla_last_error());
        return;
    }
    /* b, s, h, t, narrow: h=128 static, h=16 static, h=16 split (merge kernel), h=64 walk, h=32 at
     * s=2 (64 rows), h=16 at s=8 (128 rows: not narrow), h=128 walk */
    const int cases[][5] = {{64, 1, 128, 4096, 0}, {128, 1, 16, 8192, 1}, {16, 1, 16, 4096, 1}, {300, 1, 64, 2048, 1},
                            {40, 2, 32, 3000, 1},  {32, 8, 16, 4096, 0},  {128, 1, 128, 4096, 0}};
    enum { NC = sizeof cases / sizeof cases[0] };
    const void *wide[NC], *nar[NC];
    for (int i = 0; i < NC; i++) {
        pb.b = cases[i][0], pb.s = cases[i][1], pb.h = cases[i][2], pb.t = cases[i][3];
        mla_stage_config c, w;
        memset(&c, 0, sizeof c);
        memset(&w, 0, sizeof w);
        char why[256] = "";
        const int ok = v68->validate(&v68->candidates[0], &pb, &h200, why, sizeof why) &&
                       v68->stage_config(&v68->candidates[0], &pb, &h200, 0, &c) &&
                       v65->stage_config(&v65->candidates[0], &pb, &h200, 0, &w);
        CHECK(ok && c.func && memcmp(c.grid, w.grid, sizeof c.grid) == 0 && c.smem_dynamic == w.smem_dynamic &&
                  c.func != w.func &&
                  v68->workspace_bytes(&v68->candidates[0], &pb, &h200) ==
                      v65->workspace_bytes(&v65->candidates[0], &pb, &h200),
              "v68 b=%d s=%d h=%d: grid %ux%ux%u smem %zu, v65's %ux%ux%u smem %zu (%s)", pb.b, pb.s, pb.h, c.grid[0],
              c.grid[1], c.grid[2], c.smem_dynamic, w.grid[0], w.grid[1], w.grid[2], w.smem_dynamic, why);
        wide[i] = cases[i][4] ? NULL : c.func;
        nar[i] = cases[i][4] ? c.func : NULL;
    }
    /* the static-grid kernel of the narrow set is not the h=128 one; both are the same across their own problems */
    CHECK(nar[1] && wide[0] && nar[1] != wide[0], "v68: h=16 runs the h=128 static kernel");
    for (int i = 0; i < NC; i++)
        for (int j = 0; j < NC; j++)
            CHECK(!(nar[i] && wide[j] && nar[i] == wide[j]), "v68: case %d (narrow) and case %d share a kernel", i, j);
}

/* flash_mla_v57 runs FlashMLA's split (CTA = row block x, part y of SMs / row blocks parts) for the
 * auto tiling's one-split plans of 2-4 row blocks a request where the parts give the busiest SM
 * less work, and v56's kernels and grids everywhere else. */
static void test_parts_rule(void)
{
    const mla_kernel_version *v57 = mla_registry_find("flash_mla_v57"), *v56 = mla_registry_find("flash_mla_v56");
    mla_device_info h200;
    mla_problem pb;
    if (!v57 || !v56 || mla_device_from_table("h200", &h200) != MLA_STATUS_OK ||
        mla_problem_init(&pb, MLA_DESIGN_FLASH_MLA) != MLA_STATUS_OK) {
        CHECK(0, "flash_mla_v57 / v56 / h200 / problem init: %s", mla_last_error());
        return;
    }
    /* b, s, h, t, parts grid x, y (0: v56's grid) */
    const int cases[][6] = {{32, 2, 128, 4096, 4, 33},  {64, 1, 128, 4096, 2, 66}, {128, 1, 128, 4096, 2, 66},
                            {128, 2, 128, 8192, 4, 33}, {128, 1, 128, 8192, 2, 66}, {32, 4, 128, 4096, 0, 0},
                            {32, 1, 128, 4096, 0, 0},   {128, 1, 16, 8192, 0, 0},  {32, 16, 128, 4096, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int *k = cases[i];
        pb.b = k[0], pb.s = k[1], pb.h = k[2], pb.t = k[3];
        char why[256] = "";
        mla_stage_config c, w;
        memset(&c, 0, sizeof c);
        memset(&w, 0, sizeof w);
        const int ok = v57->validate(&v57->candidates[0], &pb, &h200, why, sizeof why) &&
                       v57->stage_config(&v57->candidates[0], &pb, &h200, 0, &c) &&
                       v56->stage_config(&v56->candidates[0], &pb, &h200, 0, &w);
        const size_t ws57 = v57->workspace_bytes(&v57->candidates[0], &pb, &h200);
        const size_t ws56 = v56->workspace_bytes(&v56->candidates[0], &pb, &h200);
        if (k[4])
            CHECK(ok && c.grid[0] == (unsigned)k[4] && c.grid[1] == (unsigned)k[5] && c.grid[2] == 1 && ws57 > ws56,
                  "v57 b=%d s=%d h=%d t=%d: parts grid %ux%ux%u, want %dx%dx1, workspace %zu (%s)", k[0], k[1], k[2],
                  k[3], c.grid[0], c.grid[1], c.grid[2], k[4], k[5], ws57, why);
        else
            CHECK(ok && memcmp(c.grid, w.grid, sizeof c.grid) == 0 && ws57 == ws56,
                  "v57 b=%d s=%d h=%d t=%d: grid %ux%ux%u, v56's %ux%ux%u (%s)", k[0], k[1], k[2], k[3], c.grid[0],
                  c.grid[1], c.grid[2], w.grid[0], w.grid[1], w.grid[2], why);
    }
}

static void test_names(void)
{
    mla_design d;
    for (int i = 0; i < 3; i++) {
        const char *nm = mla_design_name((mla_design)i);
        CHECK(mla_design_from_name(nm, &d) == 1 && (int)d == i, "design %d <-> %s", i, nm);
    }
    CHECK(strcmp(mla_design_name(MLA_DESIGN_FLASH_MLA), "flash_mla") == 0, "flash_mla name");
    CHECK(mla_design_from_name("flash_mla_v0", &d) == 0 && mla_design_from_name(NULL, &d) == 0, "bad design");
    CHECK(strcmp(mla_tier_name(MLA_TIER_PORTABLE), "portable") == 0 &&
              strcmp(mla_tier_name(MLA_TIER_HOPPER), "hopper") == 0,
          "tier names");
}

int main(void)
{
    test_names();
    test_tiling();
    test_resources();
    test_validate();
    test_table();
    test_fill();
    test_cmerge();
    test_walk_max();
    test_pair_rule();
    test_parts_rule();
    test_evict_rule();
    test_narrow_rule();
    if (failed) {
        printf("test_registry: %d check(s) failed\n", failed);
        return 1;
    }
    printf("test_registry: all checks passed\n");
    return 0;
}
