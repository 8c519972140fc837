"""Synthetic questions only for named gaps, and only those that do not borrow their source's words.

1. **Name the gaps** (`name_gaps`). A category is a gap when its share of the golden set is
   below its share of production traffic (`traffic_shares`, e.g. `assay.logs.category_shares`),
   or when it has fewer entries than `min_size` (what `assay plan` says a category needs). The
   entries *needed* are the larger of the two shortfalls: for traffic share ``t`` with ``n`` of
   ``N`` entries, the smallest ``x`` with ``(n + x) / (N + x) >= t``; for a size, ``min_size - n``.
2. **Generate candidates only for those gaps** (`synth_questions`): `n` candidates shared among
   the gaps in proportion to what each needs (at least one each). The ``templates`` generator is
   deterministic under a seed: it draws chunks of the corpus (those whose document names a
   company) with a `numpy.random.Generator` and words a question in an analyst's shorthand
   (``"KEST sub rev FY23 y/y"``) from the chunk's company, period and the measure it states. A
   URL generator asks an OpenAI-compatible endpoint through the one cached chat client
   (`assay.chat.ChatClient`, so a rerun is served from the request cache). Or filter candidates
   someone else generated (`read_candidates`).
3. **Discard copies** (`copying`). A candidate is dropped when it borrows its source chunk's
   words, by either rule, on normalised tokens (`assay.audit.overlap.tokens`):

   - *shared n-gram*: it shares a run of `n` = 4 consecutive tokens with the chunk, unless that
     run contains a token of an entity name (the company's name, ticker or aliases) or is made
     only of function words (`assay.audit.overlap.STOPWORDS`);
   - *containment*: it has at least 5 content tokens (not function words, not entity names) and
     at least 90% of them occur in the chunk.

   The report says how many survived of how many ("23 survivors out of 120"), and why each
   dropped candidate was dropped.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay._io import iter_jsonl_lenient
from assay.audit.overlap import STOPWORDS, ngrams, tokens
from assay.dataset import Entry, ExpectedBehavior, Source
from assay.errors import DataError, Problem, UsageError
from assay.report import ReportMixin, Tabular
from assay.synth.facts_ledger import CONCEPTS
from assay.synth.questions import SHORTHAND

if TYPE_CHECKING:
    from assay.chat import ChatClient
    from assay.corpus import Chunk, ChunkTable

__all__ = [
    "COPY_CONTAINMENT",
    "COPY_MIN_CONTENT",
    "COPY_NGRAM",
    "TEMPLATES",
    "Candidate",
    "Gap",
    "SynthQuestionsReport",
    "copying",
    "name_gaps",
    "read_candidates",
    "synth_questions",
    "unanswerable_categories",
]

COPY_NGRAM = 4
COPY_CONTAINMENT = 0.9
COPY_MIN_CONTENT = 5


# --------------------------------------------------------------------------------------------
# gaps


@dataclass(frozen=True)
class Gap:
    category: str
    n_set: int
    set_share: float
    traffic_share: float | None
    min_size: int | None
    needed: int
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "n_set": self.n_set,
            "set_share": self.set_share,
            "traffic_share": self.traffic_share,
            "min_size": self.min_size,
            "needed": self.needed,
            "reasons": list(self.reasons),
        }


def name_gaps(
    entries: Sequence[Entry],
    *,
    traffic_shares: Mapping[str, float] | None = None,
    min_size: int | None = None,
) -> list[Gap]:
    """Categories under-represented against traffic or below `min_size`, most needed first."""
    if traffic_shares is None and min_size is None:
        raise UsageError(
            "name a gap: give traffic shares (--logs or --shares) or a size (--min-size / --delta)"
        )
    if min_size is not None and min_size < 1:
        raise ValueError("min_size must be at least 1")
    shares: dict[str, float] = {}
    if traffic_shares is not None:
        bad = [c for c, v in traffic_shares.items() if not (math.isfinite(v) and v >= 0)]
        if bad:
            raise ValueError(f"traffic shares must be finite and >= 0: {', '.join(sorted(bad))}")
        total = sum(traffic_shares.values())
        if total <= 0:
            raise ValueError("traffic shares sum to zero")
        shares = {c: v / total for c, v in traffic_shares.items()}
    counts = Counter(e.category for e in entries)
    n_all = len(entries)
    cats = sorted(set(counts) | set(shares))
    gaps: list[Gap] = []
    for c in cats:
        n = counts.get(c, 0)
        own = n / n_all if n_all else 0.0
        t = shares.get(c) if traffic_shares is not None else None
        need = 0
        reasons: list[str] = []
        if t is not None and own < t:
            x = n_all if t >= 1 else math.ceil((t * n_all - n) / (1 - t) - 1e-9)
            x = max(1, x)
            need = max(need, x)
            reasons.append(f"{own:.1%} of the set vs {t:.1%} of traffic")
        if min_size is not None and n < min_size:
            need = max(need, min_size - n)
            reasons.append(f"{n} entries, {min_size} needed")
        if need:
            gaps.append(Gap(c, n, own, t, min_size, need, tuple(reasons)))
    gaps.sort(key=lambda g: (-g.needed, g.category))
    return gaps


def unanswerable_categories(golden: Sequence[Entry]) -> set[str]:
    """The categories whose questions the filings do not answer: ``unanswerable``, and every
    category whose golden entries are all ``answerable: false``."""
    answerable: dict[str, bool] = {}
    for e in golden:
        answerable[e.category] = answerable.get(e.category, False) or e.answerable is not False
    return {"unanswerable"} | {c for c, a in answerable.items() if not a}


def _allocate(gaps: Sequence[Gap], n: int) -> dict[str, int]:
    """n candidates shared in proportion to need (largest remainders), at least one per gap."""
    if not gaps:
        return {}
    if n < len(gaps):
        raise UsageError(f"--n {n} is fewer than the {len(gaps)} gaps named; ask for at least that")
    total = sum(g.needed for g in gaps)
    spare = n - len(gaps)
    raw = [spare * g.needed / total for g in gaps]
    base = [math.floor(r) for r in raw]
    left = spare - sum(base)
    order = sorted(range(len(gaps)), key=lambda i: (-(raw[i] - base[i]), gaps[i].category))
    for i in order[:left]:
        base[i] += 1
    return {g.category: 1 + b for g, b in zip(gaps, base, strict=True)}


# --------------------------------------------------------------------------------------------
# the copying filter


def _entity_tokens(names: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for name in names:
        out.update(tokens(name))
    return out


def copying(
    query: str,
    source: str,
    entity_names: Sequence[str] = (),
    *,
    n: int = COPY_NGRAM,
    containment: float = COPY_CONTAINMENT,
    min_content: int = COPY_MIN_CONTENT,
) -> str | None:
    """Why `query` borrows `source`'s words (see the module docstring), or None when it does not."""
    q = tokens(query)
    src = tokens(source)
    ents = _entity_tokens(entity_names)
    src_grams = set(ngrams(src, n))
    for g in ngrams(q, n):
        if g in src_grams and not (set(g) & ents) and not set(g) <= STOPWORDS:
            return f"shares {' '.join(g)!r} with its source"
    content = [t for t in q if t not in STOPWORDS and t not in ents]
    if len(content) >= min_content:
        bag = set(src)
        share = sum(t in bag for t in content) / len(content)
        if share >= containment:
            return f"{share:.0%} of its content words are in its source"
    return None


