#!/usr/bin/env python3
"""index_patch.py -- damage a BAM's .bai/.csi or a CRAM's .crai, for the tests.

The damage is of the kinds a flipped bit or a lost line makes: the file the
index describes is not touched, so a run that trusts the index reads fewer
records than the file holds.

  index_patch.py bai|csi KIND IN OUT [SEED]   KIND:
      chunk-end   contig 0's widest chunk ends where it begins: its
                  records are not read
      chunk SEED  one bit of one chunk offset flipped (not the pseudo-bin's)
      bin SEED    one bit of one bin number flipped (not the pseudo-bin)
      linear SEED one bit of one linear-index offset flipped (BAI only)
      pseudo SEED the pseudo-bin's count of mapped records off by one
      fuzz SEED   one of chunk, bin, linear (BAI), pseudo, chosen by SEED
  index_patch.py crai KIND IN OUT [SEED]      KIND:
      drop-unplaced  the lines of the unplaced reads (reference -1) dropped
      drop SEED      one line dropped
      field SEED     one number of one line changed
      fuzz SEED      drop or field, chosen by SEED
A CSI is written uncompressed (htslib reads it so), a CRAI gzipped.
"""
import gzip
import random
import struct
import sys

PSEUDO_BAI = 37450


def u32(d, o):
    return struct.unpack_from("<I", d, o)[0]


def i32(d, o):
    return struct.unpack_from("<i", d, o)[0]


def parse(d, csi):
    """Offsets of the index's fields: chunks, bins, linear entries, pseudo-bins."""
    out = {"chunks": [], "bins": [], "linear": [], "pseudo": [], "widest": None}
    if csi:
        min_shift, depth, l_aux = i32(d, 4), i32(d, 8), i32(d, 12)
        pseudo = ((1 << ((depth + 1) * 3)) - 1) // 7 + 1
        o = 16 + l_aux
    else:
        pseudo = PSEUDO_BAI
        o = 4
    n_ref = i32(d, o)
    o += 4
    best = -1
    for ref in range(n_ref):
        n_bin = i32(d, o)
        o += 4
        for _ in range(n_bin):
            bin_at, b = o, u32(d, o)
            o += 4
            if csi:
                o += 8  # loffset
            n_chunk = i32(d, o)
            o += 4
            if b == pseudo:
                out["pseudo"].append(o + 16)  # n_mapped
            else:
                out["bins"].append(bin_at)
                for k in range(n_chunk):
                    beg, end = struct.unpack_from("<QQ", d, o + 16 * k)
                    if ref == 0 and (end >> 16) - (beg >> 16) > best:
                        best, out["widest"] = (end >> 16) - (beg >> 16), o + 16 * k
                    out["chunks"] += [o + 16 * k, o + 16 * k + 8]
            o += 16 * n_chunk
        if not csi:
            n_intv = i32(d, o)
            o += 4
            out["linear"] += [o + 8 * k for k in range(n_intv) if struct.unpack_from("<Q", d, o + 8 * k)[0]]
            o += 8 * n_intv
    return out


def flip(d, where, rnd, width):
    o = rnd.choice(where)
    bit = rnd.randrange(width * 8)
    d[o + bit // 8] ^= 1 << (bit % 8)


def patch_bai(d, csi, kind, seed):
    f = parse(d, csi)
    rnd = random.Random(seed)
    if kind == "fuzz":
        kinds = ["chunk", "bin", "pseudo"] + ([] if csi else ["linear"])
        kind = rnd.choice(kinds)
    if kind == "chunk-end":
        o = f["widest"]
        d[o + 8:o + 16] = d[o:o + 8]
    elif kind == "chunk":
        # low bits of the compressed offset: the chunk starts or ends elsewhere in the file
        flip(d, f["chunks"], rnd, 8)
    elif kind == "bin":
        flip(d, f["bins"], rnd, 2)
    elif kind == "linear":
        flip(d, f["linear"], rnd, 8)
    elif kind == "pseudo":
        o = rnd.choice(f["pseudo"])
        n = struct.unpack_from("<Q", d, o)[0]
        struct.pack_into("<Q", d, o, n + 1 if rnd.random() < 0.5 or n == 0 else n - 1)
    else:
        sys.exit("unknown kind " + kind)
    return kind


def patch_crai(lines, kind, seed):
    rnd = random.Random(seed)
    if kind == "fuzz":
        kind = rnd.choice(["drop", "field"])
    if kind == "drop-unplaced":
        return [l for l in lines if not l.startswith("-1\t")], kind
    if kind == "drop":
        del lines[rnd.randrange(len(lines))]
    elif kind == "field":
        k = rnd.randrange(len(lines))
        f = lines[k].split("\t")
        j = rnd.randrange(len(f))
        v = int(f[j])
        f[j] = str(v ^ (1 << rnd.randrange(4 if j == 0 else 16)))
        lines[k] = "\t".join(f)
    else:
        sys.exit("unknown kind " + kind)
    return lines, kind


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    fmt, kind, src, dst = argv[1:5]
    seed = int(argv[5]) if len(argv) > 5 else 0
    if fmt == "crai":
        lines = gzip.open(src, "rt").read().splitlines()
        lines, kind = patch_crai(lines, kind, seed)
        with gzip.open(dst, "wt") as out:
            out.write("".join(l + "\n" for l in lines))
    else:
        raw = open(src, "rb").read()
        d = bytearray(gzip.decompress(raw) if fmt == "csi" else raw)
        kind = patch_bai(d, fmt == "csi", kind, seed)
        open(dst, "wb").write(d)
    print(kind)


if __name__ == "__main__":
    main(sys.argv)
