/*
 * Strict argument parsing of the mla_var3 command: the run options of a design command
 * (`mla_var3 flash_mla v0 --b=32 ...`) and the small helpers the other commands share.
 * A parse error prints ONE line on stderr naming the flag and returns exit code 2.
 */
#ifndef MLA_CLI_ARGS_H
#define MLA_CLI_ARGS_H
#include <stddef.h>
#include <stdint.h>
#include "mla_var3.h"

typedef enum cli_prof_type {
    CLI_PROF_DISABLED = 0,
    CLI_PROF_EVENT,
    CLI_PROF_ANNOTATION,
    CLI_PROF_NCU,
    CLI_PROF_NSYS
} cli_prof_type;
const char *cli_prof_name(cli_prof_type p);

typedef struct cli_run_opts {
    mla_design design;
    char version[64];        /* full name "flash_mla_v0", or "" for the registry default */
    mla_problem pb;
    int n_given, scale_given;
    int varlen;
    int pages_sequential;    /* --pages=sequential: timed inputs' pages in order (default random) */
    uint64_t seed;
    int check, autotune, json;
    cli_prof_type prof;
    const char *tiling;      /* "key=value,..." or NULL */
    int device;
    const char *out;         /* run-folder root ("out") */
    int argc;                /* the design command's argv (argv[0] = design name) */
    char **argv;
} cli_run_opts;

/* Parse `argv` (argv[0] = design name). 0 on success, else the exit code (2) after printing. */
int cli_parse_run(int argc, char **argv, cli_run_opts *o);

/* 1 if any of argv[from..] is --help or -h. */
int cli_wants_help(int argc, char **argv, int from);

/* "--name=value" -> value; NULL if `arg` is not this flag. If `arg` is exactly "--name"
 * (no '='), *missing is set to 1. */
const char *cli_flag_value(const char *arg, const char *name, int *missing);

/* Parse an integer flag value in [lo, hi]; on error print "mla_var3: ARG: why" and return 2. */
int cli_parse_int(const char *arg, const char *val, long lo, long hi, int *out);
int cli_parse_double(const char *arg, const char *val, double lo_excl, double *out);

/* Print one error line "mla_var3: ..." on stderr; returns 2 (usage error). */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* "v0" or "flash_mla_v0" for `design` -> "flash_mla_v0". 0 ok, 2 on a malformed name (printed). */
int cli_parse_version(mla_design design, const char *arg, char *buf, size_t len);

#endif
