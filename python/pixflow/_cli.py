"""The `pixflow` console script: runs the command-line tool installed with the package."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    exe = Path(__file__).resolve().parent / "bin" / "pixflow"
    if not exe.is_file():
        sys.stderr.write(f"pixflow: the command-line tool is not installed beside the package "
                         f"({exe} is missing)\n")
        sys.exit(2)
    os.execv(exe, [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
