"""Quotes of restricted chunks in free text, cited or not.

A run's answer, a draft, a critique or a note may repeat a restricted chunk's words without
naming the chunk. `QuoteIndex` finds such quotes so that a text quoting a chunk counts as built
from it (`assay.workbench.service.access`): hidden from, or redacted for, a viewer who may not
see the chunk.

Normalisation (the leakage audit's rule, `assay.audit.overlap`, with offsets kept): Unicode NFKC
(full-width forms, ligatures), case folded, thousands separators dropped and trailing decimal
zeros too (``1,250.00`` -> ``1250``); tokens are runs of letters or numbers, so punctuation, line
breaks and spacing never matter. Currency marks and words are one token (``$``, ``USD``,
``dollars`` -> ``usd``) and a scale after a number one word (``412m``, ``412 mn`` -> ``412
million``). A figure is looked up by its digits as written and, when a scale word (thousand,
million, billion and their abbreviations) follows it, by its whole value too, so ``$412
million``, ``$412,000,000``, ``$0.412 billion`` and ``$412,000k`` are one figure; the same
digits at another scale (``$412 billion``) are not (a bare figure, whose scale a table's header
may give, is of any scale).

Two kinds of evidence, each against the restricted chunks only:

- a shingle: `SHINGLE` consecutive tokens (currency marks left out, so ``$41.25`` and ``41.25
  dollars`` read alike) of the chunk, holding at least `MIN_CONTENT` words that are not function
  words (`assay._stopwords.AUDIT_STOPWORDS`), `MIN_SPECIFIC` of them outside the public chunks'
  common vocabulary (words in `GENERIC_DF` of them: "fiscal", "million", "2019"). A partial
  quote of `SHINGLE` words is caught wherever it starts;
- a figure with its context: a number of three significant digits or more in the chunk that is
  distinctive (a decimal, a value of 100 or more that is not a year, or one written with a
  currency or a scale) and the content words and units within `WINDOW` tokens of it. A text
  holds the figure when it has the same number with at least `FIG_CONTEXT` of those terms
  within `WINDOW` tokens, of which two words outside the common vocabulary (one for a figure of
  four significant digits or more): ``USD 41.25 per share`` in a term sheet is found in ``41.25
  dollars a share``, and a quote split across two sentences still has the figure beside its
  words.

What the public chunks of the store say is not a quote: every shingle, and every context term of
a figure, that a public chunk (no access label) also holds is taken out of the index, so text
sharing a filing's boilerplate with a restricted memo is not hidden. A public chunk can
therefore never match, and search results (public chunks and chunks the viewer may see) need no
check. Measured by ``bench/bench_quote_index.py`` on FinanceBench (half the companies'
evidence pages restricted): 0.8% of the answers on public questions hidden (4 of 510, the same
with and without scale restatements), each for SEC cover page wording the few public pages did
not hold.

The index is built once per corpus revision of a store (the setting `REVISION`, renewed whenever
chunk access is refreshed) and kept in memory; a check is a tokenisation of the text and a few
dictionary look-ups.
"""

from __future__ import annotations

import re
import secrets
import threading
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import insert, select, update

from assay._stopwords import AUDIT_STOPWORDS as STOPWORDS
from assay._text import unseen_table, visible_text
from assay.workbench.models import Chunk, Setting

__all__ = [
    "FIG_CONTEXT",
    "GENERIC_DF",
    "MIN_CONTENT",
    "MIN_SPECIFIC",
    "REDACTED",
    "REVISION",
    "SHINGLE",
    "WINDOW",
    "QuoteIndex",
    "Span",
    "bump_revision",
    "quote_index",
    "redact",
    "tokens",
]

SHINGLE = 8  # tokens in a shingle
MIN_CONTENT = 3  # non-function words a shingle must hold to count
WINDOW = 8  # tokens either side of a figure that are its context
FIG_CONTEXT = 2  # context terms a text must share with a figure (see `QuoteIndex.find`)
MIN_SPECIFIC = 2  # words of a matched shingle outside the public chunks' common vocabulary
GENERIC_DF = 0.02  # share of public chunks a word is in to be common vocabulary
REVISION = "quote_index_revision"  # the setting naming the corpus revision
REDACTED = "[restricted]"

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?|(?<!\w)\.\d+"  # ".412" too
_TOKEN = re.compile(rf"(?P<n>{_NUM})|(?P<w>[^\W\d_]+)|(?P<c>[$€£¥])")
_CURRENCY = {
    "$": "usd",
    "usd": "usd",
    "dollar": "usd",
    "dollars": "usd",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "euros": "eur",
    "£": "gbp",
    "gbp": "gbp",
    "¥": "jpy",
    "jpy": "jpy",
    "yen": "jpy",
}
_SCALE = {
    "k": "thousand",
    "thousand": "thousand",
    "m": "million",
    "mm": "million",
    "mn": "million",
    "million": "million",
    "millions": "million",
    "b": "billion",
    "bn": "billion",
    "billion": "billion",
    "billions": "billion",
    "percent": "percent",
    "pct": "percent",
}
_UNITS = frozenset(_CURRENCY.values()) | frozenset(_SCALE.values())
_MAGNITUDE = {"thousand": 3, "million": 6, "billion": 9}  # powers of ten of the scale words


