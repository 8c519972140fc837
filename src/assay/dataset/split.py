"""Seeded, stratified, grouped splits of a dataset.

* Stratified: each stratum (value of ``stratify``, ``category`` by default) is split on its own so
  every stratum gets close to ``test_size`` of its entries on the test side.
* Grouped: entries sharing a group key (``group_by``, a dotted field such as
  ``metadata.fact_ids``) always land on the same side, so a fact, a conflict or a document never
  leaks from train into test. A list field groups by *every* element: entries sharing any
  element end up in one group, transitively (union-find), so an entry about facts A and B and
  another about B and C stay with a third about C. Entries without the field are groups of one;
  a field that no entry has is an error, not a split without groups. The turns of one
  conversation are always one group (joined with any ``group_by`` group), so a split never
  separates them. A group whose members
  span several strata is assigned to its most common stratum (ties: alphabetical) and counted in
  the report.
* Algorithm, per stratum: groups are ordered by key, shuffled with the stratum's own stream
  (derived from ``seed`` and the stratum name), then stably sorted by size, largest first; each
  group goes to the test side when that brings the test count closer to
  ``round(test_size * n_stratum)``, ties going to train. Largest-first keeps the achieved share
  close to the target when groups are big; the shuffle makes the choice among equals random.

The result reports, per stratum, the entries, the target and the achieved share.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.dataset.schema import Entry
from assay.errors import DataError, Problem
from assay.report import ReportMixin, Tabular
from assay.stats.bootstrap import group_generator

__all__ = ["SplitResult", "StratumReport", "field_value", "split_dataset", "split_entries"]

_MISSING = object()


def field_value(entry: Entry, dotted: str) -> Any:
    """The value at a dotted path (``category``, ``metadata.fact_id``); a sentinel when absent."""
    cur: Any = entry.to_json_dict()
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return _MISSING
    return cur


def _key(value: Any) -> str:
    if isinstance(value, list | dict):
        import json

        return json.dumps(value, sort_keys=True)
    return str(value)


def _no_group_field(entries: Sequence[Entry], group_by: str) -> str:
    """Why nothing can be grouped: the field is on no entry; the metadata keys entries do have."""
    have = sorted({k for e in entries for k in e.metadata})
    hint = f" (entries' metadata has: {', '.join(have[:12])})" if have else ""
    return (
        f"no entry has {group_by!r}, so nothing would be grouped and every entry would be a "
        f"group of one{hint}"
    )


def _groups(entries: Sequence[Entry], keys_of: list[list[str]]) -> list[str]:
    """Each entry's group: the entries whose keys share any element, joined transitively
    (union-find), named by their smallest key; an entry without keys is a group of one."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for keys in keys_of:
        for k in keys:
            parent.setdefault(k, k)
        for k in keys[1:]:
            a, b = find(keys[0]), find(k)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the smaller key names the group
    return [
        f"g:{find(keys[0])}" if keys else f"id:{e.id}"
        for e, keys in zip(entries, keys_of, strict=True)
    ]


@dataclass(frozen=True)
class StratumReport:
    stratum: str
    n: int
    n_test: int
    target: int
    groups: int

    @property
    def achieved(self) -> float:
        return self.n_test / self.n if self.n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "stratum": self.stratum,
            "n": self.n,
            "n_test": self.n_test,
            "target": self.target,
            "groups": self.groups,
            "achieved": round(self.achieved, 6),
        }


@dataclass
class SplitResult(ReportMixin):
    train: list[Entry]
    test: list[Entry]
    strata: list[StratumReport]
    test_size: float
    seed: int
    stratify: str | None
    group_by: str | None
    groups_spanning_strata: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def achieved(self) -> float:
        n = len(self.train) + len(self.test)
        return len(self.test) / n if n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_size": self.test_size,
            "seed": self.seed,
            "stratify": self.stratify,
            "group_by": self.group_by,
            "n_train": len(self.train),
            "n_test": len(self.test),
            "achieved": round(self.achieved, 6),
            "groups_spanning_strata": self.groups_spanning_strata,
            "strata": [s.to_dict() for s in self.strata],
            "notes": self.notes,
        }

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        header = ["stratum", "n", "groups", "test target", "test", "achieved"]
        body = [
            [s.stratum, str(s.n), str(s.groups), str(s.target), str(s.n_test), f"{s.achieved:.3f}"]
            for s in self.strata
        ]
        n = len(self.train) + len(self.test)
        body.append(
            ["all", str(n), str(sum(s.groups for s in self.strata)),
             str(sum(s.target for s in self.strata)), str(len(self.test)), f"{self.achieved:.3f}"]
        )  # fmt: skip
        return header, body

    def tabular(self) -> Tabular:
        header, body = self._rows()
        return Tabular(
            f"Split: test share {self.test_size:g}, seed {self.seed}",
            header,
            body,
            list(self.notes),
            emphasis={"all"},
        )

    def to_markdown(self) -> str:
        header, body = self._rows()
        lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines) + "\n" + "".join(f"\n{n}" for n in self.notes) + "\n"

    def to_table(self) -> Any:
        from rich.table import Table

        header, body = self._rows()
        t = Table(
            title=f"Split: test share {self.test_size:g}, seed {self.seed}, stratified by "
            f"{self.stratify or '-'}, grouped by {self.group_by or '-'}",
            title_justify="left",
        )
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right")
        for r in body:
            t.add_row(*r, style="bold" if r[0] == "all" else None, end_section=r is body[-2])
        if self.notes:
            t.caption = "\n".join(self.notes)
        return t


