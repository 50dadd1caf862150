# shift_expect.py -- what the test kernel "shift" must write: every mapped record of a SAM
# stream on stdin moved left by FNV-1a(read name) mod 150, clipped at the contig start
# (tests/kernels/shift.c). Piped into samtools sort, it is the expected output.
import sys
M = 150
def fnv(name):
    h = 2166136261
    for ch in name.encode():
        h = ((h ^ ch) * 16777619) & 0xffffffff
    return h % M
for line in sys.stdin:
    if line.startswith('@'):
        sys.stdout.write(line); continue
    f = line.rstrip('\n').split('\t')
    if f[2] != '*':
        p0 = max(0, int(f[3]) - 1 - fnv(f[0]))
        f[3] = str(p0 + 1)
    sys.stdout.write('\t'.join(f) + '\n')
