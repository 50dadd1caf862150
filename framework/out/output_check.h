/*
 * output_check.h -- every path the run writes, checked before any work
 * (output_check.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by
 * cli/cli.c (the check) and out/side_out.c (ss_out_dir_of).
 */
#ifndef SS_OUTPUT_CHECK_H
#define SS_OUTPUT_CHECK_H

#include <stddef.h>

#include "../ss_framework.h"

/*
 * Check every path the run writes before any work (output_check.c): -o and
 * --report can be created (with an index name that many bytes longer beside
 * an indexed -o, ss_output_index_ext_len), --tmp-dir is a writable
 * directory, no file the run writes (ss_run_writes) is one it reads
 * (ss_run_reads), and no two of them are the same file. 0, or -1 after
 * ss_error(). Main thread.
 */
int ss_outputs_check(const ss_common_opts_t *o, const ss_out_spec_t *spec);

/* The directory part of path into buf: "." when it has none, "/" for the root. Any thread. */
void ss_out_dir_of(const char *path, char *buf, size_t size);

#endif
