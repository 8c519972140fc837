"""The ``answer`` group: checks of prose answers (figures, key facts, refusals, citations, cost;
what a gap, a clarification, a false premise and a yes/no call for)."""

from assay.judge import behaviour, checks, gap, polarity

__all__ = ["behaviour", "checks", "gap", "polarity"]
