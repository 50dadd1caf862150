/*
 * file_range.c -- bytes of a file appended to a buffer: the CRAM encoder
 * reads back its scratch file, and view's block copy its input, this way.
 */
#include <errno.h>
#include <unistd.h>

#include "ss_encode.h"

int ss_io_append_file_range(int fd, off_t off, size_t n, kstring_t *s)
{
    if (ks_resize(s, s->l + n + 1) < 0)
        return -1;
    while (n > 0) {
        ssize_t r = pread(fd, s->s + s->l, n, off);
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than that */
            return -1;
        }
        s->l += (size_t)r;
        off += r;
        n -= (size_t)r;
    }
    return 0;
}
