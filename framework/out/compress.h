/*
 * compress.h -- BGZF text and its tabix index (compress.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by out/
 * and plan/run_files.c (BGZF names).
 */
#ifndef SS_COMPRESS_H
#define SS_COMPRESS_H

#include <stddef.h>

#include <htslib/kstring.h>

/* 1 if path asks for BGZF-compressed text (.gz, .bgz). */
int ss_bgzf_wanted(const char *path);
/* Compress in[0..len) into whole BGZF blocks in *out (reset first). 0 or -1. Any thread. */
int ss_bgzf_compress_ks(const char *in, size_t len, kstring_t *out, int level);
/* `tabix -s1 -b2 -e2 [--csi]` on path, the index written to idx_path (a name the caller
 * created). 0 or -1 after ss_error naming final_path. */
int ss_tabix_index(const char *path, const char *idx_path, const char *final_path, int csi);

#endif
