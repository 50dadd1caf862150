/*
 * dup_names.c -- -S: the duplicates whose other alignments samtools marks,
 * by name, joined from every shard's decisions (ss_kernel_t.gather). As in
 * samtools, a name's first decision in file order gives its do:Z original
 * and whether it is optical; a later optical verdict (a chain check) makes it
 * optical too.
 */
#include <stdlib.h>
#include <string.h>

#include "markdup.h"

KHASH_MAP_INIT_STR(dup_names, dup_name_t)

struct dup_names_s {
    khash_t(dup_names) * h;
};

dup_names_t *dup_names_init(void)
{
    dup_names_t *n = calloc(1, sizeof(*n));
    if (n && !(n->h = kh_init(dup_names)))
        free(n), n = NULL;
    return n;
}

void dup_names_destroy(dup_names_t *n)
{
    if (!n)
        return;
    for (khint_t k = kh_begin(n->h); k != kh_end(n->h); k++)
        if (kh_exist(n->h, k)) {
            free((char *)kh_key(n->h, k));
            free(kh_val(n->h, k).ori);
        }
    kh_destroy(dup_names, n->h);
    free(n);
}

/* One decision: 'A' adds the name if it is new; 'R' makes it optical. 0, or -1 out of memory. */
static int note(dup_names_t *n, char kind, int optical, const char *name, const char *ori)
{
    int ret;
    khint_t k = kh_get(dup_names, n->h, name);
    if (k != kh_end(n->h)) {
        if (kind == 'R')
            kh_val(n->h, k).optical = 1;
        return 0;
    }
    char *key = strdup(name), *o = *ori ? strdup(ori) : NULL;
    if (!key || (*ori && !o) || (k = kh_put(dup_names, n->h, key, &ret), ret < 0)) {
        free(key), free(o);
        return -1;
    }
    kh_val(n->h, k) = (dup_name_t){.ori = o, .optical = optical};
    return 0;
}

int dup_names_take(dup_names_t *n, const char *bytes, size_t len)
{
    for (size_t p = 0; p < len;) {
        const char *name = bytes + p + 2;
        const char *end = memchr(name, 0, len - p - 2);
        const char *ori = end ? end + 1 : NULL;
        const char *oend = ori ? memchr(ori, 0, (size_t)(bytes + len - ori)) : NULL;
        if (len - p < 4 || !oend) {
            ss_error("markdup -S: the shards' decisions came back damaged");
            return -1;
        }
        if (note(n, bytes[p], bytes[p + 1] == 'O', name, ori) < 0) {
            ss_error("markdup -S: out of memory holding the duplicates' names");
            return -1;
        }
        p = (size_t)(oend + 1 - bytes);
    }
    return 0;
}

const dup_name_t *dup_names_get(const dup_names_t *n, const char *name)
{
    khint_t k = kh_get(dup_names, n->h, name);
    return k == kh_end(n->h) ? NULL : &kh_val(n->h, k);
}
