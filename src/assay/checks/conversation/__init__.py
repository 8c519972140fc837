"""The ``conversation`` group: a turn judged with the turns before it (`Entry.conversation`).

Its checks rate the turns of conversations (the ``conversation`` check group) and read the answers to
a turn's earlier turns from the run (`CheckContext.turn_answer`); without the run they abstain.
A conversation whose ``criteria`` name checks is rated only by those it names; one without
criteria by each of them where it applies. Its modules are imported here in the order their
checks are listed.
"""

from assay.checks.conversation import context, contradiction, clarification  # isort: skip

__all__ = ["clarification", "context", "contradiction"]
