"""Which entries may decide: label tiers, ambiguous entries, and the one filter at the file edge.

An entry's tier says who verified it:

* ``draft``: nobody. Everything generated (`assay synth questions`, failure and fresh-sample
  drafts from the logs, imports that name no reviewer) and everything nobody reviewed.
* ``silver``: one expert's word (one reviewer; a published benchmark's own annotators).
* ``gold``: two experts who agree, or an adjudication.

The tier is the entry's ``label_tier`` when it states one (the workbench's older
``expert-agreed`` / ``expert-adjudicated`` are read as gold by the schema). An entry without one
is read from its provenance (`tier_of`): ``reviewed_by`` >= 2 is gold, 1 silver, 0 draft; with no
``reviewed_by``, an entry the generators or the logs wrote (``source`` synthetic or log) is draft.
An entry that says nothing at all (no tier, no reviewers, a hand-made or benchmark source or
none) has no known tier.

'Not disclosed' has a higher bar. An unanswerable (``answerable: false``) or partial entry is
gold only with two reviewers *and* a recorded ``structured_lookup`` (the facts table or the
filing's XBRL searched, and what was found): a footnote one reader missed makes a correct refusal
look wrong. Short of either it is silver at most (`not_disclosed_shortfall` says what is missing;
`assay validate` names it, and the selection reports it). The synthetic room's own entries, which
nobody reviewed and whose gold is known by construction (``source: synthetic``, no
``reviewed_by``), are exempt: the room wrote the documents, so it knows what they leave out.

`select_tiers` is the filter every command that decides (score, check, compare, gate, the
leaderboard, the explorer, the pytest plugin) applies where it opens its dataset, through
`open_dataset`. By default it keeps gold. An entry with no known tier counts as draft, except in a
dataset where *no* entry has a known tier (a set written before tiers existed, a hand-made test
set): there nothing tells gold from draft, so the default keeps every entry and the report says
the set is untiered. Asking for tiers explicitly (``--tiers gold``) never takes that leniency.
Ambiguous entries (``ambiguous: true``) are always left out and listed apart, whatever the tiers.
A selection that leaves nothing is refused (`DataError`, exit 2), naming the tiers the dataset
holds and how to widen it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from assay.dataset.io import Dataset, load_dataset
from assay.dataset.schema import Entry, Source
from assay.dataset.tierreport import TIERS, Tier, TierReport
from assay.errors import DataError, UsageError

__all__ = [
    "DEFAULT_TIERS",
    "TIERS",
    "Tier",
    "TierReport",
    "not_disclosed_shortfall",
    "open_dataset",
    "parse_tiers",
    "select_tiers",
    "tier_contradiction",
    "tier_of",
]

DEFAULT_TIERS: tuple[Tier, ...] = ("gold",)
_GENERATED = (Source.synthetic, Source.log)


def tier_of(entry: Entry) -> Tier | None:
    """The entry's tier: its ``label_tier``, else read from ``reviewed_by`` (>= 2 gold, 1 silver,
    0 draft), else draft for a generated entry (``source`` synthetic or log); None when the
    entry says nothing of who verified it. An unanswerable or partial entry short of the higher
    bar (`not_disclosed_shortfall`) is silver at most (draft when nobody reviewed it)."""
    return _tier(entry, not_disclosed_shortfall(entry))


def _tier(entry: Entry, shortfall: str | None) -> Tier | None:
    """`tier_of` given the entry's `not_disclosed_shortfall` (read once by `select_tiers`)."""
    tier = _stated_tier(entry)
    if tier == "gold" and shortfall is not None:
        return "draft" if entry.reviewed_by == 0 else "silver"
    return tier


def _stated_tier(entry: Entry) -> Tier | None:
    if entry.label_tier is not None:
        return entry.label_tier
    n = entry.reviewed_by
    if n is not None:
        return "gold" if n >= 2 else "silver" if n == 1 else "draft"
    if entry.source in _GENERATED:
        return "draft"
    return None


def not_disclosed_shortfall(entry: Entry) -> str | None:
    """What an unanswerable or partial entry that states (or would be read as) gold lacks of the
    higher bar: two reviewers and a recorded ``structured_lookup``; None when it has both, is not
    gold, is answerable, or is the synthetic room's gold by construction (``source: synthetic``
    and no ``reviewed_by``)."""
    if entry.answerable is True or _stated_tier(entry) != "gold":
        return None
    n = entry.reviewed_by
    if n is None and entry.source is Source.synthetic:
        return None
    missing = []
    if n is None or n < 2:
        missing.append(
            "a second reviewer (reviewed_by is not recorded)"
            if n is None
            else f"a second reviewer (reviewed_by is {n})"
        )
    if entry.structured_lookup is None:
        missing.append(
            "a structured-data lookup (structured_lookup: the facts table or XBRL searched, "
            "and what was found)"
        )
    if not missing:
        return None
    what = "an unanswerable" if entry.answerable is False else "a partial"
    return (
        f"{what} entry is gold only with two reviewers and a structured-data lookup; it lacks "
        + " and ".join(missing)
        + ", so it counts as silver at most"
    )


