/*
 * `mla_var3 clone <design_vN> <vM>`: start kernel version M from version N. Copies
 * src/kernels/<tier>/mla/<design>/<design>_vN/ to <design>_vM/ with file names and identifiers
 * renamed (<design>_vN -> <design>_vM, which covers the __global__ names, their stage suffixes
 * and mla_kv_<design>_vN; `.version = N` becomes M), then prints the registry lines to add.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

/* Replace every `from` that is not followed by a digit (v1 must not rename v10). */
static char *replace_ident(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0, cap = strlen(s) + 1;
    for (const char *p = s; (p = strstr(p, from)); p += fl) cap += tl > fl ? tl - fl : 0;
    char *out = malloc(cap + 1);
    if (!out) return NULL;
    for (const char *p = s; *p;) {
        if (!strncmp(p, from, fl) && !(p[fl] >= '0' && p[fl] <= '9')) {
            memcpy(out + n, to, tl);
            n += tl;
            p += fl;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    return out;
}

/* ".version = N" (any spacing) -> M, so that the registration matches the new name. */
static void fix_version_field(char *s, int from, int to, int *changed)
{
    char *p = s;
    while ((p = strstr(p, ".version"))) {
        char *q = p + 8;
        while (*q == ' ' || *q == '\t') q++;
        if (*q != '=') { p = q; continue; }
        q++;
        while (*q == ' ' || *q == '\t') q++;
        char *end;
        long v = strtol(q, &end, 10);
        if (end != q && v == from) {
            char num[16];
            snprintf(num, sizeof num, "%d", to);
            size_t nl = strlen(num), ol = (size_t)(end - q);
            if (nl <= ol) {
                /* pad with spaces when the new number is shorter (v10 -> v9) */
                memcpy(q, num, nl);
                for (size_t i = nl; i < ol; i++) q[i] = ' ';
                (*changed)++;
            }
        }
        p = end;
    }
}

/* Positional registration `"<name>", MLA_DESIGN_X, N,` (the order of mla_kernel_version). */
static void fix_positional_version(char *s, const char *name, int from, int to, int *changed)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\"", name);
    for (char *p = s; (p = strstr(p, pat)); p++) {
        char *q = p + strlen(pat);
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        if (*q++ != ',') continue;
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        if (strncmp(q, "MLA_DESIGN_", 11)) continue;
        while (*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) q++;
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        if (*q++ != ',') continue;
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        char *end;
        long v = strtol(q, &end, 10);
        if (end == q || v != from) continue;
        char num[16];
        snprintf(num, sizeof num, "%d", to);
        size_t nl = strlen(num), ol = (size_t)(end - q);
        if (nl <= ol) {
            memcpy(q, num, nl);
            for (size_t i = nl; i < ol; i++) q[i] = ' ';
            (*changed)++;
        }
    }
}

static int copy_tree(const char *src, const char *dst, const char *from, const char *to, int vn, int vm,
                     int *files, int *versions_fixed)
{
    DIR *d = opendir(src);
    if (!d) return -1;
    if (cli_mkdir_p(dst)) { closedir(d); return -1; }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sp[4096], dp[4096];
        char *newname = replace_ident(e->d_name, from, to);
        snprintf(sp, sizeof sp, "%s/%s", src, e->d_name);
        snprintf(dp, sizeof dp, "%s/%s", dst, newname ? newname : e->d_name);
        free(newname);
        struct stat st;
        if (stat(sp, &st)) { rc = -1; break; }
        if (S_ISDIR(st.st_mode)) {
            rc = copy_tree(sp, dp, from, to, vn, vm, files, versions_fixed);
            continue;
        }
        char *text = cli_read_file(sp, NULL);
        if (!text) { rc = -1; break; }
        char *out = replace_ident(text, from, to);
        free(text);
        if (!out) { rc = -1; break; }
        int changed = 0;
        fix_version_field(out, vn, vm, &changed);
        fix_positional_version(out, to, vn, vm, &changed);
        *versions_fixed += changed;
        FILE *f = fopen(dp, "w");
        if (!f) { free(out); rc = -1; break; }
        fputs(out, f);
        fclose(f);
        free(out);
        printf("  %s -> %s\n", sp, dp);
        (*files)++;
    }
    closedir(d);
    return rc;
}

