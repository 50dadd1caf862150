/*
 * compress.c -- BGZF framing of text output, and its tabix index.
 *
 * A shard's text is compressed by the worker that made it into whole BGZF
 * blocks, so shard outputs concatenate into a valid BGZF file whatever the
 * rank or thread that made them (SAM spec 4.1: any run of complete blocks
 * is valid; the file ends with the empty EOF block the writer appends).
 * Blocks hold at most BGZF_BLOCK_SIZE bytes of input, as bgzip writes them,
 * and never span shards, so the layout depends only on --shard-size.
 */
#include <errno.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/tbx.h>

#include "../../base/ss_base.h"
#include "compress.h"

int ss_bgzf_wanted(const char *path)
{
    if (!path)
        return 0;
    size_t n = strlen(path);
    return (n > 3 && !strcmp(path + n - 3, ".gz")) || (n > 4 && !strcmp(path + n - 4, ".bgz"));
}

int ss_bgzf_compress_ks(const char *in, size_t len, kstring_t *out, int level)
{
    out->l = 0;
    for (size_t off = 0; off < len;) {
        size_t chunk = len - off < BGZF_BLOCK_SIZE ? len - off : BGZF_BLOCK_SIZE;
        if (ks_resize(out, out->l + BGZF_MAX_BLOCK_SIZE) < 0)
            return -1;
        size_t dlen = BGZF_MAX_BLOCK_SIZE;
        if (bgzf_compress(out->s + out->l, &dlen, in + off, chunk, level) < 0)
            return -1;
        out->l += dlen;
        off += chunk;
    }
    return 0;
}

int ss_tabix_index(const char *path, const char *idx_path, const char *final_path, int csi)
{
    /* Same as `tabix -s1 -b2 -e2` (or with --csi): sequence column 1, position column 2. */
    tbx_conf_t conf = {TBX_GENERIC, 1, 2, 2, '#', 0};
    errno = 0;
    if (tbx_index_build2(path, idx_path, csi ? 14 : 0, &conf) < 0) {
        /* the output is removed with its partial index: "renamed only on success" */
        ss_error("%s: building the %s index failed (%s); nothing was written: free space on "
                 "its file system and rerun",
                 final_path, csi ? "CSI" : "tabix", errno ? strerror(errno) : "unknown cause");
        return -1;
    }
    return 0;
}
