#!/usr/bin/env python3
"""extract-guide.py GUIDE.md OUTDIR -- write the examples of docs/kernel-guide.md to OUTDIR.

Every ```c block that follows a heading "### kernels/NAME/FILE.c" is written to
OUTDIR/FILE.c, so the test suite builds the guide's examples exactly as printed
(tests/CMakeLists.txt). Exits 1 when the guide holds no such block, or two of one name."""
import os
import re
import sys


def main():
    guide, outdir = sys.argv[1], sys.argv[2]
    text = open(guide, encoding="utf-8").read()
    blocks = re.findall(r"^### kernels/\w+/(\w+)\.c\n\n```c\n(.*?)^```", text, re.M | re.S)
    if not blocks:
        sys.exit(f"extract-guide: no kernel blocks in {guide}")
    names = [name for name, _ in blocks]
    if len(set(names)) != len(names):  # every copy lives in one folder
        sys.exit(f"extract-guide: two blocks in {guide} are both named FILE.c: {names}")
    os.makedirs(outdir, exist_ok=True)
    for name, code in blocks:
        # the guide's files live in kernels/NAME/; the copies build from OUTDIR
        code = code.replace('"../../framework/', '"' + os.path.abspath(
            os.path.join(os.path.dirname(guide), "..", "framework")) + "/")
        path = os.path.join(outdir, name + ".c")
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != code:  # unchanged files keep their time: no rebuild for nothing
            with open(path, "w", encoding="utf-8") as f:
                f.write(code)


if __name__ == "__main__":
    main()
