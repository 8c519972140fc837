"""What an expert submits for each task kind, validated server-side (pydantic v2)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from assay._criteria import CRITERIA, RENAMED_CRITERIA, criterion_name, current_criteria
from assay.dataset import ExpectedBehavior, require_graded

__all__ = [
    "CRITERIA",
    "FLAGS",
    "MAX_CHUNK_IDS",
    "PAYLOAD_MODELS",
    "RELEVANCE_GRADES",
    "RENAMED_CRITERIA",
    "ROOT_CAUSES",
    "EvidencePayload",
    "JudgePayload",
    "PolicyPayload",
    "ReferencePayload",
    "SqlPayload",
    "ToolPayload",
    "agreement_key",
    "bad_text",
    "criterion_name",
    "current_criteria",
    "validate_payload",
]

_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")


def bad_text(value: Any, where: str = "") -> tuple[str, str] | None:
    """(field, why) of the first string or key in `value` (dicts, lists) holding a NUL or a lone
    surrogate (a ``\\ud800`` escape in JSON with no partner), else None. Neither can be stored:
    PostgreSQL's text refuses NUL, and a lone surrogate is not UTF-8, so every write route and
    importer refuses them up front, naming the field (dotted, with list indexes)."""
    if isinstance(value, str):
        m = _BAD_CHAR.search(value)
        if m is None:
            return None
        what = "a NUL character" if m.group() == "\x00" else "a lone surrogate (not UTF-8)"
        return where or "value", f"contains {what}"
    if isinstance(value, dict):
        for k, v in value.items():
            name = _shown_key(k)
            here = f"{where}.{name}" if where else name
            found = bad_text(k, here) if isinstance(k, str) else None
            if found is None:
                found = bad_text(v, here)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = bad_text(v, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _shown_key(key: Any) -> str:
    """A key as an error names it: a NUL or a lone surrogate written as its escape, so the
    message itself can be encoded (a raw lone surrogate in it made the answer a 500)."""
    text = str(key)
    if _BAD_CHAR.search(text) is None:
        return text
    return _BAD_CHAR.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


FLAGS = ("ambiguous_question", "docs_outdated", "not_my_domain")
ROOT_CAUSES = ("annotator_error", "guideline_gap", "ambiguous_item", "stale_documents")

ChunkId = Annotated[str, Field(max_length=300)]
MAX_CHUNK_IDS = 1000  # chunk ids one label may name (a label is read by hand, not a dump)
RELEVANCE_GRADES = (0, 1, 2, 3)  # not relevant, marginal, relevant, highly relevant (TREC)


class EvidencePayload(BaseModel):
    """Evidence paths over chunk ids: paths -> required pieces -> interchangeable alternatives.
    No paths means the expert found no evidence in the corpus for the question. `relevance`
    grades chunk ids of the paths 0-3 (TREC's graded scale; exported as the entry's
    `metadata.relevance`, the gain nDCG and qrels use); an ungraded chunk counts as 1."""

    model_config = ConfigDict(extra="forbid")
    paths: list[list[list[ChunkId]]] = Field(default_factory=list)
    note: str = Field(default="", max_length=2000)
    relevance: dict[ChunkId, Annotated[int, Field(ge=0, le=3)]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _graded_chunks_are_in_paths(self) -> EvidencePayload:
        ids = self.chunk_ids()
        if len(ids) > MAX_CHUNK_IDS:
            raise ValueError(
                f"paths: at most {MAX_CHUNK_IDS} distinct chunk ids in one label, not {len(ids)}"
            )
        stray = sorted(set(self.relevance) - ids)
        if stray:
            raise ValueError(
                "relevance: grades chunk ids that are in no path: " + ", ".join(stray[:5])
            )
        for i, path in enumerate(self.paths):  # as the exported entry would be refused
            for j, piece in enumerate(path):
                require_graded(list(piece), self.relevance, i, j)
        return self

    @field_validator("paths")
    @classmethod
    def _clean(cls, paths: list[list[list[str]]]) -> list[list[list[str]]]:
        out: list[list[list[str]]] = []
        for path in paths:
            pieces = [sorted({a.strip() for a in piece if a.strip()}) for piece in path]
            pieces = [p for p in pieces if p]
            if pieces:
                out.append(pieces)
        return out

    def chunk_ids(self) -> set[str]:
        return {a for path in self.paths for piece in path for a in piece}


class KeyFactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fact: str = Field(min_length=1, max_length=1000)
    critical: StrictBool = True
    supporting: list[ChunkId] = Field(default_factory=list)


class LookupIn(BaseModel):
    """The structured-data lookup behind a 'not disclosed' label (exported as the entry's
    `structured_lookup`): where the expert looked, for what, and what was there."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["facts", "xbrl"] = "facts"
    searched: str = Field(min_length=1, max_length=1000)
    found: str = Field(min_length=1, max_length=4000)

    @field_validator("searched", "found")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank: say what was looked for and what was found")
        return v.strip()


