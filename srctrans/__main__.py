"""``python -m srctrans FILE.py:FUNCTION ...``: the command line (see :mod:`srctrans.cli`)."""

import sys

from srctrans.cli import main

if __name__ == "__main__":
    sys.exit(main())
