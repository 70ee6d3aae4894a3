"""Opt-in secret redaction: a unit transform of the spine (docs/redaction.md).

:class:`Redaction` says what to redact; its :meth:`~Redaction.transform` is what
``snapshot_source`` applies between ``unitize`` and ``retain_budget``.
"""

from sessionref.redact.detectors import MISSING
from sessionref.redact.scan import CUSTOM, Finding, find_secrets
from sessionref.redact.units import RedactingUnits, Redaction

__all__ = ["CUSTOM", "MISSING", "Finding", "RedactingUnits", "Redaction", "find_secrets"]
