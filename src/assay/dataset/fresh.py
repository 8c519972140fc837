"""Sealed fresh samples: new entries labelled blind, measured once, then retired into the main set.

A regression set that every change is tested against slowly stops being a fair judge (see the
comparison ledger). A fresh sample restores an honest measurement: a file of new entries that no
one has tuned against. Its life:

1. ``seal``: the sample's SHA-256 content hash is recorded in its manifest
   (``fresh-2026-11.manifest.json`` beside ``fresh-2026-11.jsonl``) under ``"fresh"`` with
   ``status: "sealed"`` and an empty list of uses.
2. ``record_use``: every ``score`` / ``compare`` / ``gate`` against the sample appends a use
   (when, command, runs). The first use is the honest one. A later use warns loudly, and a
   strict caller (``gate``) refuses, unless ``reuse=True`` (``--reuse``). A sample whose content
   no longer matches the sealed hash is refused outright: it is not the sample that was sealed.
3. ``retire``: the entries are merged into the main set with provenance (``split`` set to the
   sample's name, ``added`` set to the sealing date where absent, ``source`` filled where absent)
   and the sample is closed (``status: "retired"``); further use is refused.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._io import sha256_file
from assay.dataset.io import (
    Dataset,
    load_dataset,
    load_manifest,
    manifest_path,
    save_manifest,
    write_dataset,
)
from assay.dataset.schema import Source
from assay.errors import DataError, Problem, UsageError

__all__ = [
    "FreshReuseError",
    "FreshUse",
    "fresh_name",
    "fresh_status",
    "record_use",
    "retire",
    "seal",
]


class FreshReuseError(UsageError):
    """A sealed fresh sample was about to be used again without ``--reuse``."""


@dataclass(frozen=True)
class FreshUse:
    """The outcome of recording one use of a fresh sample."""

    name: str
    uses: int
    reused: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uses": self.uses,
            "reused": self.reused,
            "message": self.message,
        }


def fresh_name(path: str | Path) -> str:
    p = Path(path)
    return p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def fresh_status(path: str | Path) -> dict[str, Any] | None:
    """The ``"fresh"`` block of the sample's manifest, or None when the file was never sealed."""
    block = load_manifest(path).get("fresh")
    if block is None:
        return None
    if not isinstance(block, dict):
        raise DataError(Problem(str(manifest_path(path)), None, "fresh", "must be a JSON object"))
    return block


def seal(path: str | Path, *, force: bool = False) -> dict[str, Any]:
    """Validate the sample and record its content hash; refuses to re-seal unless ``force``."""
    path = Path(path)
    ds = load_dataset(path)  # raises DataError naming every bad line
    if not ds.entries:
        raise DataError(Problem(str(path), None, None, "a fresh sample needs at least one entry"))
    manifest = load_manifest(path)
    old = manifest.get("fresh")
    if isinstance(old, dict) and not force:
        raise UsageError(
            f"{path} is already {old.get('status', 'sealed')} (sealed {old.get('sealed_at')}); "
            "pass --force to seal it again and reset its use count"
        )
    block = {
        "status": "sealed",
        "name": fresh_name(path),
        "sealed_at": _now(),
        "content_hash": sha256_file(path),
        "n_entries": len(ds.entries),
        "categories": {c: sum(e.category == c for e in ds.entries) for c in ds.categories()},
        "uses": [],
    }
    manifest["fresh"] = block
    save_manifest(path, manifest)
    return block


def record_use(
    path: str | Path,
    *,
    command: str,
    reuse: bool = False,
    strict: bool = False,
    runs: list[str] | None = None,
) -> FreshUse | None:
    """Record a use of a sealed sample; None when ``path`` is not a fresh sample.

    Raises `FreshReuseError` for a second use when ``strict`` and not ``reuse``; `UsageError`
    when the sample was retired; `DataError` when its content changed since sealing.
    """
    path = Path(path)
    manifest = load_manifest(path)
    block = manifest.get("fresh")
    if not isinstance(block, dict):
        return None
    name = str(block.get("name") or fresh_name(path))
    if block.get("status") == "retired":
        raise UsageError(
            f"fresh sample {name} was retired into {block.get('retired_into')} on "
            f"{block.get('retired_at')}; measure against the main set instead"
        )
    sealed_hash = block.get("content_hash")
    if sha256_file(path) != sealed_hash:
        raise DataError(
            Problem(
                str(path),
                None,
                None,
                f"fresh sample {name} changed since it was sealed (hash {str(sealed_hash)[:12]}); "
                "a sealed sample is measured as sealed. Seal a new sample instead",
            )
        )
    uses = list(block.get("uses", []))
    n = len(uses) + 1
    if n > 1 and not reuse:
        msg = (
            f"fresh sample {name} was already used {n - 1} time(s) (first: {uses[0].get('when')}, "
            f"{uses[0].get('command')}); a second look is no longer a blind measurement"
        )
        if strict:
            raise FreshReuseError(msg + ". Pass --reuse to proceed anyway (it will be recorded).")
    uses.append({"when": _now(), "command": command, "runs": list(runs or []), "reuse": n > 1})
    block["uses"] = uses
    manifest["fresh"] = block
    save_manifest(path, manifest)
    if n == 1:
        message = f"fresh sample {name}: first use recorded"
    else:
        message = f"WARNING: fresh sample {name} used {n} times; this use was recorded" + (
            " (--reuse)" if reuse else ""
        )
    return FreshUse(name, n, n > 1, message)


def retire(
    path: str | Path,
    *,
    into: str | Path,
    source: Source | None = None,
    split: str | None = None,
) -> Dataset:
    """Merge the sealed sample into the main set with provenance and close it.

    Each merged entry gets ``split`` (default: the sample's name), ``added`` (the sealing date
    when absent) and ``source`` (when absent and ``source`` is given). Ids already in the main set
    are an error (nothing is written).
    """
    path, into = Path(path), Path(into)
    block = fresh_status(path)
    if block is None:
        raise UsageError(f"{path} is not a sealed fresh sample (run `assay fresh seal` first)")
    if block.get("status") == "retired":
        raise UsageError(f"{path} was already retired into {block.get('retired_into')}")
    if sha256_file(path) != block.get("content_hash"):
        raise DataError(Problem(str(path), None, None, "fresh sample changed since it was sealed"))
    sample = load_dataset(path)
    main = load_dataset(into)
    clash = [e.id for e in sample.entries if e.id in main.by_id]
    if clash:
        raise DataError(
            [
                Problem(str(path), sample.lines.get(i), "id", f"id {i!r} already exists in {into}")
                for i in clash
            ]
        )
    name = str(block.get("name") or fresh_name(path))
    sealed_on = dt.date.fromisoformat(str(block.get("sealed_at", _now()))[:10])
    merged = list(main.entries)
    for e in sample.entries:
        update: dict[str, Any] = {"split": split or name}
        if e.added is None:
            update["added"] = sealed_on
        if e.source is None and source is not None:
            update["source"] = source
        meta = dict(e.metadata)
        meta.setdefault("fresh_sample", name)
        update["metadata"] = meta
        merged.append(e.model_copy(update=update))
    out = write_dataset(
        into,
        merged,
        changelog=f"retired fresh sample {name} ({len(sample.entries)} entries, "
        f"{len(block.get('uses', []))} use(s), content {str(block.get('content_hash'))[:12]})",
    )
    manifest = load_manifest(path)
    block |= {"status": "retired", "retired_at": _now(), "retired_into": str(into)}
    manifest["fresh"] = block
    save_manifest(path, manifest)
    return out
