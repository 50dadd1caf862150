/*
 * main.c -- the seqshard program: its kernels, and the framework's entry.
 * Adding a kernel: write kernels/NAME/ (one folder per kernel, with its own
 * private header) defining `const ss_kernel_t ss_kernel_NAME`, then add one
 * extern line and one table entry below. The order here is the order of
 * `seqshard --help`. A kernel that offers a record step (ss_step.h) adds it
 * to the steps too; their order in a chain is the steps' own. Everything
 * else is in the sscore library.
 */
#include "../framework/entry.h"

extern const ss_kernel_t ss_kernel_pileup;
extern const ss_kernel_t ss_kernel_view;
extern const ss_kernel_t ss_kernel_depth;
extern const ss_kernel_t ss_kernel_realign;
extern const ss_kernel_t ss_kernel_mpileup;
extern const ss_kernel_t ss_kernel_markdup;
extern const ss_step_t ss_step_markdup;
extern const ss_step_t ss_step_realign;

static const ss_kernel_t *const kernels[] = {
    &ss_kernel_pileup,  &ss_kernel_view,    &ss_kernel_depth,
    &ss_kernel_realign, &ss_kernel_mpileup, &ss_kernel_markdup,
};

static const ss_step_t *const steps[] = {
    &ss_step_markdup,
    &ss_step_realign,
};

int main(int argc, char **argv)
{
    return ss_main(argc, argv, kernels, (int)(sizeof(kernels) / sizeof(kernels[0])), steps,
                   (int)(sizeof(steps) / sizeof(steps[0])));
}
