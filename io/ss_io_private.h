/*
 * ss_io_private.h -- private to io/: the file record source the reader
 * embeds (source.c, reader.c).
 */
#ifndef SS_IO_PRIVATE_H
#define SS_IO_PRIVATE_H

#include "ss_io.h"

typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a ss_file_source_t * */
    samFile *fp;     /* borrowed from the reader */
    sam_hdr_t *h;
    hts_idx_t *idx;
    hts_itr_t *itr;  /* the current range, owned */
    uint64_t seq;    /* records returned in the current range */
} ss_file_source_t;

/* Point f at an open file (its handles stay the reader's). */
void ss_file_source_bind(ss_file_source_t *f, const char *path, samFile *fp, sam_hdr_t *h,
                         hts_idx_t *idx);
/* Drop the range; the handles are about to close. */
void ss_file_source_unbind(ss_file_source_t *f);

#endif
