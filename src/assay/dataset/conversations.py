"""Conversations as entries: a dataset line with ``turns`` is one conversation.

    {"id": "conv-017", "category": "carried_context", "as_of": "2024-03-01",
     "turns": [{"query": "What was Averix's revenue in fiscal 2023?", "key_facts": [...]},
               {"query": "And the year before?", "depends_on": [1], "key_facts": [...]}],
     "criteria": ["kept_context"]}

A conversation line has ``turns`` (at least one) and no top-level ``query``. Every other
top-level field of an `Entry` (category, as_of, principal, label_tier, split, source, metadata,
...) is the conversation's default for its turns; a turn may set any field of an entry but
``id`` (it overrides the default whole: a turn's ``metadata`` replaces the conversation's), and
``depends_on``: the earlier turn numbers it needs. ``criteria`` names the conversation-level
checks (``kept_context``, ``no_contradiction``, ``clarified``).

`expand_conversation` turns the line into one ordinary entry per turn, in order, with id
``"{conversation id}#{n}"`` (n: the 1-based turn number) and `Entry.conversation` set
(`ConversationRef`: id, turn, turns, depends_on, criteria). Everything downstream sees
ordinary entries. `conversation_lines` groups them back for writing: a field every turn holds
with one value goes to the conversation line, unless it is one of a question's own
(`TURN_FIELDS`: the query, its gold and expected behaviour), which stays with each turn; so
writing a dataset read back from what was written gives the same bytes.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from assay.dataset.schema import ConversationRef, Entry, fast_entry
from assay.errors import Problem

__all__ = [
    "HISTORY_MODES",
    "TURN_FIELDS",
    "ConversationRef",
    "ConversationRollup",
    "by_conversation",
    "conversation_lines",
    "expand_conversation",
    "has_conversations",
    "history_of",
    "is_conversation",
    "rollup",
]

TURN_FIELDS = frozenset(
    {
        "query",
        "answerable",
        "expected_behavior",
        "acceptable_response_notes",
        "clarify_with",
        "false_premise",
        "must_acknowledge_gap",
        "behavior_reason",
        "evidence_paths",
        "reference_answer",
        "key_facts",
        "chunk_hashes",
        "structured_lookup",
        "ambiguous",
        "ambiguous_reason",
        "sql",
        "expected_tool_calls",
        "expected_label",
    }
)
"""A question's own fields: written with each turn, never hoisted to the conversation line."""

_LINE_ONLY = ("turns", "criteria")
_NOT_IN_TURN = ("id", "conversation", "turns", "criteria")

ProblemsOf = Callable[[ValidationError, str, "int | None"], list[Problem]]


def is_conversation(row: Any) -> bool:
    """Is this raw dataset line a conversation (it has ``turns``)?"""
    return isinstance(row, dict) and "turns" in row


_CONVERSATION = operator.attrgetter("conversation")


def has_conversations(entries: Iterable[Entry]) -> bool:
    """Does any entry belong to a conversation? (One C-level pass: scoring asks it of every
    dataset, most of which have none.)"""
    return any(map(_CONVERSATION, entries))


