# shift_expect.py -- what the test step "shift" must write: every mapped record of a SAM
# stream on stdin moved left by FNV-1a(read name) mod 150, clipped at the contig start,
# and flagged a duplicate when (hash >> 8) mod 5 is 0 (tests/kernels/shift.c). Piped into
# samtools sort, it is the expected output.
import sys
M = 150
def fnv(name):
    h = 2166136261
    for ch in name.encode():
        h = ((h ^ ch) * 16777619) & 0xffffffff
    return h
for line in sys.stdin:
    if line.startswith('@'):
        sys.stdout.write(line); continue
    f = line.rstrip('\n').split('\t')
    if f[2] != '*':
        h = fnv(f[0])
        p0 = max(0, int(f[3]) - 1 - h % M)
        f[3] = str(p0 + 1)
        if (h >> 8) % 5 == 0:
            f[1] = str(int(f[1]) | 0x400)
    sys.stdout.write('\t'.join(f) + '\n')