# --------------------------------------------------------------------------------------------
# candidates


@dataclass
class Candidate:
    query: str
    source_chunk_id: str
    category: str | None = None
    generator: str = ""
    template: str | None = None
    line: int | None = None
    dropped: str | None = None
    file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "file"}


def read_candidates(path: str | Path) -> list[Candidate]:
    """Candidates someone else generated: JSONL of ``{"query", "source_chunk_id"}`` (and an
    optional ``category``); every bad line is named FILE:LINE: field."""
    problems: list[Problem] = []
    out: list[Candidate] = []
    file = str(path)
    for line, row in iter_jsonl_lenient(path, problems):
        if not isinstance(row, dict):
            problems.append(Problem(file, line, None, "expected a JSON object"))
            continue
        q, cid, cat = row.get("query"), row.get("source_chunk_id"), row.get("category")
        ok = True
        if not isinstance(q, str) or not q.strip():
            problems.append(Problem(file, line, "query", "required, a non-empty string"))
            ok = False
        if not isinstance(cid, str) or not cid:
            problems.append(Problem(file, line, "source_chunk_id", "required, a chunk id"))
            ok = False
        if cat is not None and not isinstance(cat, str):
            problems.append(Problem(file, line, "category", "must be a string"))
            ok = False
        if ok:
            assert isinstance(q, str) and isinstance(cid, str)
            out.append(Candidate(q.strip(), cid, cat, "file", None, line, file=file))
    if problems:
        raise DataError(problems)
    return out