class ReferencePayload(BaseModel):
    """A reference label. Saying the filings do not answer the question (answerable false or
    partial) needs the structured-data lookup that backs it (`structured_lookup`): a missed
    footnote makes a correct refusal look wrong (`assay.dataset.tiers`)."""

    model_config = ConfigDict(extra="forbid")
    reference_answer: str = Field(default="", max_length=10000)
    key_facts: list[KeyFactIn] = Field(default_factory=list)
    answerable: StrictBool | Literal["partial"] = True
    expected_behavior: ExpectedBehavior = ExpectedBehavior.answer
    acceptable_response_notes: str = Field(default="", max_length=4000)
    from_draft: StrictBool = Field(
        default=False, description="the form opened on the system's draft answer and key facts"
    )
    structured_lookup: LookupIn | None = None

    @model_validator(mode="after")
    def _answer_when_answerable(self) -> ReferencePayload:
        if self.answerable is not False and not self.reference_answer.strip():
            raise ValueError("an answerable question needs a reference answer")
        if self.answerable is not True and self.structured_lookup is None:
            raise ValueError(
                "structured_lookup: a question the filings do not (fully) answer needs the "
                "structured-data lookup: what was searched in the facts table or XBRL, and "
                "what was found"
            )
        return self

    @model_validator(mode="after")
    def _not_too_many_chunks(self) -> ReferencePayload:
        n = len(self.chunk_ids())
        if n > MAX_CHUNK_IDS:
            raise ValueError(f"key_facts: at most {MAX_CHUNK_IDS} supporting chunk ids, not {n}")
        return self

    def chunk_ids(self) -> set[str]:
        return {a for kf in self.key_facts for a in kf.supporting}


Verdict = Literal["pass", "fail"]


class JudgePayload(BaseModel):
    """Binary Pass/Fail per criterion; every Fail needs a one-sentence critique."""

    model_config = ConfigDict(extra="forbid")
    verdicts: dict[str, Verdict]
    critiques: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _current_names(cls, data: Any) -> Any:
        """A form or client from before a criterion was renamed sends its old name."""
        return current_criteria(data) if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _complete(self) -> JudgePayload:
        missing = [c for c in CRITERIA if c not in self.verdicts]
        extra = [c for c in self.verdicts if c not in CRITERIA]
        if missing or extra:
            raise ValueError(
                f"verdicts need exactly the criteria {', '.join(CRITERIA)}"
                + (f" (missing {', '.join(missing)})" if missing else "")
                + (f" (unknown {', '.join(extra)})" if extra else "")
            )
        crit: dict[str, str] = {}
        for c in CRITERIA:
            text = " ".join(self.critiques.get(c, "").split())
            if self.verdicts[c] == "fail":
                if not text:
                    raise ValueError(f"a Fail on {c!r} needs a one-sentence critique")
                if len(text) > 400:
                    raise ValueError(f"the critique on {c!r} should be one sentence (<= 400 chars)")
            if text:
                crit[c] = text
        self.critiques = crit
        return self


