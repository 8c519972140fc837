"""Key facts drafted from a reference answer, for an expert to confirm or edit.

An entry imported from a benchmark (FinanceBench) has a reference answer and no key facts. The
drafts say what the answer must carry, read from the reference alone:

* ``figure``: each figure with its unit, scale and period ("$3,502 million (FY2022)"), the
  clause that states it kept as the fact (so the figure reads with its words);
* ``polarity``: the Yes or No a yes/no answer opens with, with the question's statement
  ("Yes: Boeing's business subject to cyclicality");
* ``entity``: the named entities (proper names the question does not already name);
* ``direction``: the direction and negation words ("increased", "not");
* ``statement``: where none of those is there ("Customer deposits"), the first sentence.

They are stored apart from the expert's key facts, in ``metadata["draft_key_facts"]``, each
marked ``"drafted": true``: nobody verified them, so no check decides on them and no tier or
certificate counts them (`assay.dataset.tiers`). The workbench's reference task shows them for
an expert to confirm (confirming moves a draft into ``key_facts``) or edit. `assay keyfacts
DATASET` drafts them on demand (any dataset: CSV and HF-style imports included);
`assay import financebench` drafts them at import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.dataset import Entry
from assay.judge.numbers import Kind
from assay.judge.numeric import reference_figures
from assay.report import ReportMixin, Tabular

__all__ = ["DRAFTS_KEY", "KeyFactsReport", "draft_entries", "draft_key_facts", "keyfacts_file"]

DRAFTS_KEY = "draft_key_facts"
"""Where the drafts live in an entry's metadata."""

_DIRECTION_WORDS = re.compile(
    r"\b(?:increas\w*|decreas\w*|ris(?:e|es|ing)|rose|fell|fall\w*|grew|grow\w*|declin\w*|"
    r"improv\w*|worsen\w*|higher|lower|up|down|flat|unchanged|not|no longer|never)\b",
    re.IGNORECASE,
)


def _clause(text: str, start: int, end: int) -> str:
    """The clause around [start, end): cut at sentence ends, semicolons and ", and"."""
    left = max(text.rfind(c, 0, start) for c in (". ", "; ", "\n"))
    right_cands = [i for c in (". ", "; ", "\n") if (i := text.find(c, end)) >= 0]
    right = min(right_cands) if right_cands else len(text)
    return text[left + 1 if left >= 0 else 0 : right].strip(" .;")


def draft_key_facts(reference: str, query: str = "") -> list[dict[str, Any]]:
    """The drafted key facts of one reference answer (see the module docs), each a dict with
    ``fact``, ``kind``, ``drafted: true`` and, for a figure, its ``value``, ``unit``,
    ``scale`` and ``period``."""
    from assay.judge.meaning import (
        _local_periods,
        _Periods,
        _sentences,
        _split,
        analyse,
        yes_no,
    )
    from assay.judge.polarity import question_statement

    ref = reference.strip()
    if not ref:
        return []
    out: list[dict[str, Any]] = []
    said = yes_no(ref)
    if said is not None:
        statement = question_statement(query) if query else None
        word = "Yes" if said > 0 else "No"
        out.append(
            {
                "fact": f"{word}: {statement}" if statement else word,
                "kind": "polarity",
                "polarity": word.lower(),
                "drafted": True,
            }
        )
    sentences = _split(ref)
    # the question sets the unit of a bare figure ("in USD millions": "$1577.00" is $1,577m)
    for q in reference_figures(ref, question=query or None):
        clause = _clause(ref, q.start, q.end)
        home = next((s for s in sentences if s.start <= q.start < s.start + len(s.text)), None)
        periods = _local_periods(home, q) if home is not None else _Periods.of(clause)
        period = (
            ", ".join(f"FY{y}" for y in sorted(periods.fiscal or periods.years))
            + "".join(f" Q{n}" for n in sorted(periods.quarters))
        ).strip()
        unit = (
            q.currency or "currency"
            if q.kind is Kind.currency
            else {"percent": "%", "points": "pp", "number": ""}[q.kind.value]
        )
        out.append(
            {
                "fact": clause or q.text,
                "kind": "figure",
                "figure": q.text.strip(),
                "value": q.value,
                "unit": unit,
                "scale": q.scale,
                **({"period": period} if period else {}),
                "drafted": True,
            }
        )
    asked = {t.key for t in analyse(query)} if query else set()
    names: list[str] = []
    for a, b in _sentences(ref):
        run: list[str] = []
        for t in [*analyse(ref[a:b]), None]:
            if t is not None and t.proper and t.key not in asked:
                run.append(t.text)
                continue
            if run:
                names.append(" ".join(run))
                run = []
    out.extend({"fact": name, "kind": "entity", "drafted": True} for name in dict.fromkeys(names))
    words = [m.group(0).lower() for m in _DIRECTION_WORDS.finditer(ref)]
    if said is not None and words and words[0] == "no":
        words = words[1:]
    out.extend({"fact": w, "kind": "direction", "drafted": True} for w in dict.fromkeys(words))
    if not out and sentences:
        # nothing to pick out ("Customer deposits"): the answer's first sentence is the fact
        out.append({"fact": sentences[0].text.strip(), "kind": "statement", "drafted": True})
    return out