# The measures the templates can ask about: (how a filing names it, an analyst's shorthands).
def _measures() -> list[tuple[str, list[str]]]:
    return [(CONCEPTS[k].phrase.lower(), v) for k, v in SHORTHAND.items() if k in CONCEPTS]


#: Wordings per category ({who}: ticker, name or alias; {m}: the measure's shorthand; {p}: the
#: period); categories not named here use "default".
TEMPLATES: dict[str, list[str]] = {
    "numeric_lookup": ["{who} {m} {p}", "{m} {p} {who}", "what was {who} {m} in {p}"],
    "comparison": ["{who} {m} {p} y/y", "{m} growth {p} {who}", "{who} {p} {m} vs prior yr"],
    "temporal": ["{who} {m} as of {p}", "{m} at {p} for {who}"],
    "narrative": ["why did {who} {m} move in {p}", "{who} {p} drivers of {m}"],
    "amendment_restatement": ["{who} {m} {p} restated?", "did {who} revise {p} {m}"],
    "exact_identifier": ["{who} {p} filing {m} figure", "{m} per {who} {p} filing"],
    "unanswerable": ["{who} {m} guidance beyond {p}", "{who} {m} forecast after {p}"],
    "ambiguous": ["{m} {p}", "{m} for {p}?"],
    "default": ["{who} {m} {p}", "{m} {p} for {who}", "what did {who} report for {m} in {p}"],
}


def _period(chunk: Chunk, rng: np.random.Generator) -> str | None:
    fy = chunk.extra.get("fiscal_year")
    if not isinstance(fy, int):
        return None
    q = chunk.extra.get("fiscal_quarter")
    yy = f"{fy % 100:02d}"
    if isinstance(q, int):
        return str(rng.choice([f"Q{q} FY{yy}", f"{q}Q{yy}", f"Q{q} fiscal {fy}"]))
    return str(rng.choice([f"FY{yy}", f"FY{fy}", f"fiscal {fy}"]))


def _who(chunk: Chunk, rng: np.random.Generator) -> str | None:
    names = [
        v
        for v in (chunk.extra.get("ticker"), chunk.extra.get("company"))
        if isinstance(v, str) and v
    ]
    if not names:
        return None
    return str(rng.choice(names))


def _entity_names(chunk: Chunk) -> list[str]:
    return [
        v
        for v in (chunk.extra.get("ticker"), chunk.extra.get("company"))
        if isinstance(v, str) and v
    ]


def _template_candidates(
    chunks: Sequence[Chunk], category: str, n: int, rng: np.random.Generator
) -> list[Candidate]:
    measures = _measures()
    usable: list[tuple[Chunk, list[tuple[str, list[str]]]]] = []
    for c in chunks:
        if not _entity_names(c) or not isinstance(c.extra.get("fiscal_year"), int):
            continue
        low = c.text.lower()
        found = [m for m in measures if m[0] in low]
        if found:
            usable.append((c, found))
    if not usable:
        raise UsageError(
            "no chunk names a company, a fiscal year and a measure the templates know; "
            "use --generator URL or --candidates FILE"
        )
    wordings = TEMPLATES.get(category, TEMPLATES["default"])
    out: list[Candidate] = []
    picks = rng.choice(len(usable), size=n, replace=n > len(usable))
    for i in picks:
        c, found = usable[int(i)]
        _phrase, shorts = found[int(rng.integers(len(found)))]
        t = int(rng.integers(len(wordings)))
        who = _who(c, rng)
        per = _period(c, rng)
        m = str(rng.choice(shorts))
        q = wordings[t].format(who=who, m=m, p=per)
        out.append(Candidate(q, c.chunk_id, category, "templates", f"{category}:{t}"))
    return out