def by_conversation(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Conversation id -> its turn entries in turn order (entries of no conversation left out)."""
    out: dict[str, list[Entry]] = {}
    for e in entries:
        if e.conversation is not None:
            out.setdefault(e.conversation.id, []).append(e)
    for turns in out.values():
        turns.sort(key=lambda t: t.conversation.turn if t.conversation else 0)
    return out


def expand_conversation(
    row: dict[str, Any], *, file: str, line: int | None, problems_of: ProblemsOf
) -> tuple[list[Entry], list[Problem]]:
    """The turn entries of one conversation line, and every problem found in it (FILE:LINE,
    the field named ``turn N.field`` where a turn holds it). No entry when there is a problem."""
    problems: list[Problem] = []

    def bad(fld: str | None, msg: str) -> None:
        problems.append(Problem(file, line, fld, msg))

    cid = row.get("id")
    if not isinstance(cid, str) or not cid.strip():
        bad("id", "a conversation needs an id (a non-empty string)")
        cid = "?"
    if "query" in row:
        bad("query", "a conversation line has turns and no top-level query (each turn has one)")
    if "conversation" in row:
        bad("conversation", "is set by the loader from the turns; not written by hand")
    turns = row.get("turns")
    if not isinstance(turns, list) or not turns:
        bad("turns", "a conversation needs at least one turn (a list of objects with a query)")
        return [], problems
    criteria = row.get("criteria", [])
    if not isinstance(criteria, list) or any(
        not isinstance(c, str) or not c.strip() for c in criteria
    ):
        bad("criteria", "must be a list of check names (strings)")
        criteria = []
    base = {k: v for k, v in row.items() if k not in _LINE_ONLY}
    n = len(turns)
    out: list[Entry] = []
    for i, turn in enumerate(turns, 1):
        where = f"turn {i}"
        if not isinstance(turn, dict):
            bad(where, "a turn must be a JSON object with a query")
            continue
        stray = [k for k in _NOT_IN_TURN if k in turn]
        if stray:
            bad(f"{where}.{stray[0]}", "is not a turn's field (set it on the conversation line)")
            continue
        q = turn.get("query")
        if not isinstance(q, str) or not q.strip():
            bad(f"{where}.query", "a turn needs a query (a non-empty string)")
            continue
        deps = turn.get("depends_on", [])
        if not isinstance(deps, list) or any(
            not isinstance(d, int) or isinstance(d, bool) for d in deps
        ):
            bad(f"{where}.depends_on", "must be a list of earlier turn numbers (1-based)")
            continue
        wrong = [d for d in deps if not 1 <= d < i]
        if wrong:
            span = "turn 1 depends on no turn" if i == 1 else f"earlier turns are 1..{i - 1}"
            what = "a later turn" if wrong[0] > i else "no earlier turn"
            if wrong[0] == i:
                what = "itself"
            bad(f"{where}.depends_on", f"names turn {wrong[0]}, {what} ({span})")
            continue
        merged = base | {k: v for k, v in turn.items() if k != "depends_on"}
        merged["id"] = f"{cid}#{i}"
        try:
            e = fast_entry(merged) or Entry.model_validate(merged)
        except ValidationError as exc:
            for p in problems_of(exc, file, line):
                top = (p.field or "").split(".", 1)[0]
                fld = f"{where}.{p.field}" if top in turn else p.field
                problems.append(Problem(p.file, p.line, fld, p.message))
            continue
        # every field is checked above (a non-empty id, 1 <= each of depends_on < i, criteria
        # strings): built as validation would build it, without validating it again per turn
        e.conversation = ConversationRef.model_construct(
            id=cid, turn=i, turns=n, depends_on=tuple(deps), criteria=tuple(criteria)
        )
        out.append(e)
    return ([] if problems else out), problems


def conversation_lines(entries: Sequence[Entry]) -> Iterator[dict[str, Any]]:
    """The dataset lines of `entries`: an entry of no conversation as itself, the turns of a
    conversation (together and in turn order, as the loader gives them) as one ``turns``
    line. A conversation whose turns are not all there, or not together, is a ValueError
    naming it (a turn's number is its place: a conversation is written whole)."""
    i = 0
    while i < len(entries):
        e = entries[i]
        ref = e.conversation
        if ref is None:
            yield e.to_json_dict()
            i += 1
            continue
        group = list(entries[i : i + ref.turns])
        got = [(g.conversation.id, g.conversation.turn) if g.conversation else None for g in group]
        if got != [(ref.id, t) for t in range(1, ref.turns + 1)]:
            raise ValueError(
                f"conversation {ref.id!r}: its {ref.turns} turns are not all there together "
                f"in order (entry {e.id!r} starts them); a conversation is written whole"
            )
        yield _line(group)
        i += ref.turns


def _line(group: list[Entry]) -> dict[str, Any]:
    ref = group[0].conversation
    assert ref is not None
    dicts = []
    for g in group:
        d = g.to_json_dict()
        d.pop("id")
        d.pop("conversation", None)
        dicts.append(d)
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    top = {
        k: dicts[0][k]
        for k in keys
        if k not in TURN_FIELDS and all(k in d and d[k] == dicts[0][k] for d in dicts)
    }
    turns = []
    for g, d in zip(group, dicts, strict=True):
        t = {k: v for k, v in d.items() if k not in top}
        assert g.conversation is not None
        if g.conversation.depends_on:
            t["depends_on"] = list(g.conversation.depends_on)
        turns.append(t)
    line: dict[str, Any] = {"id": ref.id, **top, "turns": turns}
    if ref.criteria:
        line["criteria"] = list(ref.criteria)
    return line


HISTORY_MODES = ("own", "gold", "none")
"""What a system is told of a conversation's earlier turns: its own answers (``own``), the
gold reference answers (``gold``), or nothing (``none``: the no-memory baseline)."""


def history_of(
    entry: Entry,
    turns: Sequence[Entry],
    mode: str,
    answers: Callable[[str], str | None] | None = None,
) -> list[dict[str, str]]:
    """The history a system is given with `entry`: ``[{"role": "user" | "assistant",
    "content": str}]`` for each earlier turn of its conversation (`turns`, in turn order),
    oldest first; [] for turn 1, an entry of no conversation, and mode ``none``. The assistant's
    message is the system's own answer to that turn (``own``: ``answers(turn id)``, "" when
    it gave none) or the turn's ``reference_answer`` (``gold``; "" when it has none)."""
    if mode not in HISTORY_MODES:
        raise ValueError(f"history must be one of {', '.join(HISTORY_MODES)}, not {mode!r}")
    ref = entry.conversation
    if ref is None or mode == "none" or ref.turn == 1:
        return []
    out: list[dict[str, str]] = []
    for t in turns[: ref.turn - 1]:
        said = (answers(t.id) if answers is not None else None) if mode == "own" else None
        if mode == "gold":
            said = t.reference_answer
        out.append({"role": "user", "content": t.query})
        out.append({"role": "assistant", "content": said or ""})
    return out


@dataclass(frozen=True)
class ConversationRollup:
    """Scores rolled up per conversation (`rollup`): how many conversations and turns, and for
    each score the mean per conversation (the mean over a conversation's turns, then over the
    conversations) and, for a pass/fail score, the share of conversations whose every turn
    passes (for a score that counts a failure, ``higher_is_better=False`` such as
    ``abstained_when_should_answer``, a turn passes when it is 0)."""

    conversations: int
    turns: int
    values: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"conversations": self.conversations, "turns": self.turns, "scores": self.values}

    def lines(self) -> list[str]:
        """The report's lines: ``12 conversations, 30 turns.`` then one per score."""
        out = [f"{self.conversations} conversations, {self.turns} turns (per conversation:"]
        for name, v in self.values.items():
            if v["n"] == 0:
                continue
            part = f"  {name}: mean per conversation {v['mean']:.3f}"
            if v.get("every_turn") is not None:
                part += (
                    f"; every turn passes in {v['passed']} of {v['n']} conversations "
                    f"({v['every_turn']:.3f})"
                )
            out.append(part)
        out[-1] += ")"
        return out


def rollup(
    ids: Sequence[str],
    columns: Mapping[str, Sequence[float | None]],
    entries: Iterable[Entry],
    *,
    binary: Iterable[str] = (),
    failures: Iterable[str] = (),
) -> ConversationRollup | None:
    """Per-entry scores (`columns`: name -> one value per id of `ids`, None or NaN where the
    score abstained) rolled up over the conversations the ids belong to (`ConversationRollup`);
    None when no id is a conversation's turn. A conversation whose turns all abstain on a score
    is left out of that score's ``n``. `binary` names the pass/fail scores (values 0/1);
    `failures` those of them whose 1 is the failure (a turn passes them at 0)."""
    conv_of = {e.id: e.conversation.id for e in entries if e.conversation is not None}
    members: dict[str, list[int]] = {}
    for i, eid in enumerate(ids):
        cid = conv_of.get(eid)
        if cid is not None:
            members.setdefault(cid, []).append(i)
    if not members:
        return None
    passfail = set(binary)
    failing = set(failures)
    values: dict[str, dict[str, Any]] = {}
    for name, col in columns.items():
        means: list[float] = []
        every: list[bool] = []
        for idx in members.values():
            got = [float(v) for v in (col[i] for i in idx) if v is not None and not math.isnan(v)]
            if not got:
                continue
            means.append(sum(got) / len(got))
            passing = 0.0 if name in failing else 1.0
            every.append(all(v == passing for v in got))
        row: dict[str, Any] = {"n": len(means), "mean": sum(means) / len(means) if means else None}
        if name in passfail:
            row["passed"] = sum(every)
            row["every_turn"] = sum(every) / len(every) if every else None
        values[name] = row
    turns = sum(len(v) for v in members.values())
    return ConversationRollup(len(members), turns, values)
