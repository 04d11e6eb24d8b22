"""``python -m gradyn``: the command line of gradyn.cli (info, simulate, view, bench)."""

import sys

from .cli import main

sys.exit(main())