_PROMPT = (
    "You write one question that a financial analyst would type into a search box, and that the "
    "passage below answers. Category of question: {category}. Use the analyst's own shorthand "
    "(tickers, 'FY23', 'y/y', abbreviations) and do not copy phrases from the passage. Reply "
    "with the question only.\n\nCompany: {company}\nPassage:\n{text}"
)


def _llm_candidates(
    chunks: Sequence[Chunk], category: str, n: int, rng: np.random.Generator, client: ChatClient
) -> list[Candidate]:
    usable = [c for c in chunks if _entity_names(c)] or list(chunks)
    picks = rng.choice(len(usable), size=n, replace=n > len(usable))
    out: list[Candidate] = []
    for i in picks:
        c = usable[int(i)]
        prompt = _PROMPT.format(
            category=category, company=", ".join(_entity_names(c)) or "-", text=c.text[:2000]
        )
        reply = client.complete([{"role": "user", "content": prompt}], max_tokens=80)
        line = next((ln.strip().strip('"') for ln in reply.splitlines() if ln.strip()), "")
        if line:
            out.append(Candidate(line, c.chunk_id, category, f"llm:{client.model}", None))
    return out


# --------------------------------------------------------------------------------------------


@dataclass
class SynthQuestionsReport(ReportMixin):
    gaps: list[Gap]
    generator: str
    seed: int
    candidates: list[Candidate]
    entries: list[Entry] = field(default_factory=list)
    golden: str | None = None
    golden_version: str | None = None
    chunks_version: str | None = None
    rule: dict[str, Any] = field(default_factory=dict)
    out: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def survivors(self) -> list[Candidate]:
        return [c for c in self.candidates if c.dropped is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "assay.synth.questions/1",
            "golden": self.golden,
            "golden_version": self.golden_version,
            "chunks_version": self.chunks_version,
            "generator": self.generator,
            "seed": self.seed,
            "rule": self.rule,
            "gaps": [g.to_dict() for g in self.gaps],
            "n_candidates": len(self.candidates),
            "n_survivors": len(self.survivors),
            "by_category": {
                c: {
                    "candidates": sum(1 for x in self.candidates if x.category == c),
                    "survivors": sum(1 for x in self.survivors if x.category == c),
                }
                for c in sorted({x.category or "-" for x in self.candidates})
            },
            "candidates": [c.to_dict() for c in self.candidates],
            "out": self.out,
            "notes": self.notes,
        }

    def tabular(self) -> list[Tabular]:
        gap_rows = [
            [
                g.category,
                str(g.n_set),
                f"{g.set_share:.1%}",
                "-" if g.traffic_share is None else f"{g.traffic_share:.1%}",
                str(g.needed),
                str(sum(1 for x in self.candidates if x.category == g.category)),
                str(sum(1 for x in self.survivors if x.category == g.category)),
            ]
            for g in self.gaps
        ]
        dropped = [
            [c.query, c.source_chunk_id, c.dropped or ""] for c in self.candidates if c.dropped
        ]
        tables = [
            Tabular(
                title="Named gaps and the candidates generated for them",
                header=[
                    "category",
                    "in set",
                    "set share",
                    "traffic share",
                    "needed",
                    "candidates",
                    "survivors",
                ],
                rows=gap_rows,
                footer=[
                    f"{len(self.survivors)} survivors out of {len(self.candidates)} candidates "
                    f"(generator {self.generator}, seed {self.seed})"
                    + (f"; survivors written to {self.out}" if self.out else ""),
                    *self.notes,
                ],
                emphasis=set(),
            )
        ]
        if dropped:
            tables.append(
                Tabular(
                    title="Dropped: they borrow their source chunk's words",
                    header=["candidate", "source chunk", "why"],
                    rows=dropped[:50],
                    footer=[
                        f"{len(dropped)} dropped"
                        + (" (first 50 shown)" if len(dropped) > 50 else "")
                    ],
                    emphasis=set(),
                )
            )
        return tables


def _entry_id(c: Candidate) -> str:
    h = hashlib.sha256(f"{c.source_chunk_id}\x00{c.query}".encode()).hexdigest()[:12]
    return f"synth-{h}"


