"""Which cluster each entry belongs to: ``--cluster FIELD`` of score, compare and gate.

``FIELD`` is

* ``doc``: the document of the entry's evidence (its first anchor, home role first, or the
  document part of its first chunk id ``doc/page/n~hash``);
* ``company``: the entry's ``metadata.company`` (FinanceBench and the synthetic room record it);
* ``conversation``: the conversation the entry is a turn of (`Entry.conversation`);
* any other field `assay.dataset.groups` can group by (``metadata.FIELD`` included);
* ``none``: no clustering; ``auto`` (the default): ``conversation`` when the dataset has
  conversations (the turns of one conversation are not independent draws), else ``doc`` when
  the dataset has more than one entry per document on average, else none.

An entry without the value (no evidence: an unanswerable question; no such field) is a cluster
of its own. The statistics are `assay.stats.clusters`.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.dataset.grouping import NONE, groups
from assay.dataset.schema import Anchor, Entry
from assay.errors import DataError, Problem, UsageError
from assay.stats.clusters import Clustering

__all__ = ["AUTO", "NO_CLUSTER", "cluster_labels", "clustering_for", "evidence_doc"]

AUTO = "auto"
NO_CLUSTER = "none"


def evidence_doc(entry: Entry) -> str | None:
    """The document of the entry's evidence: its first home anchor's, else its first anchor's,
    else the document part of its first chunk id; None without evidence."""
    first: str | None = None  # the first chunk id
    anchor: Anchor | None = None  # the first anchor
    for path in entry.evidence_paths:
        for piece in path:
            for a in piece:
                if isinstance(a, str):
                    if first is None:
                        first = a
                elif isinstance(a, Anchor):
                    if a.role == "home":
                        return a.doc
                    if anchor is None:
                        anchor = a
    if anchor is not None:
        return anchor.doc
    if first is not None:
        return first.rsplit("/", 2)[0] if first.count("/") >= 2 else first
    return None


def cluster_labels(
    entries: Sequence[Entry], field: str, *, file: str = "<dataset>"
) -> dict[str, str]:
    """{entry id: cluster label}; an entry without the value is a cluster of its own."""
    if field == "conversation":
        return {
            e.id: f"conversation:{e.conversation.id}" if e.conversation else f"entry:{e.id}"
            for e in entries
        }
    if field == "doc":
        out: dict[str, str] = {}
        for e in entries:
            d = evidence_doc(e)
            out[e.id] = f"doc:{d}" if d is not None else f"entry:{e.id}"
        return out
    try:
        rows = groups(entries, "metadata.company" if field == "company" else field, file=file)
    except DataError as exc:  # a typo: name the field as --cluster, with what it takes
        p = exc.problems[0]
        raise DataError(
            Problem(
                p.file,
                p.line,
                p.field,
                f"no entry has {p.field}; cannot cluster by it (--cluster takes doc, company, "
                "conversation, none, or a field or metadata.FIELD the entries have)",
            )
        ) from None
    return {i: (f"{field}:{v}" if v != NONE else f"entry:{i}") for i, v in rows.items()}


def clustering_for(
    entries: Sequence[Entry], field: str | None = AUTO, *, file: str = "<dataset>"
) -> Clustering | None:
    """The clustering ``field`` asks for (see the module); None when there is none."""
    if field is None or field == NO_CLUSTER:
        return None
    if not field or field != field.strip():
        raise UsageError(f"--cluster needs a field name, doc, company, auto or none, not {field!r}")
    if field == AUTO and any(e.conversation is not None for e in entries):
        return Clustering("conversation", cluster_labels(entries, "conversation", file=file))
    if field == AUTO:
        labels = cluster_labels(entries, "doc", file=file)
        with_doc = [v for v in labels.values() if v.startswith("doc:")]
        docs = set(with_doc)
        if not docs or len(with_doc) / len(docs) <= 1.0:
            return None
        return Clustering("doc", labels)
    return Clustering(field, cluster_labels(entries, field, file=file))
