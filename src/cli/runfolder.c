/*
 * Files, run folders and child processes of the CLI: mkdir -p, writing JSON/text under a run
 * folder, finding a tool (cuobjdump, ncu, nsys), spawning it with its output in a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "plan.h"

extern char **environ;

int cli_mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    size_t n = strlen(buf);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    }
    return 0;
}

static int make_path(const char *dir, const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, rel);
    char *slash = strrchr(buf, '/');
    if (slash) {
        *slash = '\0';
        int rc = cli_mkdir_p(buf);
        *slash = '/';
        if (rc) return -1;
    }
    return 0;
}

int cli_write_text(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    if (make_path(dir, rel, path, sizeof path)) return -1;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f) ? -1 : 0;
}

int cli_write_json(const char *dir, const char *rel, const cJSON *obj)
{
    char *s = cJSON_Print(obj);
    if (!s) return -1;
    size_t n = strlen(s);
    char *t = malloc(n + 2);
    if (!t) { cJSON_free(s); return -1; }
    memcpy(t, s, n);
    t[n] = '\n';
    t[n + 1] = '\0';
    int rc = cli_write_text(dir, rel, t);
    free(t);
    cJSON_free(s);
    return rc;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int cli_copy_file(const char *src, const char *dir, const char *rel)
{
    size_t n;
    char *text = cli_read_file(src, &n);
    if (!text) return -1;
    int rc = cli_write_text(dir, rel, text);
    free(text);
    return rc;
}

int cli_run_dir_create(const char *root, const char *mode, const char *version,
                       const mla_problem *pb, char *dir, size_t len)
{
    const char *forced = getenv("MLA_VAR3_RUN_DIR");
    if (forced && *forced) {
        snprintf(dir, len, "%s", forced);
        return cli_mkdir_p(dir);
    }
    char key[160], stamp[64];
    mla_problem_key(pb, key, sizeof key);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    char base[3072];
    snprintf(base, sizeof base, "%s/profiles/%s/%s/%s", root, mode, version, key);
    if (cli_mkdir_p(base)) return -1;
    for (int i = 0; i < 1000; i++) {
        if (i == 0) snprintf(dir, len, "%s/%s", base, stamp);
        else snprintf(dir, len, "%s/%s_%d", base, stamp, i + 1);
        if (mkdir(dir, 0777) == 0) return 0;   /* fresh: two runs in one second do not mix */
        if (errno != EEXIST) return -1;
    }
    return -1;
}

static int is_exec(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int cli_find_tool(const char *name, const char *const *extra, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (path) {
        char *copy = strdup(path), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            snprintf(buf, len, "%s/%s", *d ? d : ".", name);
            if (is_exec(buf)) { free(copy); return 1; }
        }
        free(copy);
    }
    for (int i = 0; extra && extra[i]; i++) {
        char pat[1024];
        snprintf(pat, sizeof pat, "%s/%s", extra[i], name);
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            /* the last match sorts newest for versioned folders (2024.3.0 < 2025.1.0) */
            for (size_t j = g.gl_pathc; j-- > 0;) {
                if (is_exec(g.gl_pathv[j])) {
                    snprintf(buf, len, "%s", g.gl_pathv[j]);
                    globfree(&g);
                    return 1;
                }
            }
            globfree(&g);
        }
    }
    return 0;
}

int cli_spawn(char *const argv[], const char *out_path, int merge_stderr, char *const env_extra[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out_path) {
        posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (merge_stderr == 1) posix_spawn_file_actions_adddup2(&fa, 1, 2);
        if (merge_stderr == 2) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    /* environment: ours plus env_extra (which wins) */
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env]) n_env++;
    while (env_extra && env_extra[n_extra]) n_extra++;
    char **env = calloc(n_env + n_extra + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++) {
        int overridden = 0;
        for (size_t j = 0; j < n_extra; j++) {
            size_t kl = strcspn(env_extra[j], "=");
            if (!strncmp(environ[i], env_extra[j], kl) && environ[i][kl] == '=') overridden = 1;
        }
        if (!overridden) env[k++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++) env[k++] = env_extra[j];
    env[k] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int cli_self_exe(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return -1;
    buf[n] = '\0';
    return 0;
}
