"""What a comparison pairs: turns (each entry) or conversations (``--pair``).

With ``pair="turn"`` (the default) every entry is a pair, and the turns of one conversation are
clustered by conversation (`assay.dataset.clustering`, ``--cluster auto``). With
``pair="conversation"`` each conversation is one pair: a series' value for it is made from its
turns' values (`per_conversation`):

* a retrieval metric or a graded check: the mean over the turns that have a value (a graded
  series);
* a binary check (or judge verdict): 1 when every turn with a value passes, else 0 ("every
  turn passes"); for a check that counts a failure (``higher_is_better=False``, such as
  ``abstained_when_should_answer``) 1 when any turn fails, so lower stays better;
* a count: the sum over the turns.

A conversation whose turns all abstain abstains. An entry of no conversation is a unit of its
own. The units are then independent, so no clustering is applied.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assay.compare.series import RunSeries, Series, SeriesKind
from assay.dataset import Entry
from assay.errors import UsageError

__all__ = ["PAIRS", "check_pair", "pair_note", "per_conversation", "units_of", "unrated_units"]

PAIRS = ("turn", "conversation")


def check_pair(pair: str) -> str:
    if pair not in PAIRS:
        raise UsageError(f"--pair must be turn or conversation, not {pair!r}")
    return pair


def units_of(entries: Sequence[Entry]) -> dict[str, str]:
    """Entry id -> the unit it is paired in: its conversation's id, else its own id."""
    return {e.id: e.conversation.id if e.conversation else e.id for e in entries}


def unrated_units(
    unrated: dict[str, frozenset[str]], entries: Sequence[Entry]
) -> dict[str, frozenset[str]]:
    """`assay.compare.gate.unrated_entries` in conversation units: a conversation is unrated by
    design by a check when none of its turns is rated (a conversation with one rated turn has a
    value, so its abstention counts)."""
    unit = units_of(entries)
    members: dict[str, list[str]] = {}
    for e in entries:
        members.setdefault(unit[e.id], []).append(e.id)
    return {
        name: frozenset(u for u, ids in members.items() if all(i in ids_out for i in ids))
        for name, ids_out in unrated.items()
    }


def _rolled(s: Series, unit: dict[str, str]) -> Series:
    order: dict[str, list[int]] = {}
    for i, eid in enumerate(s.ids):
        order.setdefault(unit.get(eid, eid), []).append(i)
    vals = s.values
    out = np.full(len(order), np.nan)
    kind: SeriesKind = s.kind
    if s.source == "metric" or s.kind == "graded":
        kind = "graded"
    for j, idx in enumerate(order.values()):
        x = vals[idx]
        x = x[~np.isnan(x)]
        if not len(x):
            continue
        if kind == "graded":
            out[j] = float(np.mean(x))
        elif kind == "binary":
            # a failure-counting check: the conversation fails when any turn does
            out[j] = float(np.all(x == 1.0) if s.higher_is_better else np.any(x == 1.0))
        else:
            out[j] = float(np.sum(x))
    return Series(s.name, kind, tuple(order), out, s.higher_is_better, s.source)


def per_conversation(rs: RunSeries, entries: Sequence[Entry]) -> RunSeries:
    """The run's series with one value per conversation (module docs); each conversation's
    row (``groups``) is its first turn's."""
    unit = units_of(entries)
    groups: dict[str, str] = {}
    for eid, g in rs.groups.items():
        groups.setdefault(unit.get(eid, eid), g)
    return RunSeries(
        series={n: _rolled(s, unit) for n, s in rs.series.items()},
        groups=groups,
        by=rs.by,
        run_hash=rs.run_hash,
        run_path=rs.run_path,
        dataset_version=rs.dataset_version,
        index_version=rs.index_version,
        room=rs.room,
        k=rs.k,
        level=rs.level,
        scores=rs.scores,
    )


def pair_note(entries: Sequence[Entry]) -> str:
    """What a comparison paired by conversation says of it."""
    n = len(set(units_of(entries).values()))
    return (
        f"Paired by conversation (--pair conversation): {n} pairs, one per conversation (an "
        "entry of no conversation is its own); a conversation's value is the mean over its "
        "turns for metrics and graded checks, 1 when every turn passes for binary checks, "
        "the sum for counts. Pairs are independent: no clustering."
    )
