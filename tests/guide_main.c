/*
 * guide_main.c -- the program built from docs/kernel-guide.md's worked
 * examples, its kernels and its record step (scripts/extract-guide.py copies
 * them into the build folder), so the guide's code is compiled and tested as
 * printed. Never installed.
 */
#include "../framework/entry.h"

extern const ss_kernel_t ss_kernel_starts;
extern const ss_kernel_t ss_kernel_mapq;
extern const ss_kernel_t ss_kernel_tally;
extern const ss_kernel_t ss_kernel_unclip;
extern const ss_step_t ss_step_unclip;

static const ss_kernel_t *const kernels[] = {
    &ss_kernel_starts,
    &ss_kernel_mapq,
    &ss_kernel_tally,
    &ss_kernel_unclip,
};

static const ss_step_t *const steps[] = {
    &ss_step_unclip,
};

int main(int argc, char **argv)
{
    return ss_main(argc, argv, kernels, (int)(sizeof(kernels) / sizeof(kernels[0])), steps,
                   (int)(sizeof(steps) / sizeof(steps[0])));
}
