#!/usr/bin/env python3
"""What a ctest run left out, and why: the tests it skipped and the cases tests skipped.

    python3 scripts/test-summary.py BUILD/ctest-results.xml

Reads the JUnit file that `ctest --output-junit` writes (make test asks for one) and
prints, for each skipped test (exit 77), the line its output gives as the reason
("SKIP: ..."), then the notes of tests that ran but left cases out ("note: not root:
skipping ..."). Prints nothing when nothing was left out. Exit status 0; 1 when the file
cannot be read (ctest did not get as far as writing it); 2 on bad usage.
"""
import re
import sys
import xml.etree.ElementTree as ET

NOTE = re.compile(r'^note: .*\b(skip\w*|not (run|checked|tried|drawn|exercised))\b', re.I)
SKIP = re.compile(r'^(SKIP|skip)\b')


def reason(out):
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    said = [ln for ln in lines if SKIP.match(ln)]
    return ' / '.join(said) if said else (lines[-1] if lines else 'no reason printed')


def main(argv):
    if len(argv) != 2 or argv[1] in ('-h', '--help'):
        print(__doc__.strip(), file=sys.stdout if len(argv) == 2 else sys.stderr)
        return 0 if len(argv) == 2 else 2
    try:
        cases = ET.parse(argv[1]).getroot().iter('testcase')
    except (OSError, ET.ParseError) as e:
        print(f'test-summary: {argv[1]}: {e}; ctest did not write its results there',
              file=sys.stderr)
        return 1
    skipped, notes = [], []
    for c in cases:
        out = c.findtext('system-out') or ''
        if c.find('skipped') is not None:
            skipped.append((c.get('name'), reason(out)))
        elif c.get('status') == 'run':
            notes += [(c.get('name'), ln.strip()) for ln in out.splitlines()
                      if NOTE.match(ln.strip())]
    if skipped:
        print(f'\nSkipped tests ({len(skipped)}), and why:')
        for name, why in skipped:
            print(f'  {name}: {why}')
    if notes:
        print(f'\nCases left out by tests that passed ({len(notes)}):')
        for name, why in notes:
            print(f'  {name}: {why}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