int cli_cmd_clone(int argc, char **argv)
{
    const char *root = ".", *src_name = NULL, *dst_arg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if ((v = cli_flag_value(argv[i], "root", &missing))) root = v;
        else if (missing) return cli_usage_error("%s: needs a value (--root=DIR)", argv[i]);
        else if (argv[i][0] == '-') return cli_usage_error("%s: unknown flag (see: mla_var3 clone --help)", argv[i]);
        else if (!src_name) src_name = argv[i];
        else if (!dst_arg) dst_arg = argv[i];
        else return cli_usage_error("%s: unexpected argument", argv[i]);
    }
    if (!src_name || !dst_arg) return cli_usage_error("clone: usage: mla_var3 clone <design_vN> <vM>");
    /* split <design>_vN */
    const char *us = strrchr(src_name, '_');
    mla_design design;
    char dname[64];
    if (!us || us[1] != 'v' || !us[2] || strspn(us + 2, "0123456789") != strlen(us + 2) ||
        (size_t)(us - src_name) >= sizeof dname)
        return cli_usage_error("%s: not a version name (expected e.g. flash_mla_v0)", src_name);
    memcpy(dname, src_name, (size_t)(us - src_name));
    dname[us - src_name] = '\0';
    if (!mla_design_from_name(dname, &design)) return cli_usage_error("%s: unknown design '%s'", src_name, dname);
    int vn = atoi(us + 2);
    char dst_name[96];
    int rc = cli_parse_version(design, dst_arg, dst_name, sizeof dst_name);
    if (rc) return rc;
    int vm = atoi(strrchr(dst_name, '_') + 2);
    char from[96];
    snprintf(from, sizeof from, "%s_v%d", dname, vn);
    if (vm == vn) return cli_usage_error("%s: same version as %s", dst_arg, from);
    /* find the tier folder holding the source */
    static const char *const tiers[] = {"portable", "hopper"};
    char src_dir[2048] = "", dst_dir[2048], probe[2048];
    struct stat st;
    for (int i = 0; i < 2; i++) {
        snprintf(probe, sizeof probe, "%s/src/kernels/%s/mla/%s/%s", root, tiers[i], dname, from);
        if (!stat(probe, &st) && S_ISDIR(st.st_mode)) snprintf(src_dir, sizeof src_dir, "%s", probe);
    }
    if (!src_dir[0])
        return cli_usage_error("%s: no folder src/kernels/{portable,hopper}/mla/%s/%s under %s", src_name, dname,
                               from, root);
    for (int i = 0; i < 2; i++) {
        snprintf(probe, sizeof probe, "%s/src/kernels/%s/mla/%s/%s", root, tiers[i], dname, dst_name);
        if (!stat(probe, &st))
            return cli_usage_error("%s: %s already exists; refusing to overwrite", dst_arg, probe);
    }
    /* same tier as the source; move it to the other tier folder by hand if the target changes */
    snprintf(dst_dir, sizeof dst_dir, "%.*s/%s", (int)(strrchr(src_dir, '/') - src_dir), src_dir, dst_name);
    printf("cloning %s -> %s\n", src_dir, dst_dir);
    int files = 0, fixed = 0;
    if (copy_tree(src_dir, dst_dir, from, dst_name, vn, vm, &files, &fixed) != 0) {
        fprintf(stderr, "mla_var3: clone failed while copying into %s: %s\n", dst_dir, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!fixed)
        printf("warning: found no version number %d to change in the registration; set it to %d by hand\n",
               vn, vm);
    printf("%d file(s) written.\n\nAdd to src/runtime/registry_table.c:\n"
           "  extern const mla_kernel_version mla_kv_%s __attribute__((weak));\n"
           "and in mla_registry_table[], after &mla_kv_%s:\n"
           "  &mla_kv_%s,\n\n"
           "Then: edit the one-line .note, add a devlog entry to docs/kernels/%s.md, re-run cmake\n"
           "(the kernel folders are globbed) and check it: mla_var3 %s v%d --check\n",
           files, dst_name, from, dst_name, dname, dname, vm);
    return 0;
}
