#!/usr/bin/env python3
"""Write the man pages in man/ from the program's own --help texts.

    python3 scripts/make-man.py build/seqshard man/

seqshard.1 (the program: kernels, common options, exit status, environment) and
seqshard-KERNEL.1 for each kernel `seqshard --help` lists: `seqshard KERNEL --man`, which
the program makes from the same option description as its parser and its --help. Run
this after changing an option and commit man/ (tests/integration/man_pages.sh fails
when a page differs from what the program prints).
"""
import os
import re
import subprocess
import sys

DATE = '2026-12-01'
# An option item: 2-8 spaces, then -x or --long (the rest of the line is its text).
ITEM = re.compile(r'^ {2,8}(-\S.*?)(?:\s{2,}(\S.*))?$')


def esc(text):
    """roff: a backslash, a leading dot or apostrophe, and every '-' (so it stays ASCII)."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    return re.sub(r"^([.'])", r'\\&\1', text)


def help_text(prog, *args):
    return subprocess.run([prog, *args, '--help'], check=True, capture_output=True,
                          text=True).stdout


def body(text):
    """--help text -> roff: sections .SS, option items .TP, other lines as paragraphs."""
    out, item = [], False
    for line in text.splitlines():
        if line.startswith('Usage:'):
            continue
        if not line.strip():
            out.append('.PP') if not item else None
            item = False
            continue
        m = ITEM.match(line)
        if m:
            out += ['.TP', '.B ' + esc(m.group(1).strip())]
            if m.group(2):
                out.append(esc(m.group(2)))
            item = True
        elif not line.startswith(' ') and line.rstrip().endswith(':'):
            out += ['.SS ' + esc(line.rstrip()[:-1])]
            item = False
        else:
            out.append(esc(line.strip()))
    return out


def usage_line(text):
    for line in text.splitlines():
        if line.startswith('Usage:'):
            return line[len('Usage:'):].strip()
    return ''


def header(name, summary):
    return [f'.TH {name.upper()} 1 "{DATE}" "seqshard" "User Commands"', '.SH NAME',
            f'{esc(name)} \\- {esc(summary)}']


COMMON_TAIL = r"""
.SH EXIT STATUS
0 on success (and after \-\-help); 1 when an input, reference, region or output cannot
be used or the run failed (one line on standard error names the file, shard and rank,
and says what to do; no output file is left); 2 on a usage error; 128 + N when signal N
ended the run (SIGTERM: 143).
.SH ENVIRONMENT
.TP
.B SLURM_CPUS_PER_TASK
default for \-@ inside a Slurm job
.TP
.B SLURM_TMPDIR\fR, \fBTMPDIR
node\-local scratch for \-\-tmp\-dir inside a Slurm job
.TP
.B SLURM_JOB_ID
recorded in the \-\-report file
.TP
.B SEQSHARD_PROGRESS_INTERVAL
seconds between progress lines when standard error is not a terminal [30]
.TP
.B SEQSHARD_HTS_LOG
1 shows htslib's own messages too
.SH SEE ALSO
.BR samtools (1),
.BR mpirun (1),
.BR sbatch (1).
The user guide (user\-guide.md) and the Slurm guide (slurm.md) are installed in
share/doc/seqshard/; the Slurm batch scripts in share/seqshard/.
"""


def man_text(prog, *args):
    return subprocess.run([prog, *args, '--man'], check=True, capture_output=True,
                          text=True).stdout


def kernel_page(prog, name, summary):
    """The kernel's own page: seqshard KERNEL --man, made from its option description
    (a second mode's options, as depth --mosdepth's, are a section of it)."""
    return man_text(prog, name)


def kernels(prog):
    text = help_text(prog)
    names, on = [], False
    for line in text.splitlines():
        if line.startswith('Kernels:'):
            on = True
        elif on and line.startswith('  '):
            parts = line.split(None, 1)
            if parts[0] != 'topology':
                names.append((parts[0], parts[1] if len(parts) > 1 else ''))
        elif on:
            on = False
    return text, names


def main_page(prog, text, names):
    lines = header('seqshard', 'run genomics kernels over sorted, indexed BAM/CRAM in parallel '
                   'shards')
    lines += ['.SH SYNOPSIS', '.B seqshard', '.I kernel', '[options] in.bam|in.cram ...', '.br',
              '.B seqshard topology', '[\\-@ N] [\\-\\-bind MODE] [\\-\\-check]', '.br',
              '.B seqshard', '\\-\\-help | \\-\\-version', '.SH DESCRIPTION']
    lines += [esc(l) for l in text.splitlines()[:2]]
    lines += ['.PP', 'The output is the same bytes whatever the number of threads (\\-@), '
              'MPI ranks (mpirun, srun) and, for uncompressed output, \\-\\-shard\\-size.',
              '.SH KERNELS']
    for n, s in names:
        lines += ['.TP', f'.BR seqshard\\-{esc(n)} (1)', esc(s)]
    lines += ['.TP', '.B topology', 'print where the workers of a run would be placed']
    lines += examples(text)
    return '\n'.join(lines) + COMMON_TAIL


def examples(text):
    """The help's "Examples:" block, one command a line, as an EXAMPLES section."""
    out, on = [], False
    for line in text.splitlines():
        if line.startswith('Examples:'):
            on = True
            out = ['.SH EXAMPLES', '.nf']
        elif on and line.startswith('  '):
            out.append(esc(line.strip()))
        elif on:
            break
    return out + ['.fi'] if out else []


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    prog, outdir = argv[1], argv[2]
    os.makedirs(outdir, exist_ok=True)
    text, names = kernels(prog)
    pages = {'seqshard.1': main_page(prog, text, names)}
    for n, s in names:
        pages[f'seqshard-{n}.1'] = kernel_page(prog, n, s)
    for fname, page in pages.items():
        with open(os.path.join(outdir, fname), 'w') as f:
            f.write(page.rstrip('\n') + '\n')
    print(f'make-man: wrote {", ".join(sorted(pages))} in {outdir}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
