"""``python -m sessionref``: the command line."""

import sys

from sessionref.cli import main

sys.exit(main())
