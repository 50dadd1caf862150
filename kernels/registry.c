/*
 * registry.c -- the kernels `seqshard` knows. Adding a kernel: write
 * kernels/NAME/ (one folder per kernel, with its own private header) defining `const ss_kernel_t ss_kernel_NAME`, then add one
 * extern line and one table entry below. Order here is the order of
 * `seqshard --help`.
 */
#include <string.h>

#include "../framework/ss_framework.h"

extern const ss_kernel_t ss_kernel_pileup;
extern const ss_kernel_t ss_kernel_view;

static const ss_kernel_t *const kernels[] = {
    &ss_kernel_pileup,
    &ss_kernel_view,
};

#define N_KERNELS ((int)(sizeof(kernels) / sizeof(kernels[0])))

const ss_kernel_t *ss_kernel_find(const char *name)
{
    for (int i = 0; name && i < N_KERNELS; i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

int ss_kernel_count(void)
{
    return N_KERNELS;
}

const ss_kernel_t *ss_kernel_at(int i)
{
    return i >= 0 && i < N_KERNELS ? kernels[i] : NULL;
}