def split_entries(
    entries: Sequence[Entry],
    *,
    test_size: float = 0.5,
    stratify: str | None = "category",
    group_by: str | None = None,
    seed: int = 0,
    file: str = "<dataset>",
) -> SplitResult:
    """Split entries into train and test (input order kept within each side)."""
    if not 0.0 < test_size < 1.0:
        raise ValueError("test_size must be strictly between 0 and 1")
    if not entries:
        raise DataError("no entries to split", file=file)
    problems: list[Problem] = []
    strata_of: list[str] = []
    keys_of: list[list[str]] = []
    for e in entries:
        s = "all" if stratify is None else field_value(e, stratify)
        if s is _MISSING:
            problems.append(
                Problem(file, None, stratify, f"entry {e.id} has no {stratify!r} to stratify by")
            )
            s = ""
        strata_of.append(_key(s))
        g = _MISSING if group_by is None else field_value(e, group_by)
        if g is _MISSING or g is None or g == []:
            keys_of.append([])
        elif isinstance(g, list):
            keys_of.append([_key(v) for v in g])
        else:
            keys_of.append([_key(g)])
    if problems:
        raise DataError(problems)
    if group_by is not None and not any(keys_of):
        raise DataError(_no_group_field(entries, group_by), file=file, field=group_by)
    for e, keys in zip(entries, keys_of, strict=True):
        if e.conversation is not None:  # a conversation's turns stay on one side
            keys.append(_key(["conversation", e.conversation.id]))
    groups_of = _groups(entries, keys_of)
    members: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups_of):
        members[g].append(i)
    spanning = 0
    stratum_groups: dict[str, list[str]] = defaultdict(list)
    for g in sorted(members):
        counts = Counter(strata_of[i] for i in members[g])
        if len(counts) > 1:
            spanning += 1
        top = max(counts.values())
        stratum_groups[min(s for s, c in counts.items() if c == top)].append(g)
    in_test = np.zeros(len(entries), dtype=bool)
    targets: dict[str, int] = {}
    for stratum in sorted(stratum_groups):
        groups = stratum_groups[stratum]
        rng = group_generator(seed, stratum)
        order = [groups[i] for i in rng.permutation(len(groups))]
        order.sort(key=lambda g: -len(members[g]))  # stable: random among equal sizes
        n = sum(len(members[g]) for g in groups)
        target = round(test_size * n)
        taken = 0
        for g in order:
            size = len(members[g])
            if abs(taken + size - target) < abs(taken - target):
                taken += size
                in_test[members[g]] = True
        targets[stratum] = target
    # report by each entry's own stratum (a spanning group may pull a few entries across)
    strata_arr = np.asarray(strata_of, dtype=object)
    reports: list[StratumReport] = []
    for stratum in sorted(set(strata_of)):
        mask = strata_arr == stratum
        n_s = int(mask.sum())
        reports.append(
            StratumReport(
                stratum,
                n_s,
                int(in_test[mask].sum()),
                targets.get(stratum, round(test_size * n_s)),
                len({groups_of[i] for i in np.flatnonzero(mask)}),
            )
        )
    notes = []
    if spanning:
        notes.append(
            f"{spanning} group(s) span several strata; each went to its most common stratum"
        )
    return SplitResult(
        train=[e for e, t in zip(entries, in_test, strict=True) if not t],
        test=[e for e, t in zip(entries, in_test, strict=True) if t],
        strata=reports,
        test_size=test_size,
        seed=seed,
        stratify=stratify,
        group_by=group_by,
        groups_spanning_strata=spanning,
        notes=notes,
    )


def split_dataset(
    dataset: str | Path,
    *,
    test_size: float = 0.5,
    stratify: str | None = "category",
    group_by: str | None = None,
    seed: int = 0,
    train_out: str | Path | None = None,
    test_out: str | Path | None = None,
) -> SplitResult:
    """Split a dataset file into train and test files; what ``assay split`` runs.

    Each side is written (atomically, after every output path is checked) as a dataset with
    ``split`` set on every entry, versioned ``<parent version>+<side>.s<seed>``, bound to the
    parent's index, with the split's parameters in its changelog. Defaults:
    ``<name>.train.jsonl`` and ``<name>.test.jsonl`` beside the dataset.
    """
    from assay._io import check_outputs
    from assay.dataset.io import load_dataset, manifest_path, write_dataset
    from assay.errors import UsageError

    if not 0 < test_size < 1:
        raise UsageError("--test-size must be strictly between 0 and 1")
    dataset = Path(dataset)
    name = dataset.name.removesuffix(".jsonl")
    train_path = Path(train_out) if train_out else dataset.with_name(f"{name}.train.jsonl")
    test_path = Path(test_out) if test_out else dataset.with_name(f"{name}.test.jsonl")
    outs = [train_path, test_path]
    check_outputs([*outs, *map(manifest_path, outs)], [dataset, manifest_path(dataset)])
    ds = load_dataset(dataset)
    res = split_entries(
        ds.entries,
        test_size=test_size,
        stratify=stratify,
        group_by=group_by,
        seed=seed,
        file=str(dataset),
    )
    params = (
        f"split of {ds.version}: test_size={test_size:g} stratify={stratify or 'none'} "
        f"group_by={group_by} seed={seed}"
    )
    for side, entries, path in (("train", res.train, train_path), ("test", res.test, test_path)):
        write_dataset(
            path,
            [e.model_copy(update={"split": side}) for e in entries],
            version=f"{ds.version}+{side}.s{seed}",
            changelog=params,
            index_version=ds.manifest.get("index_version"),
        )
    return res
