"""Answerers: turn retrieved evidence into an answer with citations. One protocol, two kinds.

- `ExtractiveAnswerer` (deterministic, no model): quotes the sentence or table row of the
  evidence that covers the most of the query's content words, with its chunk id and the
  filing's period; when nothing covers enough of the query (or the evidence is about another
  company or period) it answers exactly `REFUSAL`.
- `LLMAnswerer`: an OpenAI-compatible chat-completions endpoint through `assay.chat.ChatClient`
  (the client the LLM judge uses), every call through `assay.cache.RequestCache`. A reply that
  declines in other words ("not disclosed", "no information") is normalised to `REFUSAL`,
  because not finding something in the filings searched is not evidence that the company did
  not disclose it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.cache import RequestCache
from assay.chat import ChatClient, ChatReply
from assay.systems.filings.index import tokenize
from assay.systems.filings.query import _METRIC_RES, QueryPlan, strip_boilerplate

__all__ = ["REFUSAL", "Answer", "Answerer", "ExtractiveAnswerer", "LLMAnswerer"]

REFUSAL = "I could not find this in the filings I searched"

# question words that say nothing about what to find (stemmed)
_GENERIC = frozenset(
    [
        "amount",
        "much",
        "mani",
        "figur",
        "number",
        "valu",
        "data",
        "base",
        "inform",
        "primarili",
        "year",
        "fiscal",
        "fy",
        "total",
    ]
)

_DECLINE = re.compile(
    r"not\s+disclosed|no\s+(?:relevant\s+)?information|cannot\s+(?:be\s+)?(?:found|determined|answer)"
    r"|could\s+not\s+find|unable\s+to\s+(?:find|determine|answer)|(?:does|do)\s+not\s+(?:contain|provide|mention)"
    r"|insufficient\s+(?:evidence|information)|not\s+(?:provided|available|mentioned)\s+in",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Answer:
    answer: str
    citations: list[str] = field(default_factory=list)
    period: str | None = None
    refused: bool = False
    cost: dict[str, Any] | None = None  # tokens and money of an LLM answer (see LLMAnswerer)
    # how much of the question the evidence it rests on covers, in [0, 1] (the extractive
    # answerer's term coverage; 1 for a structured fact of the metric, company and period
    # asked); None when the answerer does not say (an LLM)
    support: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "answer": self.answer,
            "citations": list(self.citations),
            "period": self.period,
        }
        if self.cost is not None:
            out["extra"] = {"cost": dict(self.cost)}  # the runner keeps it in the row's extra
        return out


class Answerer(Protocol):
    def answer(self, plan: QueryPlan, evidence: Sequence[dict[str, Any]]) -> Answer:
        """`evidence`: dicts with chunk_id, text, kind, label (company form period), fiscal_year."""
        ...


_TITLE_WORDS = {
    "ceo": "chief executive officer",
    "cfo": "chief financial officer",
    "coo": "chief operating officer",
    "cao": "chief accounting officer",
    "cto": "chief technology officer",
}


def _content_terms(text: str) -> set[str]:
    return set(tokenize(text))


_TITLES: dict[str, frozenset[str]] = {
    abbr: frozenset(_content_terms(words)) for abbr, words in _TITLE_WORDS.items()
}
"""Officers' titles by their abbreviation (as the tokenizer stems them): filings spell them out."""