def tier_contradiction(entry: Entry) -> str | None:
    """What is wrong when an entry's stated ``label_tier`` contradicts its ``reviewed_by``
    (gold needs two reviewers, silver one, a draft none); None when they agree or either is
    missing. An adjudicated entry counts its adjudicator among its reviewers."""
    tier, n = entry.label_tier, entry.reviewed_by
    if tier is None or n is None:
        return None
    if tier == "gold" and n < 2:
        return f"gold needs two experts or an adjudication, but reviewed_by is {n}"
    if tier == "silver" and n != 1:
        return f"silver is one expert's label, but reviewed_by is {n}"
    if tier == "draft" and n > 0:
        return f"a draft means nobody reviewed it, but reviewed_by is {n}"
    return None


def parse_tiers(tiers: str | Iterable[str] | None) -> tuple[Tier, ...] | None:
    """``"gold,silver"`` or a list of tier names -> a tuple of tiers (None stays None: the
    default). An unknown name, or none at all, is a `UsageError` naming the tiers there are."""
    if tiers is None:
        return None
    names = [t.strip() for t in (tiers.split(",") if isinstance(tiers, str) else tiers)]
    names = [t for t in names if t]
    bad = [t for t in names if t not in TIERS]
    if bad or not names:
        what = f"unknown tier {', '.join(map(repr, bad))}" if bad else "no tier named"
        raise UsageError(f"--tiers: {what}; the tiers are {', '.join(TIERS)} (e.g. gold,silver)")
    return tuple(t for t in TIERS if t in names)


def select_tiers(
    dataset: Dataset, tiers: str | Iterable[str] | None = None
) -> tuple[Dataset, TierReport]:
    """The entries of ``tiers`` (default: gold; see the module docstring for entries without a
    tier) minus the ambiguous ones, as a `Dataset` that keeps the file's path, content hash,
    manifest and line numbers (so its version, ledger and fresh sample are the file's), and
    the report of what was left out (also on the returned dataset's ``tiers``).

    Refuses (`DataError`) a selection that leaves nothing, naming the tiers the dataset holds
    and the ``--tiers`` that would widen it; an unknown tier name is a `UsageError`."""
    asked = parse_tiers(tiers)
    want = set(asked or DEFAULT_TIERS)
    free: list[Entry] = []  # every entry not ambiguous, kept when no entry has a tier
    kept: list[Entry] = []
    kept_n: Counter[str] = Counter()
    out_n: Counter[str] = Counter()
    ambiguous: list[str] = []
    short_of_gold: list[str] = []
    unknown = 0
    for e in dataset.entries:  # one pass
        # an answerable entry is short of nothing (`not_disclosed_shortfall`): asked once
        short = None if e.answerable is True else not_disclosed_shortfall(e)
        t = _tier(e, short)
        if t is None:
            unknown += 1
        if e.ambiguous:
            ambiguous.append(e.id)
            continue
        if short is not None:
            short_of_gold.append(e.id)
        free.append(e)
        tier = t or "draft"
        if tier in want:
            kept.append(e)
            kept_n[tier] += 1
        else:
            out_n[tier] += 1
    untiered = asked is None and unknown == len(dataset.entries)
    if untiered:
        kept, kept_n, out_n = free, Counter({"untiered": len(free)} if free else {}), Counter()
    report = TierReport(
        tiers=tuple(t for t in TIERS if t in want) if not untiered else ("any",),
        kept=dict(kept_n),
        left_out=dict(out_n),
        ambiguous=tuple(ambiguous),
        untiered=untiered,
        unknown=0 if untiered else unknown,
        short_of_gold=tuple(short_of_gold),
    )
    if not kept:
        raise DataError(report.refusal(), file=dataset.path or "<dataset>", field="label_tier")
    if len(kept) == len(dataset.entries):
        selected = copy.copy(dataset)  # the same entries: their index by id is the file's
    else:
        ids = {e.id for e in kept}
        selected = Dataset(
            kept,
            path=dataset.path,
            content_hash=dataset.content_hash,
            manifest=dataset.manifest,
            lines={i: n for i, n in dataset.lines.items() if i in ids},
        )
    selected.tiers = report
    return selected, report


def open_dataset(path: str | Path, tiers: str | Iterable[str] | None = None) -> Dataset:
    """`load_dataset` then `select_tiers`: how every command that scores, checks, compares or
    gates opens its dataset (the tier report is on the returned dataset's ``tiers``)."""
    return select_tiers(load_dataset(path), tiers)[0]
