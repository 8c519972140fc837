"""The explorer's conversations: the turns of a conversation (`assay.dataset.conversations`)
gathered back into one view, each run's values rolled up per conversation.

A turn entry's row of the bundle carries its ``conversation`` (id, turn, turns, depends_on,
criteria); the bundle's ``conversations`` holds one row per conversation: its turns in order
and, per run, the retrieval metrics and the answer and conversation checks rolled up over its
turns by `assay.dataset.rollup`, the function `assay score` and `assay check` roll up with (the
mean over the conversation's turns; for a pass/fail score, whether every turn passes), its
status (every turn complete at k), and each binary check's verdict over the turns (``fail``
when a turn fails it, ``pass`` when every turn it rates passes; none when it rates no turn). A
check whose True is an error (registered with ``higher_is_better=False``) fails a turn when
True.

Nothing here runs for a dataset without conversations (`assay.dataset.has_conversations`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.metrics import parse

if TYPE_CHECKING:
    from assay.dataset import ConversationRollup, Entry
    from assay.score import RetrievalScores

__all__ = ["check_verdict", "conversation_of", "conversation_rows"]


def conversation_of(entry: Entry) -> dict[str, Any] | None:
    """The turn's place in its conversation as the bundle shows it (None for an entry of no
    conversation)."""
    ref = entry.conversation
    if ref is None:
        return None
    return {
        "id": ref.id,
        "turn": ref.turn,
        "turns": ref.turns,
        "depends_on": list(ref.depends_on),
        "criteria": list(ref.criteria),
    }


def _error_check(name: str) -> bool | None:
    """True for a binary check whose True is an error, False for a pass/fail check, None for a
    check that is not binary (a share, a count) or not registered here."""
    from assay.judge import get_check
    from assay.judge.registry import RegistryError

    try:
        c = get_check(name)
    except RegistryError:
        return None
    if c.kind != "binary":
        return None
    return not c.higher_is_better


def check_verdict(name: str, values: Sequence[Any], *, error: bool | None = None) -> str | None:
    """A binary check's verdict over a conversation's turns (`values`, one per turn, None where
    it abstains): ``fail`` when a turn fails it, ``pass`` when every turn it rates passes,
    ``abstain`` when it rates none; None for a check that is not binary. `error` (whether the
    check's True is an error) is read from the registry unless given."""
    error = _error_check(name) if error is None else error
    if error is None:
        return None
    rated = [v for v in values if isinstance(v, bool)]
    if not rated:
        return "abstain"
    bad = any(v is error for v in rated)
    return "fail" if bad else "pass"


def _binary_metrics(names: Sequence[str]) -> list[str]:
    """The pass/fail metrics of `names` (complete@k), as `assay score`'s roll-up reads them."""
    out = []
    for m in names:
        try:
            if parse(m).binary:
                out.append(m)
        except ValueError:
            continue
    return out


def _rated(rolled: ConversationRollup | None) -> dict[str, dict[str, Any]]:
    """The roll-up's values of the scores some turn has (a score every turn abstains on is
    left out: there is nothing to show)."""
    if rolled is None:
        return {}
    return {k: v for k, v in rolled.values.items() if v["n"]}


def conversation_rows(
    entries: Sequence[Entry],
    scores: Mapping[str, RetrievalScores],
    checks: Mapping[str, tuple[Sequence[str], Mapping[str, Mapping[str, Any]]]],
    *,
    headline: str,
) -> list[dict[str, Any]]:
    """One row per conversation of `entries` (in the order its first turn comes): its id,
    category, criteria and turn ids in order, and per run (``scores``: run name -> its
    `RetrievalScores`; ``checks``: run name -> (the checks its report ran, id -> check row))
    the roll-up of every shown metric and every check over its turns (`assay.dataset.rollup`),
    its ``status`` (``pass`` when every turn is complete at k by `headline`, ``fail`` when one
    is not, ``unscored`` when none is scored) and each binary check's ``verdicts``
    (`check_verdict`, where it rates a turn). A score no turn has is left out."""
    from assay.dataset import by_conversation, rollup

    convs = by_conversation(entries)
    runs = list(dict.fromkeys([*scores, *checks]))
    positions = {n: {eid: i for i, eid in enumerate(s.ids)} for n, s in scores.items()}
    metric_names = {n: [m for m in s.metric_names if m in s.per_entry] for n, s in scores.items()}
    errors = {c: _error_check(c) for names, _ in checks.values() for c in names}
    binary_checks = {
        n: [c for c in names if errors[c] is not None] for n, (names, _) in checks.items()
    }
    binary_metrics = {n: _binary_metrics(m) for n, m in metric_names.items()}
    values = {n: {m: s.per_entry[m].tolist() for m in metric_names[n]} for n, s in scores.items()}
    out = []
    for cid, turns in convs.items():
        ids = [t.id for t in turns]
        first = turns[0]
        assert first.conversation is not None
        per_run: dict[str, Any] = {}
        for name in runs:
            r: dict[str, Any] = {"metrics": {}, "checks": {}, "verdicts": {}, "status": None}
            s = scores.get(name)
            if s is not None:
                pos = positions[name]
                at = [pos.get(i) for i in ids]
                cols = {
                    m: [None if j is None else values[name][m][j] for j in at]
                    for m in metric_names[name]
                }
                rolled = rollup(ids, cols, turns, binary=binary_metrics[name])
                r["metrics"] = _rated(rolled)
                head = r["metrics"].get(headline) or {}
                every = head.get("every_turn")
                r["status"] = "unscored" if every is None else ("pass" if every else "fail")
            if name in checks:
                names, rows = checks[name]
                got = [rows.get(i) or {} for i in ids]
                cols_c = {c: [g.get(c) for g in got] for c in names}
                rolled = rollup(
                    ids,
                    cols_c,
                    turns,
                    binary=binary_checks[name],
                    failures=[c for c in binary_checks[name] if errors[c]],
                )
                r["checks"] = _rated(rolled)
                for c in binary_checks[name]:
                    v = check_verdict(c, cols_c[c], error=errors[c])
                    if v is not None and v != "abstain":
                        r["verdicts"][c] = v
            per_run[name] = r
        out.append(
            {
                "id": cid,
                "category": first.category,
                "criteria": list(first.conversation.criteria),
                "turns": ids,
                "follow_ups": [
                    t.id for t in turns if t.conversation is not None and t.conversation.depends_on
                ],
                "runs": per_run,
            }
        )
    return out
