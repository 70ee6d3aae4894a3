"""The ``sessionref`` command line (argparse only)."""

from sessionref.cli.app import main

__all__ = ["main"]
