/*
 * ss_io_private.h -- private to io/: the record source over one input of a
 * reader, which the reader embeds (source.c, reader.c).
 */
#ifndef SS_IO_PRIVATE_H
#define SS_IO_PRIVATE_H

#include "ss_io.h"

typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a ss_file_source_t * */
    ss_reader_t *r;  /* the reader it reads through, input i */
    int i;
    int empty;       /* the current range has nothing (a BAM's absent unplaced reads) */
    uint64_t seq;    /* records returned in the current range */
} ss_file_source_t;

/* Make f input i of r, as a source. */
void ss_file_source_init(ss_file_source_t *f, ss_reader_t *r, int i, const char *path);

#endif