class Tok(NamedTuple):
    kind: str  # "n" number, "w" word, "c" currency
    value: str
    start: int  # offsets in the original text
    end: int


def _number(raw: str) -> str:
    v = raw.replace(",", "")
    if "." in v:
        v = v.rstrip("0").rstrip(".")
    return v.lstrip("0") or "0"


def _normalised(text: str) -> tuple[str, list[int] | None]:
    """NFKC + casefold, invisible characters dropped and other scripts' digits read as ASCII
    (`assay._text.visible_text`), and for each character of the result its offset in `text` (None: the identity,
    an ASCII text)."""
    if text.isascii():
        return text.lower(), None
    out: list[str] = []
    where: list[int] = []
    unseen = unseen_table()
    for i, ch in enumerate(text):
        n = unicodedata.normalize("NFKC", visible_text(ch)).casefold()
        if n and not n.isascii():
            n = n.translate(unseen)
        out.append(n)
        where.extend([i] * len(n))
    return "".join(out), where


def _tok(kind: str, raw: str, last: str, s: int, e: int) -> Tok:
    if kind == "n":
        return Tok("n", _number(raw), s, e)
    if raw in _CURRENCY:
        return Tok("c", _CURRENCY[raw], s, e)
    if last == "n" and raw in _SCALE:
        return Tok("w", _SCALE[raw], s, e)
    return Tok("w", raw, s, e)


def tokens(text: str, *, offsets: bool = True) -> list[Tok]:
    """The normalised tokens of a text (see the module docstring), with their offsets in `text`
    (without `offsets`, faster, every offset 0)."""
    out: list[Tok] = []
    last = ""
    if not offsets:
        if text.isascii():
            norm = text.lower()
        else:
            norm = unicodedata.normalize("NFKC", visible_text(text)).casefold()
            norm = visible_text(norm)
        for n, w, c in _TOKEN.findall(norm):
            t = _tok("n" if n else "w", n or w or c, last, 0, 0)
            last = t.kind
            out.append(t)
        return out
    norm, where = _normalised(text)
    for m in _TOKEN.finditer(norm):
        s, e = m.span()
        if where is not None:
            s, e = where[s], where[e - 1] + 1
        t = _tok(m.lastgroup or "w", m.group(), last, s, e)
        last = t.kind
        out.append(t)
    return out


def _scale(toks: list[Tok], i: int) -> int | None:
    """The power of ten of the scale word after the number `toks[i]` (None: no scale word)."""
    return _MAGNITUDE.get(toks[i + 1].value) if i + 1 < len(toks) else None


def _keys(toks: list[Tok], i: int) -> tuple[tuple[str, int | None], ...]:
    """The values the number `toks[i]` is looked up by, each with the power of ten its digits
    stand for: as written (with its scale word's power; None without one, the scale unknown: a
    table's "in millions" is in its header), and, when a scale word follows it, its whole value
    (power 0): ``412 million``, ``412m``, ``0.412 billion`` and ``412,000 thousand`` are all
    ``412000000``, the value of ``$412,000,000`` as written, so a figure is found whatever scale
    word or digit grouping restates it, and ``412 billion`` is not ``412 million``."""
    v = toks[i].value
    power = _scale(toks, i)
    if power is None:
        return ((v, None),)
    whole, _, frac = v.partition(".")
    digits = (whole + frac + "0" * power).lstrip("0") or "0"
    point = len(whole) + power  # where the decimal point falls among `whole + frac + zeros`
    shift = len(whole + frac + "0" * power) - len(digits)  # leading zeros stripped
    point -= shift
    if point <= 0:
        full = "0." + "0" * -point + digits
    elif point >= len(digits):
        full = digits + "0" * (point - len(digits))
    else:
        full = digits[:point] + "." + digits[point:]
    return ((v, power), (_number(full), 0))


