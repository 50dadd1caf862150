#!/usr/bin/env python3
"""bam_patch.py -- damage records of an uncompressed BAM in place, for the tests.

The BAM must be BGZF level 0 (samtools view -u): its blocks hold stored
deflate blocks, so bytes of records can be changed where they lie, and only
each changed block's CRC32 is computed again. Every block keeps its size and
place, so an index made before the change still points at the same blocks,
as when a file is damaged after it was indexed.

  bam_patch.py set IN OUT K FIELD VALUE   record K (0 = first after the header):
                                          FIELD tid, pos, mtid, mpos, l_seq (int32),
                                          n_cigar (uint16), l_read_name (uint8) or
                                          cigar0 (its first CIGAR operation, uint32:
                                          length << 4 | op)
  bam_patch.py poke IN OUT K AT HEX       record K's bytes from AT (after block_size;
                                          negative: from the record's end) set to HEX
  bam_patch.py fuzz IN PREFIX SEED...     for each SEED, PREFIX.SEED.bam: IN with 1-4
                                          byte runs of records in one data block
                                          overwritten (random, from SEED)
  bam_patch.py count IN                   records, and data blocks that can be patched
  bam_patch.py records IN OUT            the bytes of IN's records (after its header)
  bam_patch.py append IN EXTRA OUT        IN without its EOF block, then the record blocks
                                          of EXTRA (any compression; its header's blocks
                                          dropped): records added after IN was indexed
"""
import random
import struct
import sys
import zlib

# offset after block_size and struct format of each field "set" can change
FIELDS = {"tid": (0, "<i"), "pos": (4, "<i"), "mtid": (20, "<i"), "mpos": (24, "<i"),
          "l_seq": (16, "<i"), "n_cigar": (12, "<H"), "l_read_name": (8, "<B")}


class Bam:
    def __init__(self, path, raw=None):
        self.raw = bytearray(raw if raw is not None else open(path, "rb").read())
        self.blocks = []  # (file offset, size, [(uncompressed offset, file offset, length)])
        self.ustart = []  # uncompressed offset where each block starts
        self.ulen = 0
        self._scan_blocks()
        self.data = self._inflate_all()
        self.header_end = self._header_end()

    def _scan_blocks(self):
        off = 0
        while off < len(self.raw):
            b = self.raw
            if b[off:off + 4] != b"\x1f\x8b\x08\x04" or b[off + 12:off + 14] != b"BC":
                raise SystemExit("not BGZF at byte %d" % off)
            size = struct.unpack_from("<H", b, off + 16)[0] + 1
            isize = struct.unpack_from("<I", b, off + size - 4)[0]
            self.blocks.append((off, size, self._stored_segments(off, size, isize)))
            self.ustart.append(self.ulen)
            self.ulen += isize
            off += size

    def _stored_segments(self, off, size, isize):
        """Where a block's stored bytes are; None when it is not all stored blocks."""
        p, end, u, segs = off + 18, off + size - 8, self.ulen, []
        while p < end:
            b0 = self.raw[p]
            if (b0 >> 1) & 3 != 0:
                return None
            n, nn = struct.unpack_from("<HH", self.raw, p + 1)
            if n ^ nn != 0xFFFF:
                return None
            segs.append((u, p + 5, n))
            u += n
            p += 5 + n
            if b0 & 1:
                break
        return segs if u - self.ulen == isize else None

    def _inflate_all(self):
        out = bytearray()
        for off, size, _ in self.blocks:
            out += zlib.decompress(bytes(self.raw[off + 18:off + size - 8]), -15)
        return out

    def _header_end(self):
        d = self.data
        l_text = struct.unpack_from("<i", d, 4)[0]
        p = 8 + l_text
        n_ref = struct.unpack_from("<i", d, p)[0]
        p += 4
        for _ in range(n_ref):
            p += 4 + struct.unpack_from("<i", d, p)[0] + 4
        return p

    def records(self):
        """Start offset (of block_size) of every record."""
        p, out = self.header_end, []
        while p + 4 <= len(self.data):
            out.append(p)
            p += 4 + struct.unpack_from("<i", self.data, p)[0]
        return out

    def patch(self, u, new):
        """Write bytes new at uncompressed offset u; fix the CRCs of the blocks touched."""
        touched = set()
        for i, byte in enumerate(new):
            for k, (off, size, segs) in enumerate(self.blocks):
                hit = [s for s in segs or [] if s[0] <= u + i < s[0] + s[2]]
                if hit:
                    self.raw[hit[0][1] + u + i - hit[0][0]] = byte
                    touched.add(k)
                    break
            else:
                raise SystemExit("byte %d is not in a stored block" % (u + i))
        for k in touched:
            off, size, _ = self.blocks[k]
            plain = zlib.decompress(bytes(self.raw[off + 18:off + size - 8]), -15)
            struct.pack_into("<I", self.raw, off + size - 8, zlib.crc32(plain) & 0xFFFFFFFF)

    def save(self, path):
        open(path, "wb").write(self.raw)


def fuzz(bam, seed):
    rng = random.Random(seed)
    # one data block: a stored block holding record bytes (not the header's, not EOF)
    blocks = [s for _, _, s in bam.blocks
              if s and s[0][2] > 0 and s[-1][0] + s[-1][2] > bam.header_end]
    segs = rng.choice(blocks)
    lo = max(segs[0][0], bam.header_end)
    hi = segs[-1][0] + segs[-1][2]
    for _ in range(rng.randint(1, 4)):
        u = rng.randrange(lo, hi)
        n = min(rng.randint(1, 4), hi - u)
        bam.patch(u, bytes(rng.randrange(256) for _ in range(n)))
    return bam


def main(argv):
    if len(argv) >= 3 and argv[1] == "count":
        bam = Bam(argv[2])
        patchable = sum(1 for b in bam.blocks if b[2] and b[2][0][2] > 0)
        print(len(bam.records()), patchable)
    elif len(argv) == 7 and argv[1] == "set":
        bam = Bam(argv[2])
        rec = bam.records()[int(argv[4])]
        if argv[5] == "cigar0":  # CIGAR follows the 32 fixed bytes and the read name
            at, fmt = 32 + bam.data[rec + 4 + 8], "<I"
        else:
            at, fmt = FIELDS[argv[5]]
        bam.patch(rec + 4 + at, struct.pack(fmt, int(argv[6])))
        bam.save(argv[3])
    elif len(argv) == 7 and argv[1] == "poke":
        bam = Bam(argv[2])
        rec = bam.records()[int(argv[4])]
        at = int(argv[5])
        if at < 0:
            at += struct.unpack_from("<i", bam.data, rec)[0]
        bam.patch(rec + 4 + at, bytes.fromhex(argv[6]))
        bam.save(argv[3])
    elif len(argv) >= 5 and argv[1] == "fuzz":
        pristine = bytes(Bam(argv[2]).raw)
        for seed in argv[4:]:
            fuzz(Bam(argv[2], pristine), int(seed)).save("%s.%s.bam" % (argv[3], seed))
    elif len(argv) == 4 and argv[1] == "records":
        bam = Bam(argv[2])
        open(argv[3], "wb").write(bam.data[bam.header_end:])
    elif len(argv) == 5 and argv[1] == "append":
        bam, extra = Bam(argv[2]), Bam(argv[3])
        eof = bam.blocks[-1]
        out = bam.raw[:eof[0]] if eof[1] == 28 else bam.raw
        first = [k for k, u in enumerate(extra.ustart) if u >= extra.header_end][0]
        open(argv[4], "wb").write(out + extra.raw[extra.blocks[first][0]:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
