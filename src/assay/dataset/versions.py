"""Does a dataset's version still name its content?

A dataset's version is what every score, run and ledger line records of it, so two files with one
version must hold one content. `write_dataset` records, beside the version it writes, the content
hash at that version (``manifest["version_content"] = {"version", "entries_hash"}``: the SHA-256
of the entries as canonical JSON, `assay.dataset.io.entries_hash`, so a file re-spelt with
other key order or spacing is the same content, and any changed value is not). A dataset edited afterwards (by hand, or by a
writer that kept the version) no longer has that hash: `content_changed_since_version` says so,
`assay validate` names it, and a gate that requires a certified set can refuse it.

What it cannot tell: a manifest without the record (written before it existed, or by hand), or
whose version was moved by hand past the one recorded (a bump, with no hash for the new version).
A dataset without a named version is known by its content hash and cannot drift.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from assay.dataset.io import VERSION_RECORD, Dataset, entries_hash, load_dataset, manifest_path

__all__ = [
    "VERSION_RECORD",
    "VersionCheck",
    "bump_version",
    "content_changed_since_version",
    "version_record",
]

_LAST_NUMBER = re.compile(r"(\d+)(?!.*\d)")


def bump_version(version: str | None) -> str:
    """The next version: the last run of digits goes up by one (1.4.2 -> 1.4.3, v7 -> v8); a
    version without digits gets ``.1`` appended; no version at all becomes ``1``."""
    if not version:
        return "1"
    m = _LAST_NUMBER.search(version)
    if m is None:
        return f"{version}.1"
    return version[: m.start()] + str(int(m.group(1)) + 1) + version[m.end() :]


Status = Literal["unchanged", "changed", "unknown", "unversioned"]


def version_record(manifest: dict[str, Any]) -> tuple[str | None, str | None]:
    """(version, entries hash) the manifest records as the content of a version; Nones if none."""
    rec = manifest.get(VERSION_RECORD)
    if not isinstance(rec, dict):
        return None, None
    version, digest = rec.get("version"), rec.get("entries_hash")
    return (str(version) if version else None), (str(digest) if digest else None)


@dataclass(frozen=True)
class VersionCheck:
    """Whether a dataset's content is still the content its version names.

    ``status``: ``unchanged``; ``changed`` (the content differs from the hash recorded at this
    version: edited without a version bump); ``unknown`` (the manifest records no hash for this
    version: cannot tell); ``unversioned`` (no named version: the version is the content hash).
    ``changed`` is True, False, or None when it cannot tell. Hashes are `entries_hash`es.
    """

    file: str
    status: Status
    version: str
    content_hash: str
    recorded_hash: str | None = None

    @property
    def changed(self) -> bool | None:
        return {"changed": True, "unknown": None}.get(self.status, False)

    @property
    def message(self) -> str:
        short = self.content_hash[:12]
        if self.status == "changed":
            return (
                f"content changed since version {self.version} was written (content "
                f"{short}, version {self.version} was {str(self.recorded_hash)[:12]}) and the "
                "version was not bumped: scores, runs and ledger lines made on either content "
                "name the same version; write it with a new version (`assay diff` shows what "
                "changed)"
            )
        if self.status == "unknown":
            return (
                f"cannot tell whether the content changed since version {self.version}: the "
                f"manifest ({manifest_path(self.file).name}) records no content hash for that "
                "version; writing the dataset with a new version records one"
            )
        if self.status == "unversioned":
            return f"no named version: the dataset is known by its content ({self.version})"
        return f"content is the content of version {self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "changed": self.changed,
            "version": self.version,
            "content_hash": self.content_hash,
            "recorded_hash": self.recorded_hash,
            "message": self.message,
        }


def content_changed_since_version(dataset: Dataset | str | Path) -> VersionCheck:
    """Whether `dataset` (a loaded `Dataset` or a path) still holds the content its manifest's
    version was written with. ``.changed`` is True when it does not (edited without a version
    bump), None when the manifest cannot tell, False otherwise; ``.message`` says which."""
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    file = ds.path or "<dataset>"
    named = ds.manifest.get("version")
    if not named:
        return VersionCheck(file, "unversioned", ds.version, entries_hash(ds.entries))
    now = entries_hash(ds.entries)
    rec_version, rec_hash = version_record(ds.manifest)
    if rec_hash is None or rec_version != str(named):
        return VersionCheck(file, "unknown", str(named), now, rec_hash)
    status: Status = "unchanged" if rec_hash == now else "changed"
    return VersionCheck(file, status, str(named), now, rec_hash)