def draft_entries(entries: Iterable[Entry], *, replace: bool = False) -> tuple[list[Entry], int]:
    """The entries with drafts added where an entry has a reference answer and no key facts
    (and no drafts yet, unless ``replace``); and how many entries got drafts."""
    out: list[Entry] = []
    drafted = 0
    for e in entries:
        have = DRAFTS_KEY in e.metadata
        if e.key_facts or not e.reference_answer or (have and not replace):
            out.append(e)
            continue
        facts = draft_key_facts(e.reference_answer, e.query)
        meta = {**e.metadata, DRAFTS_KEY: facts}
        out.append(e.model_copy(update={"metadata": meta}))
        drafted += bool(facts)
    return out, drafted


@dataclass(frozen=True)
class KeyFactsReport(ReportMixin):
    """What `keyfacts_file` wrote."""

    dataset: str
    out: str
    entries: int
    drafted: int
    facts: dict[str, int]

    def tabular(self) -> Tabular:
        rows = [
            ["dataset", self.dataset],
            ["written", self.out],
            ["entries", str(self.entries)],
            ["entries with drafted key facts", str(self.drafted)],
            *([f"drafted {k} facts", str(n)] for k, n in sorted(self.facts.items())),
        ]
        return Tabular("assay keyfacts", ["field", "value"], rows, [self.summary()])

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.facts.items())) or "none"
        return (
            f"drafted key facts for {self.drafted} of {self.entries} entries ({kinds}) -> "
            f"{self.out}; marked drafted: an expert confirms them in the workbench's reference "
            "task before any check reads them"
        )


def keyfacts_file(
    dataset: str | Path, *, out: str | Path | None = None, replace: bool = False
) -> KeyFactsReport:
    """Draft key facts for every entry of `dataset` that has a reference answer and no key
    facts, and write the dataset (to `out`, default in place; atomically, manifest kept)."""
    from assay.dataset import load_dataset, write_dataset

    ds = load_dataset(dataset)
    entries, drafted = draft_entries(ds.entries, replace=replace)
    target = Path(out) if out is not None else Path(dataset)
    kinds: dict[str, int] = {}
    for e in entries:
        for f in e.metadata.get(DRAFTS_KEY) or []:
            kinds[str(f.get("kind"))] = kinds.get(str(f.get("kind")), 0) + 1
    write_dataset(
        target,
        entries,
        # other content under the same name would read as an unversioned change
        version=f"{ds.version}+keyfacts" if ds.version and drafted else None,
        index_version=ds.manifest.get("index_version"),
        changelog=f"drafted key facts for {drafted} entries (assay keyfacts)",
    )
    return KeyFactsReport(str(dataset), str(target), len(entries), drafted, kinds)
