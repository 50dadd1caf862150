/*
 * mp_sample_lists.c -- bcftools mpileup's -s/-S (samples to keep or, after
 * '^', to drop, each optionally renamed by a second word) and -G (read groups
 * to keep or drop: "RG", "RG FILE" or "* FILE", optionally with a new sample
 * name), read as bam_sample.c reads them: words split at unescaped white space,
 * a backslash escaping the next character.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mpileup.h"

/* Set key -> val unless key is there; 1 when it was there with another value, -1 OOM. */
static int map_set(mp_namemap_t *m, const char *key, const char *val)
{
    int i;
    if (khash_str2int_get(m->idx, key, &i) == 0)
        return strcmp(m->vals[i], val) != 0;
    char **v = realloc(m->vals, (size_t)(m->n + 1) * sizeof(*v));
    if (!v)
        return -1;
    m->vals = v;
    char *k = strdup(key);
    if (!k || !(v[m->n] = strdup(val)) || khash_str2int_set(m->idx, k, m->n) < 0) {
        free(k);
        return -1;
    }
    m->n++;
    return 0;
}

const char *mp_namemap_get(const mp_namemap_t *m, const char *key)
{
    int i;
    if (!m->idx || khash_str2int_get(m->idx, key, &i) != 0)
        return NULL;
    return m->vals[i];
}

void mp_namemap_free(mp_namemap_t *m)
{
    if (m->idx)
        khash_str2int_destroy_free(m->idx);
    for (int i = 0; i < m->n; i++)
        free(m->vals[i]);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* The next word of *p into w (backslash escapes), skipping white space before it. */
static void next_word(const char **p, kstring_t *w)
{
    const char *s = *p;
    int escaped = 0;
    w->l = 0;
    kputs("", w);
    while (*s && isspace((unsigned char)*s))
        s++;
    for (; *s; s++) {
        if (*s == '\\' && !escaped) {
            escaped = 1;
            continue;
        }
        if (isspace((unsigned char)*s) && !escaped)
            break;
        kputc(*s, w);
        escaped = 0;
    }
    *p = s;
}

/* The lines of file (is_file) or the words of a comma list, as hts_readlist gives them. */
static char **read_list(const char *list, int is_file, int *n, const char *opt)
{
    char **rows = hts_readlist(list, is_file, n);
    if (!rows)
        ss_error("%s %s: cannot read it%s", opt, list,
                 is_file ? "; check the file exists and is readable" : "");
    return rows;
}

static void free_rows(char **rows, int n)
{
    for (int i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
}

int mp_sample_list_read(mp_namemap_t *m, int *include, const char *arg, int is_file)
{
    const char *list = arg;
    *include = list[0] != '^';
    list += !*include;
    int n = 0;
    char **rows = read_list(list, is_file, &n, is_file ? "-S" : "-s");
    if (!rows)
        return -1;
    kstring_t ori = KS_INITIALIZE, ren = KS_INITIALIZE;
    int rc = (m->idx = khash_str2int_init()) ? 0 : -1;
    for (int i = 0; i < n && rc >= 0; i++) {
        const char *p = rows[i];
        next_word(&p, &ori);
        next_word(&p, &ren);
        rc = map_set(m, ori.s, ren.l ? ren.s : ori.s) < 0 ? -1 : 0;
    }
    free_rows(rows, n);
    free(ori.s), free(ren.s);
    if (rc < 0)
        ss_error("out of memory reading the sample list %s", arg);
    return rc;
}

int mp_rg_list_read(mp_namemap_t *m, int *include, const char *arg)
{
    const char *list = arg;
    *include = list[0] != '^';
    list += !*include;
    int n = 0;
    char **rows = read_list(list, 1, &n, "-G");
    if (!rows)
        return -1;
    kstring_t f1 = KS_INITIALIZE, f2 = KS_INITIALIZE, f3 = KS_INITIALIZE;
    int rc = (m->idx = khash_str2int_init()) ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *p = rows[i];
        next_word(&p, &f1);
        next_word(&p, &f2);
        next_word(&p, &f3);
        if (f3.l) { /* ID FILE SAMPLE: the key is "ID\tFILE" */
            kputc('\t', &f1);
            kputs(f2.s, &f1);
            f2.l = 0;
            kputs(f3.s, &f2);
        }
        /* "\t": keep the header's sample name */
        rc = map_set(m, f1.s, f2.l ? f2.s : "\t");
        if (rc > 0)
            ss_error("-G %s: the read group \"%s\" is assigned to two different samples", arg,
                     f1.s);
    }
    free_rows(rows, n);
    free(f1.s), free(f2.s), free(f3.s);
    if (rc < 0)
        ss_error("out of memory reading the read-group list %s", arg);
    return rc == 0 ? 0 : -1;
}

int mp_rg_keep(const mp_samples_t *s, const char *fname, const char *rg, const char **name)
{
    kstring_t key = KS_INITIALIZE;
    const char *v = mp_namemap_get(&s->rg_list, rg);
    if (!v) {
        ksprintf(&key, "%s\t%s", rg, fname);
        v = mp_namemap_get(&s->rg_list, key.s);
    }
    if (!v) {
        key.l = 0;
        ksprintf(&key, "*\t%s", fname);
        v = mp_namemap_get(&s->rg_list, key.s);
    }
    free(key.s);
    if ((!v && s->rg_include) || (v && !s->rg_include))
        return 0;
    if (v && v[0] != '\t')
        *name = v;
    return 1;
}
