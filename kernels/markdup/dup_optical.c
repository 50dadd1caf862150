/*
 * dup_optical.c -- where a read's cluster lay on the flow cell, read from its
 * name as samtools markdup 1.16.1 reads it (Illumina's colon-separated
 * fields, or --read-coords' groups), and whether two duplicates lie within
 * -d of each other on the same tile (an optical duplicate).
 */
#include <stdlib.h>
#include <string.h>

#include "markdup.h"

/*
 * Illumina names: 3 or 4 colons (older formats; with 4 the last two fields
 * are x and y), 6 or 7 (machine:run:flowcell:lane:tile:x:y[:UMI]). The part
 * before x must match for two reads to share a tile.
 */
static int coords_colons(const char *name, dup_coords_t *c)
{
    int sep = 0, xpos = 0, ypos = 0;
    for (int i = 0; name[i]; i++) {
        if (name[i] != ':')
            continue;
        switch (++sep) {
        case 2:
            xpos = i + 1;
            break;
        case 3:
            ypos = i + 1;
            break;
        case 4:
            xpos = ypos, ypos = i + 1;
            break;
        case 5:
            xpos = i + 1;
            break;
        case 6:
            ypos = i + 1;
            break;
        default:
            break;
        }
    }
    if (sep != 3 && sep != 4 && sep != 6 && sep != 7)
        return 1;
    char *end;
    c->x = strtol(name + xpos, &end, 10);
    if (end == name + xpos)
        return 1;
    c->y = strtol(name + ypos, &end, 10);
    if (end == name + ypos)
        return 1;
    c->beg = 0, c->end = xpos;
    return 0;
}

/* A number from the group [so, eo) of name; nonzero when it holds none or is too long. */
static int group_number(const char *name, regoff_t so, regoff_t eo, long *v)
{
    char buf[255];
    if (eo - so > 254)
        return 1;
    memcpy(buf, name + so, (size_t)(eo - so));
    buf[eo - so] = '\0';
    char *end;
    *v = strtol(buf, &end, 10);
    return end == buf;
}

static int coords_regex(const dup_run_t *r, const char *name, dup_coords_t *c)
{
    const dup_opts_t *o = r->o;
    regmatch_t m[5];
    if (regexec(&r->coords, name, o->rgx_t ? 5 : 4, m, 0) != 0)
        return -1;
    c->beg = o->rgx_t ? (int)m[o->rgx_t].rm_so : 0;
    c->end = o->rgx_t ? (int)m[o->rgx_t].rm_eo : 0;
    if (m[o->rgx_x].rm_so == -1 || m[o->rgx_y].rm_so == -1 || c->beg == -1)
        return -1;
    if (group_number(name, m[o->rgx_x].rm_so, m[o->rgx_x].rm_eo, &c->x) ||
        group_number(name, m[o->rgx_y].rm_so, m[o->rgx_y].rm_eo, &c->y))
        return 1;
    return 0;
}

int dup_coords(const dup_run_t *r, const char *name, dup_coords_t *c)
{
    return r->has_coords ? coords_regex(r, name, c) : coords_colons(name, c);
}

int dup_is_optical(const dup_run_t *r, const char *ori, const dup_coords_t *oc, const char *dup,
                   dup_coords_t *dc)
{
    dup_coords_t t;
    if (dup_coords(r, dup, &t))
        return 0; /* *dc keeps what the caller set */
    *dc = t;
    if (strncmp(ori + oc->beg, dup + dc->beg, (size_t)(oc->end - oc->beg)) != 0)
        return 0;
    return labs(oc->x - dc->x) <= r->o->opt_dist && labs(oc->y - dc->y) <= r->o->opt_dist;
}
