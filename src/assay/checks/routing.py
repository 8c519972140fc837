"""The ``routing`` group: a router's or a guardrail's label against the gold label."""

from assay.judge import routing

__all__ = ["routing"]
