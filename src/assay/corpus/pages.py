"""The parser's text of every page: `pages.jsonl` of a built corpus, one page per line::

    {"doc_id": "acme-2023-10k", "page": 3, "text": "..."}

`assay corpus build` writes it beside the chunk table, so what the parser read from a filing can
be told apart from what the chunker made of it (failure attribution's *parse* and *chunk* stages).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path

from assay._io import iter_jsonl_lenient
from assay.errors import DataError, Problem

__all__ = ["PageTexts", "load_pages"]


class PageTexts(Mapping[tuple[str, int], str]):
    """Page text by (doc id, 1-based page); `of_doc` gives a document's pages in order."""

    def __init__(self, pages: Mapping[tuple[str, int], str], *, path: str | None = None) -> None:
        self._pages = dict(pages)
        self.path = path
        by_doc: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for (doc, page), text in self._pages.items():
            by_doc[doc].append((page, text))
        self._by_doc = {d: [t for _, t in sorted(v)] for d, v in by_doc.items()}

    def __getitem__(self, key: tuple[str, int]) -> str:
        return self._pages[key]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self._pages)

    def __len__(self) -> int:
        return len(self._pages)

    @property
    def doc_ids(self) -> set[str]:
        return set(self._by_doc)

    def of_doc(self, doc_id: str) -> list[str]:
        """Every page's text of a document, in page order (empty when the document is absent)."""
        return list(self._by_doc.get(doc_id, []))


def load_pages(path: str | Path) -> PageTexts:
    """Read `pages.jsonl`, reporting every bad line (FILE:LINE: field: message) at once."""
    path = Path(path)
    problems: list[Problem] = []
    pages: dict[tuple[str, int], str] = {}
    for lineno, row in iter_jsonl_lenient(path, problems):
        if not isinstance(row, dict):
            problems.append(Problem(str(path), lineno, None, "a page must be a JSON object"))
            continue
        doc, page, text = row.get("doc_id"), row.get("page"), row.get("text")
        bad = False
        if not isinstance(doc, str) or not doc:
            problems.append(Problem(str(path), lineno, "doc_id", "required, a non-empty string"))
            bad = True
        if not isinstance(page, int) or isinstance(page, bool) or page < 1:
            problems.append(Problem(str(path), lineno, "page", "required, a 1-based page number"))
            bad = True
        if not isinstance(text, str):
            problems.append(Problem(str(path), lineno, "text", "required, a string"))
            bad = True
        if bad:
            continue
        assert isinstance(doc, str) and isinstance(page, int) and isinstance(text, str)
        if (doc, page) in pages:
            problems.append(Problem(str(path), lineno, "page", f"duplicate page {page} of {doc!r}"))
            continue
        pages[(doc, page)] = text
    if problems:
        raise DataError(problems)
    return PageTexts(pages, path=str(path))
