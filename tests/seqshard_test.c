/*
 * seqshard_test.c -- the test program: seqshard's kernels plus the ones
 * that exist only to test the framework (tests/kernels/). Never installed.
 */
#include "../framework/entry.h"

extern const ss_kernel_t ss_kernel_pileup;
extern const ss_kernel_t ss_kernel_view;
extern const ss_kernel_t ss_kernel_depth;
extern const ss_kernel_t ss_kernel_realign;
extern const ss_kernel_t ss_kernel_test_shift;
extern const ss_step_t ss_step_realign;
extern const ss_step_t ss_step_test_shift;

static const ss_kernel_t *const kernels[] = {
    &ss_kernel_pileup, &ss_kernel_view, &ss_kernel_depth, &ss_kernel_realign, &ss_kernel_test_shift,
};

static const ss_step_t *const steps[] = {
    &ss_step_realign,
    &ss_step_test_shift,
};

int main(int argc, char **argv)
{
    return ss_main(argc, argv, kernels, (int)(sizeof(kernels) / sizeof(kernels[0])), steps,
                   (int)(sizeof(steps) / sizeof(steps[0])));
}
