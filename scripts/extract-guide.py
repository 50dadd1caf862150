#!/usr/bin/env python3
"""extract-guide.py GUIDE.md OUTDIR -- write the kernels of docs/kernel-guide.md to OUTDIR.

Every ```c block that follows a heading "### kernels/NAME/NAME.c" is written to
OUTDIR/NAME.c, so the test suite builds the guide's examples exactly as printed
(tests/CMakeLists.txt). Exits 1 when the guide holds no such block."""
import os
import re
import sys


def main():
    guide, outdir = sys.argv[1], sys.argv[2]
    text = open(guide, encoding="utf-8").read()
    blocks = re.findall(r"^### kernels/(\w+)/\1\.c\n\n```c\n(.*?)^```", text, re.M | re.S)
    if not blocks:
        sys.exit(f"extract-guide: no kernel blocks in {guide}")
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
