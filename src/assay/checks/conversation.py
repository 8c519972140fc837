"""The ``conversation`` group: a conversation's turns judged with the turns before them (kept
context, no contradiction of an earlier answer, clarification asked for)."""

from assay.judge import conversation

__all__ = ["conversation"]
