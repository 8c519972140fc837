"""Which cluster each entry belongs to: ``--cluster FIELD`` of score, compare and gate.

``FIELD`` is

* ``doc``: the document of the entry's evidence (its first anchor, home role first, or the
  document part of its first chunk id, ``doc#fragment`` or ``doc/page/n~hash``);
* ``company``: the entry's ``metadata.company`` (FinanceBench and the synthetic room record it);
* ``conversation``: the conversation the entry is a turn of (`Entry.conversation`);
* any other field `assay.dataset.groups` can group by (``metadata.FIELD`` included);
* ``none``: no clustering; ``auto`` (the default): ``conversation`` when the dataset has
  conversations (the turns of one conversation are not independent draws), else ``doc`` when
  the dataset has more than one entry per document on average, else none.

An entry without the value (no evidence: an unanswerable question; no such field; an empty or
blank string) is a cluster of its own. Values are compared as what they say, not how they are
spelt: Unicode NFC, spacing collapsed, a number written ``60``, ``60.0`` or ``"60"`` is one value;
``company`` folds case and punctuation ("Apple Inc.", "APPLE INC" and "Apple, Inc." are one
company); ``doc`` folds case, spacing and a file extension (``AAPL_2022_10K.pdf`` is
``aapl_2022_10k``), and a chunk id's ``#fragment`` counts to its document. The statistics are
`assay.stats.clusters`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from assay.dataset.grouping import _field_reader, _value_text
from assay.dataset.schema import Anchor, Entry
from assay.errors import DataError, UsageError
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
        if "#" in first:  # doc#fragment: a section of the document
            return first.split("#", 1)[0] or first
        return first.rsplit("/", 2)[0] if first.count("/") >= 2 else first
    return None


_NUMBER = re.compile(r"[+-]?(0|[1-9]\d*)(\.\d*)?([eE][+-]?\d+)?")
_DOC_EXT = re.compile(r"\.(pdf|html?|txt|md|json|xlsx?|csv|docx?)$")


def _value(v: Any) -> str | None:
    """A cluster value as what it says: None for no value or a blank string, NFC with spacing
    collapsed, and a number (or a string holding one) with an integral value written as an
    integer."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    text = " ".join(unicodedata.normalize("NFC", _value_text(v)).split()) if v is not None else ""
    if _NUMBER.fullmatch(text):
        with_float = float(text)
        if with_float.is_integer() and abs(with_float) < 2**53:
            return str(int(with_float))
    return text or None


def _company(text: str) -> str:
    """A company as its name says (`_value`'s text), whatever its case and punctuation."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _doc(text: str) -> str:
    """A filing as its name says (`_value`'s text), whatever its case, spacing and extension."""
    return _DOC_EXT.sub("", text.casefold()).strip()


def _labelled(
    field: str, ids: Sequence[str], values: Sequence[Any], fold: Callable[[str], str] = str
) -> dict[str, str]:
    """{entry id: cluster label}: entries whose values (as `_value` reads them) fold alike
    share the label of the first such value's spelling; an entry without a value is a cluster
    of its own. Each distinct value is read once."""
    first: dict[str, str] = {}

    def label(v: Any) -> str | None:
        text = _value(v)
        key = fold(text) if text else None
        return first.setdefault(key, f"{field}:{text}") if key else None

    if all(type(v) is str or v is None for v in values):  # text alone: a value is its key
        read = {v: label(v) for v in dict.fromkeys(values)}
        named = {v: got for v, got in read.items() if got is not None}
        if len(named) == len(read):  # every entry has a value: labelled at C speed
            return dict(zip(ids, map(named.__getitem__, values), strict=True))
        return {i: named.get(v) or f"entry:{i}" for i, v in zip(ids, values, strict=True)}
    known: dict[tuple[type, Any], str | None] = {}
    out: dict[str, str] = {}
    for i, v in zip(ids, values, strict=True):
        try:
            got = known[type(v), v]
        except KeyError:
            got = known[type(v), v] = label(v)
        except TypeError:  # a value that cannot be a key (a list or mapping in metadata)
            got = label(v)
        out[i] = f"entry:{i}" if got is None else got
    return out


def cluster_labels(
    entries: Sequence[Entry], field: str, *, file: str = "<dataset>"
) -> dict[str, str]:
    """{entry id: cluster label}; an entry without the value is a cluster of its own."""
    if field == "conversation":
        return {
            e.id: f"conversation:{e.conversation.id}" if e.conversation else f"entry:{e.id}"
            for e in entries
        }
    ids = [e.id for e in entries]
    if field == "doc":
        return _labelled("doc", ids, [evidence_doc(e) for e in entries], _doc)
    name, read = _field_reader("metadata.company" if field == "company" else field)
    out = _labelled(field, ids, [read(e) for e in entries], _company if field == "company" else str)
    if entries and all(out[i] == f"entry:{i}" for i in ids):  # a typo: name the field
        raise DataError(
            f"no entry has {name}; cannot cluster by it (--cluster takes doc, company, "
            "conversation, none, or a field or metadata.FIELD the entries have)",
            file=file,
            field=name,
        )
    return out


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
