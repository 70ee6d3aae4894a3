"""``python -m sessionref``: the command line."""

import sys

from sessionref.cli.app import main

sys.exit(main())
