/*
 * cli.h -- what the command line leaves for the rest of the run: the
 * kernel's name and arguments as typed (options.c; the report and --resume's
 * identity read them), size parsing (options.c) and the SEQSHARD_* variables
 * (env.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by cli/,
 * and for sizes, the command line or a variable by plan/, out/, resume/,
 * report/ and run/.
 */
#ifndef SS_CLI_H
#define SS_CLI_H

#include "../driver.h"

/* The command shown in usage errors ("pileup"); NULL before a kernel is chosen. Main thread. */
void ss_cli_set_command(const char *kernel_name, int argc, char **argv);
/* The whole command line as the user typed it (argv joined by spaces); "" if unset. */
const char *ss_cli_cmdline(void);
/* The kernel's arguments as ss_cli_set_command got them (argv[0] the kernel's name). */
char **ss_cli_argv(int *argc);

/* --shard-size values: digits, optional fraction, k/m/g (x1000). 0 ok, -1 malformed. */
int ss_parse_size(const char *s, hts_pos_t *out);

/*
 * Refuse a SEQSHARD_* variable whose value its reader could not use: 0, or
 * -1 after ss_error() naming the variable and what it accepts (env.c). Main
 * thread, before the job opens.
 */
int ss_env_check(void);
/*
 * A size variable of the checked table (k/m/g), or dflt when it is unset,
 * empty, not in the table or not valid there. Any thread.
 */
size_t ss_env_size(const char *name, size_t dflt);
/* Whether variable `name` is "1". */
int ss_env_on(const char *name);

#endif
