#!/usr/bin/env python3
"""mutate_text.py KIND SEED IN OUT -- one kind of damage to a text file, chosen and placed
by SEED: a few bytes replaced, inserted or deleted, the file cut short, or (KIND lists)
its lines shuffled. KIND names the characters the damage draws from, those the readers
of that kind of file weigh:
  side    -R/-T/--call -T/-C alleles files and the other side inputs (fuzz_side_inputs.sh)
  ploidy  --ploidy-file (mpileup_call_ploidy.sh)
  lists   -G/-S read-group and sample lists (mpileup_read_groups.sh)
The same SEED gives the same damage on every run, so a failure repeats."""
import random
import sys

ALPHABETS = {
    "side": (b"0123456789\t\n -+#:.,ACGTctgAB*eE", 4),
    "ploidy": (b"0123456789\t\n -+#*MFctgA", 4),
    "lists": (b"\t\n \\*?#^s12pXZ\r", 5),  # the fifth kind shuffles lines
}


def main():
    kind_name, seed, src, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    alphabet, kinds = ALPHABETS[kind_name]
    rng = random.Random(seed)
    b = bytearray(open(src, "rb").read())
    kind = rng.randrange(kinds)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(b)) if b else 0
        if kind == 0 and b:
            b[at] = rng.choice(alphabet)
        elif kind == 1:
            b[at:at] = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
        elif kind == 2 and b:
            del b[at:at + rng.randint(1, 4)]
    if kind == 3:
        b = b[:rng.randrange(len(b) + 1)]
    if kind == 4:
        lines = b.split(b"\n")
        rng.shuffle(lines)
        b = bytearray(b"\n".join(lines))
    open(dst, "wb").write(bytes(b))


if __name__ == "__main__":
    main()
