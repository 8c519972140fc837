"""The ``policy`` group: access boundaries (leak, policy_ok, overall_pass)."""

from assay.judge import policy_checks as policy

__all__ = ["policy"]
