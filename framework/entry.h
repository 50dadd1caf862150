/*
 * entry.h -- the program's entry into the framework: a main() hands its
 * kernels and record steps to ss_main. Included by kernels/main.c (and the
 * test programs' mains); kernels include ss_framework.h instead.
 */
#ifndef ENTRY_H
#define ENTRY_H

#include "ss_framework.h"

/*
 * Top-level entry: `seqshard KERNEL ...` over the given kernels (in the
 * order `seqshard --help` lists them; kernels/main.c passes the program's,
 * a test program its own) and the record steps the kernels that read
 * records take (ss_step.h; chained by their order). Returns the exit
 * status. Main thread.
 */
int ss_main(int argc, char **argv, const ss_kernel_t *const *kernels, int n_kernels,
            const ss_step_t *const *steps, int n_steps);

#endif