class SqlPayload(BaseModel):
    """A SQL task's label: Pass or Fail on the system's query (a Fail needs a one-sentence
    critique), and optionally the gold query as the expert edited it. An edited gold query must
    be one read-only statement in the entry's dialect (checked by `assay.sql.check_safe` on
    submission, so an unsafe edit is refused before anything runs it)."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    critique: str = Field(default="", max_length=400)
    gold_query: str | None = Field(default=None, max_length=20000)

    @model_validator(mode="after")
    def _clean(self) -> SqlPayload:
        self.critique = " ".join(self.critique.split())
        if self.verdict == "fail" and not self.critique:
            raise ValueError("a Fail needs a one-sentence critique")
        q = (self.gold_query or "").strip().rstrip(";").strip()
        self.gold_query = q or None
        return self


class PolicyPayload(BaseModel):
    """A policy task's label: Pass or Fail on `policy_ok` (the system answered, refused or
    escalated as the principal's access requires, and showed nothing they may not see); a Fail
    needs a one-sentence critique. Exported as the `policy_ok` criterion, so it calibrates the
    check of that name (`assay.checks.policy`)."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    critique: str = Field(default="", max_length=400)

    @model_validator(mode="after")
    def _clean(self) -> PolicyPayload:
        self.critique = " ".join(self.critique.split())
        if self.verdict == "fail" and not self.critique:
            raise ValueError("a Fail needs a one-sentence critique")
        return self


class ToolCallVerdict(BaseModel):
    """Pass or Fail on one call the system made; a Fail needs a one-sentence critique."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    critique: str = Field(default="", max_length=400)

    @model_validator(mode="after")
    def _clean(self) -> ToolCallVerdict:
        self.critique = " ".join(self.critique.split())
        if self.verdict == "fail" and not self.critique:
            raise ValueError("a Fail on a call needs a one-sentence critique")
        return self


class MissingCallVerdict(BaseModel):
    """Whether an expected call the system never made was needed for this question."""

    model_config = ConfigDict(extra="forbid")
    needed: StrictBool
    critique: str = Field(default="", max_length=400)

    @model_validator(mode="after")
    def _clean(self) -> MissingCallVerdict:
        self.critique = " ".join(self.critique.split())
        return self


MAX_TOOL_CALLS = 200  # calls one task shows (`assay.workbench.service.tools.row_tool_calls`)


class ToolPayload(BaseModel):
    """A tool task's label: one verdict per call the system made, in the order made
    (`calls`), and for each expected call no call answered, in the gold's order, whether it
    was needed (`missing`); an optional note. The counts must be the task's (checked on
    submission against its panel, `assay.workbench.service.tools.check_tool_label`)."""

    model_config = ConfigDict(extra="forbid")
    calls: list[ToolCallVerdict] = Field(default_factory=list, max_length=MAX_TOOL_CALLS)
    missing: list[MissingCallVerdict] = Field(default_factory=list, max_length=MAX_TOOL_CALLS)
    note: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _clean(self) -> ToolPayload:
        self.note = self.note.strip()
        return self


PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "evidence": EvidencePayload,
    "reference": ReferencePayload,
    "judge": JudgePayload,
    "sql": SqlPayload,
    "policy": PolicyPayload,
    "tool": ToolPayload,
}


def validate_payload(kind: str, data: Any) -> BaseModel:
    """Validate a submitted payload of a task kind (raises pydantic.ValidationError)."""
    return PAYLOAD_MODELS[kind].model_validate(data)


def agreement_key(kind: str, payload: dict[str, Any]) -> Any:
    """The part of a label on which two experts must agree for the task to need no adjudication.

    evidence: the set of paths (order of paths, pieces and alternatives ignored);
    reference: answerability and expected behaviour (free text is merged, not compared);
    judge: the four verdicts;
    sql: the verdict and the edited gold query (whitespace and letter case aside), if any;
    policy: the verdict on `policy_ok`;
    tool: the verdict on each call made and whether each missing expected call was needed
    (critiques and notes are free text, not compared).
    """
    if kind == "evidence":
        return tuple(
            sorted(tuple(sorted(tuple(sorted(p)) for p in path)) for path in payload["paths"])
        )
    if kind == "reference":
        return (str(payload.get("answerable")), payload.get("expected_behavior"))
    if kind == "sql":
        q = payload.get("gold_query")
        return (payload["verdict"], " ".join(q.split()).casefold() if q else None)
    if kind == "policy":
        return (payload["verdict"],)
    if kind == "tool":
        return (
            tuple(c["verdict"] for c in payload.get("calls") or []),
            tuple(bool(m["needed"]) for m in payload.get("missing") or []),
        )
    verdicts = current_criteria(payload)["verdicts"]
    return tuple(verdicts[c] for c in CRITERIA)