def _units(text: str) -> list[str]:
    """Sentences of prose, rows of tables (lines with figures)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if sum(ch.isdigit() for ch in line) >= 3 and len(line) < 400:
            out.append(line)
            continue
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", line) if s.strip())
    return out


class ExtractiveAnswerer:
    """Quote the best-supported sentence or table row, with citation and period."""

    def __init__(self, *, min_coverage: float = 0.5, check_scope: bool = True) -> None:
        self.min_coverage = min_coverage
        self.check_scope = check_scope

    def answer(self, plan: QueryPlan, evidence: Sequence[dict[str, Any]]) -> Answer:
        # company and period words are satisfied by the filing's metadata, not the sentence
        scope_words = " ".join([*(e.text for e in plan.entities), *(p.text for p in plan.periods)])
        core = strip_boilerplate(plan.text)
        # each metric the query names is one concept, met by its own words or its filing wording
        concepts: list[set[str]] = []
        metric_words: set[str] = set()
        for metric, pattern in _METRIC_RES:
            if metric.name not in plan.metrics:
                continue
            named = {t for m in pattern.finditer(core) for t in _content_terms(m.group(0))}
            metric_words |= named
            if metric.name.endswith(("_sheet", "_statement")):
                continue  # where to look, not what to find
            concepts.append(named | _content_terms(metric.expansion))
        wanted = _content_terms(core) - _content_terms(scope_words) - metric_words - _GENERIC
        # a single letter (the "s" of a possessive, the "k" of 10-K) says nothing to look for
        wanted = {t for t in wanted if not t.isdigit() and len(t) > 1}
        # an officer's title asked by its abbreviation is met by the abbreviation or the title
        titles = [(abbr, _TITLES[abbr]) for abbr in sorted(wanted & _TITLES.keys())]
        wanted -= _TITLES.keys()
        if not (wanted or concepts or titles) or not evidence:
            return Answer(REFUSAL, refused=True)
        total = len(wanted) + len(concepts) + len(titles)
        keys = set(plan.entity_keys)
        years = {p.fiscal_year for p in plan.periods if p.fiscal_year is not None}
        best: tuple[float, bool, int, int, str, dict[str, Any]] | None = None
        for rank, ev in enumerate(evidence):
            if (
                self.check_scope
                and keys
                and ev.get("company_key")
                and ev["company_key"] not in keys
            ):
                continue
            if (
                self.check_scope and years and ev.get("fiscal_year") is not None
                and not any(abs(int(ev["fiscal_year"]) - y) <= 2 for y in years)
            ):  # fmt: skip
                continue
            for pos, unit in enumerate(_units(str(ev.get("text", "")))):
                terms = _content_terms(unit)
                met = (
                    len(wanted & terms)
                    + sum(1 for c in concepts if c & terms)
                    + sum(1 for abbr, words in titles if abbr in terms or words <= terms)
                )
                cover = met / total
                # a question about a metric wants a figure: rows with numbers win ties
                figures = bool(concepts) and bool(re.search(r"\d", unit))
                key = (cover, figures, -rank, -pos, unit, ev)
                if best is None or key[:4] > best[:4]:
                    best = key
        if best is None or best[0] < self.min_coverage:
            return Answer(REFUSAL, refused=True)
        _, _, _, _, unit, ev = best
        label = ev.get("label") or ev.get("doc_id", "")
        return Answer(
            answer=f'"{unit}" [{ev["chunk_id"]}; {label}]',
            citations=[str(ev["chunk_id"])],
            period=_period(ev),
            support=best[0],
        )


def _period(ev: dict[str, Any]) -> str | None:
    fy = ev.get("fiscal_year")
    if fy is None:
        return None
    q = ev.get("fiscal_quarter")
    return f"Q{q} FY{fy}" if q else f"FY{fy}"


_SYSTEM_PROMPT = (
    "You answer questions about company filings using only the numbered excerpts given. "
    "Cite excerpts by their ids in square brackets. State the fiscal period of every figure. "
    f'If the excerpts do not contain the answer, reply exactly: "{REFUSAL}". '
    'Never say that something is "not disclosed".'
)


class LLMAnswerer:
    """Answer with an OpenAI-compatible chat model, through the shared cached `ChatClient`.

    `chat` is an `assay.chat.ChatClient` (the client the LLM judge uses; every call goes through
    its request cache); `LLMAnswerer.connect(base_url=..., model=...)` builds one. Temperature 0
    and the full request are part of the cache key.
    """

    def __init__(
        self,
        chat: ChatClient,
        *,
        max_evidence: int = 5,
        price_in: float | None = None,
        price_out: float | None = None,
    ) -> None:
        self.chat = chat
        self.max_evidence = max_evidence
        self.price_in = price_in
        self.price_out = price_out

    def identity(self) -> dict[str, Any]:
        """What changes its answers: endpoint, model, prompt and evidence depth (prices only
        change the cost it reports)."""
        return {
            "answerer": "llm",
            "base_url": self.chat.base_url,
            "model": self.chat.model,
            "prompt": _SYSTEM_PROMPT,
            "max_evidence": self.max_evidence,
        }

    def _cost(self, reply: ChatReply) -> dict[str, Any]:
        usd: float | None = None
        if (
            self.price_in is not None
            and self.price_out is not None
            and reply.prompt_tokens is not None
            and reply.completion_tokens is not None
        ):
            usd = (
                reply.prompt_tokens * self.price_in + reply.completion_tokens * self.price_out
            ) / 1e6
        return {
            "model": reply.model,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.total_tokens,
            "usd": usd,
            "cached": reply.cached,
        }

    @classmethod
    def connect(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        cache: RequestCache | None = None,
        max_evidence: int = 5,
        timeout: float = 60.0,
        price_in: float | None = None,
        price_out: float | None = None,
    ) -> LLMAnswerer:
        """An answerer on the given endpoint and model, else `$ASSAY_LLM_BASE_URL` /
        `$ASSAY_LLM_MODEL` (key: `$ASSAY_LLM_API_KEY`). `price_in` / `price_out` are USD per
        million prompt / completion tokens: with both, each answer's cost is priced."""
        cache = cache if cache is not None else RequestCache(namespace="filings-llm-answer")
        chat = ChatClient.from_env(base_url=base_url, model=model, cache=cache, timeout=timeout)
        return cls(chat, max_evidence=max_evidence, price_in=price_in, price_out=price_out)

    def answer(self, plan: QueryPlan, evidence: Sequence[dict[str, Any]]) -> Answer:
        ev = list(evidence[: self.max_evidence])
        if not ev:
            return Answer(REFUSAL, refused=True)
        excerpts = "\n\n".join(f"[{e['chunk_id']}] ({e.get('label', '')})\n{e['text']}" for e in ev)
        reply = self.chat.reply(
            [
                {"role": "system", "content": _SYSTEM_PROMPT},
                {"role": "user", "content": f"Excerpts:\n{excerpts}\n\nQuestion: {plan.text}"},
            ],
            temperature=0,
            max_tokens=None,
            seed=None,
        )
        cost = self._cost(reply)
        text = reply.text.strip()
        if not text or _DECLINE.search(text):
            return Answer(REFUSAL, refused=True, cost=cost)
        ids = {e["chunk_id"] for e in ev}
        cited = [c for c in re.findall(r"\[([^\[\]]+)\]", text) if c in ids]
        return Answer(
            text,
            citations=list(dict.fromkeys(cited)),
            period=_period(ev[0]) if ev else None,
            cost=cost,
        )