def synth_questions(
    golden: Sequence[Entry],
    chunks: ChunkTable,
    *,
    traffic_shares: Mapping[str, float] | None = None,
    min_size: int | None = None,
    n: int = 50,
    generator: str = "templates",
    seed: int = 0,
    client: ChatClient | None = None,
    candidates: Sequence[Candidate] | None = None,
) -> SynthQuestionsReport:
    """Name the gaps, generate `n` candidates for them (or take `candidates`), drop the copies.

    `generator` is ``"templates"`` or a URL (then `client` is the chat client to use). The
    survivors become draft entries (`SynthQuestionsReport.entries`): source ``synthetic``, the
    gap's category, the source chunk as a one-piece evidence path to be checked by an expert,
    ``label_tier: "draft"``. A draft for an unanswerable category (`unanswerable_categories`) is
    ``answerable: false`` (expected to abstain) and carries no evidence path: its source chunk,
    kept in ``metadata.source_chunk_id``, is what it was worded from, not evidence that answers it.
    """
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    if candidates is not None:
        gaps = (
            name_gaps(golden, traffic_shares=traffic_shares, min_size=min_size)
            if traffic_shares is not None or min_size is not None
            else []
        )
        cands = list(candidates)
        gen_name = "file"
        unknown = [c for c in cands if c.source_chunk_id not in chunks]
        if unknown:
            raise DataError(
                [
                    Problem(
                        c.file or "<candidates>",
                        c.line,
                        "source_chunk_id",
                        f"{c.source_chunk_id!r} is not in the chunk table",
                    )
                    for c in unknown[:50]
                ]
            )
        if gaps:
            wanted = {g.category for g in gaps}
            off = sum(1 for c in cands if c.category is not None and c.category not in wanted)
            if off:
                notes.append(
                    f"{off} candidates are for categories that are not gaps (kept, marked)"
                )
    else:
        if n < 1:
            raise ValueError("n must be at least 1")
        gaps = name_gaps(golden, traffic_shares=traffic_shares, min_size=min_size)
        cands = []
        share = _allocate(gaps, n)
        all_chunks = list(chunks)
        for g in gaps:
            k = share[g.category]
            if generator == "templates":
                cands += _template_candidates(all_chunks, g.category, k, rng)
            else:
                if client is None:
                    raise UsageError("a URL generator needs a chat client")
                cands += _llm_candidates(all_chunks, g.category, k, rng, client)
        gen_name = generator if generator == "templates" else f"llm:{generator}"
        if not gaps:
            notes.append("no gap named: the set already matches traffic and the size asked")
    seen: set[str] = set()
    entries: list[Entry] = []
    unanswerable = unanswerable_categories(golden)
    for c in cands:
        chunk = chunks.by_id[c.source_chunk_id]
        c.dropped = copying(c.query, chunk.text, _entity_names(chunk))
        key = " ".join(tokens(c.query))
        if c.dropped is None and key in seen:
            c.dropped = "duplicate of an earlier candidate"
        seen.add(key)
        if c.dropped is None:
            # an unanswerable question's source chunk is what it was worded from, not evidence
            answerable = (c.category or "uncategorised") not in unanswerable
            entries.append(
                Entry(
                    id=_entry_id(c),
                    query=c.query,
                    category=c.category or "uncategorised",
                    answerable=answerable,
                    expected_behavior=None if answerable else ExpectedBehavior.abstain,
                    evidence_paths=[[[c.source_chunk_id]]] if answerable else [],
                    source=Source.synthetic,
                    label_tier="draft",
                    metadata={
                        "generator": c.generator,
                        "template": c.template,
                        "source_chunk_id": c.source_chunk_id,
                        "seed": seed,
                        "gap": c.category,
                    },
                )
            )
    return SynthQuestionsReport(
        gaps=gaps,
        generator=gen_name,
        seed=seed,
        candidates=cands,
        entries=entries,
        chunks_version=chunks.version,
        rule={
            "ngram": COPY_NGRAM,
            "containment": COPY_CONTAINMENT,
            "min_content": COPY_MIN_CONTENT,
        },
        notes=notes,
    )