def _sig(v: str) -> int:
    """Significant digits of a canonical number (``0.67`` -> 2, ``1250`` -> 3, ``41.25`` -> 4)."""
    return len(v.replace(".", "").strip("0"))


def _distinctive(toks: list[Tok], i: int) -> bool:
    v = toks[i].value
    near = {t.value for t in toks[max(0, i - 1) : i + 2] if t is not toks[i]}
    if near & _UNITS or "." in v:
        return True
    n = int(v) if v.isdigit() else 0
    return n >= 100 and not (1900 <= n <= 2099)


def _context(toks: list[Tok], i: int) -> set[str]:
    lo, hi = max(0, i - WINDOW), i + WINDOW + 1
    return {
        t.value
        for t in toks[lo:hi]
        if (t.kind != "n" and t.value not in STOPWORDS and len(t.value) > 1) or t.value in _UNITS
    }


def _shingles(toks: list[Tok]) -> Iterator[tuple[int, int, int]]:
    """(hash, first token, last token) of every shingle that holds enough content words;
    token positions index `toks` (currency tokens are skipped, not counted)."""
    idx = [i for i, t in enumerate(toks) if t.kind != "c"]
    vals = [toks[i].value for i in idx]
    content = [v not in STOPWORDS and (len(v) > 1 or v.isdigit()) for v in vals]
    have = sum(content[: SHINGLE - 1])
    for j in range(len(idx) - SHINGLE + 1):
        have += content[j + SHINGLE - 1]
        if have >= MIN_CONTENT:
            yield hash(tuple(vals[j : j + SHINGLE])), idx[j], idx[j + SHINGLE - 1]
        have -= content[j]


@dataclass(frozen=True)
class Span:
    """A quote of `chunk_id` in a text: `start` to `end` (offsets in the text)."""

    chunk_id: str
    start: int
    end: int


@dataclass
class QuoteIndex:
    """The restricted chunks' shingles and figures, what public chunks share left out."""

    shingles: dict[int, set[str]] = field(default_factory=dict)
    # a figure's digits -> (chunk, context terms, the power of ten the digits stand for)
    figures: dict[str, list[tuple[str, frozenset[str], int | None]]] = field(default_factory=dict)
    n_chunks: int = 0
    # words and numbers in at least GENERIC_DF of the public chunks (and 2): a filing's common
    # vocabulary ("fiscal", "million", "2019"), never what makes a quote specific
    generic: frozenset[str] = frozenset()

    @classmethod
    def build(cls, restricted: Iterable[tuple[str, str]], public: Iterable[str] = ()) -> QuoteIndex:
        """The index of `restricted` (chunk id, text) pairs, less what `public` texts hold."""
        shingles: dict[int, set[str]] = defaultdict(set)
        figures: dict[str, list[tuple[str, set[str], int | None]]] = defaultdict(list)
        n = 0
        for cid, text in restricted:
            n += 1
            toks = tokens(text, offsets=False)
            for h, _a, _b in _shingles(toks):
                shingles[h].add(cid)
            for i, t in enumerate(toks):
                if t.kind == "n" and _distinctive(toks, i):
                    ctx = _context(toks, i)
                    for key, power in _keys(toks, i):
                        figures[key].append((cid, ctx, power))
        df: Counter[str] = Counter()
        n_public = 0
        for text in public:
            n_public += 1
            toks = tokens(text, offsets=False)
            df.update({t.value for t in toks})
            for h, _a, _b in _shingles(toks):
                shingles.pop(h, None)
            for i, t in enumerate(toks):
                if t.kind != "n":
                    continue
                for key, _power in _keys(toks, i):
                    if key in figures:
                        ctx = _context(toks, i)
                        for _cid, mine, _p in figures[key]:
                            mine -= ctx
        cut = max(2, GENERIC_DF * n_public)
        generic = frozenset(w for w, k in df.items() if k >= cut)
        kept: dict[str, list[tuple[str, frozenset[str], int | None]]] = {}
        for v, rows in figures.items():
            good = [
                (c, frozenset(x), p) for c, x, p in rows if len(x) >= FIG_CONTEXT and x - _UNITS
            ]
            if good and _sig(v) >= 3:
                kept[v] = good
        return cls(dict(shingles), kept, n, generic)

    def find(self, text: str, *, offsets: bool = True) -> list[Span]:
        """Every quote of an indexed chunk in `text` (overlapping spans not merged; without
        `offsets`, faster, every span empty: only which chunks)."""
        if not text or (not self.shingles and not self.figures):
            return []
        toks = tokens(text, offsets=offsets)
        out: list[Span] = []
        if self.shingles:
            for h, a, b in _shingles(toks):
                got = self.shingles.get(h)
                if got and self._specific(toks[a : b + 1]):
                    out.extend(Span(cid, toks[a].start, toks[b].end) for cid in got)
        for i, t in enumerate(toks):
            if t.kind != "n":
                continue
            rows = self._rows(toks, i)
            if not rows:
                continue
            ctx = _context(toks, i)
            need_words = 1 if _sig(t.value) >= 4 else FIG_CONTEXT
            for cid, mine in rows:
                shared = ctx & mine
                words = shared - _UNITS - self.generic
                if len(shared) >= FIG_CONTEXT and len(words) >= need_words:
                    lo = i - 1 if i and toks[i - 1].kind == "c" else i
                    hi = i + 1
                    while hi < len(toks) and hi <= i + 2 and toks[hi].value in _UNITS:
                        hi += 1
                    out.append(Span(cid, toks[lo].start, toks[hi - 1].end))
        return out

    def _rows(self, toks: list[Tok], i: int) -> list[tuple[str, frozenset[str]]]:
        """The indexed figures the number `toks[i]` may be: its digits as written, when a scale
        word follows it of the same scale or of none (``412 billion`` is not the ``412 million``
        of a chunk, but may be a bare ``412`` of a table in billions), and its whole value,
        whatever scale wrote the chunk's."""
        keys = _keys(toks, i)
        if len(keys) == 1:  # no scale word: the digits, whatever scale the chunk gave them
            return [(c, x) for c, x, _p in self.figures.get(keys[0][0], [])]
        (v, power), (full, _) = keys
        rows = [(c, x) for c, x, p in self.figures.get(v, []) if p in (power, None)]
        rows += [(c, x) for c, x, p in self.figures.get(full, []) if p in (0, None)]
        return list(dict.fromkeys(rows))

    def _specific(self, run: list[Tok]) -> bool:
        """A shingle's run holds at least `MIN_SPECIFIC` content words outside `generic`."""
        return (
            sum(
                1
                for t in run
                if t.kind != "c" and t.value not in STOPWORDS and t.value not in self.generic
            )
            >= MIN_SPECIFIC
        )

    def quoted(self, *texts: str | None) -> set[str]:
        """The chunks the texts quote."""
        return {s.chunk_id for t in texts if t for s in self.find(t, offsets=False)}


def redact(text: str, spans: Iterable[Span]) -> str:
    """`text` with every span replaced by `REDACTED` (overlapping spans merged)."""
    merged: list[list[int]] = []
    for s in sorted(spans, key=lambda x: (x.start, x.end)):
        if merged and s.start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], s.end)
        else:
            merged.append([s.start, s.end])
    out, at = [], 0
    for a, b in merged:
        out += [text[at:a], REDACTED]
        at = b
    out.append(text[at:])
    return "".join(out)


def bump_revision(conn: Any) -> None:
    """Mark the store's corpus as changed: the next check rebuilds the quote index."""
    token = secrets.token_hex(8)
    if conn.execute(select(Setting.key).where(Setting.key == REVISION)).first() is None:
        conn.execute(insert(Setting).values(key=REVISION, value=token))
    else:
        conn.execute(update(Setting).where(Setting.key == REVISION).values(value=token))


_CACHE: dict[str, tuple[str, QuoteIndex]] = {}
_LOCK = threading.Lock()


def _store_name(conn: Any) -> str:
    bind = conn.get_bind() if hasattr(conn, "get_bind") else conn.engine
    return str(bind.url)


def quote_index(conn: Any) -> QuoteIndex:
    """The quote index of the store `conn` reads, built once per corpus revision."""
    rev = conn.execute(select(Setting.value).where(Setting.key == REVISION)).scalar() or ""
    name = _store_name(conn)
    got = _CACHE.get(name)
    if got is not None and got[0] == rev:
        return got[1]
    with _LOCK:
        got = _CACHE.get(name)
        if got is not None and got[0] == rev:
            return got[1]
        restricted = conn.execute(
            select(Chunk.chunk_id, Chunk.text).where(Chunk.access_key.is_not(None))
        ).all()
        if restricted:
            public = conn.execute(select(Chunk.text).where(Chunk.access_key.is_(None))).scalars()
            index = QuoteIndex.build(((str(c), str(t)) for c, t in restricted), public)
        else:
            index = QuoteIndex()
        _CACHE[name] = (rev, index)
        return index
