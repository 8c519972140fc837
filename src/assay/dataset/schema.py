"""The golden entry schema.

An entry is one golden question. Its evidence is a list of *paths*; a path is a list of required
*pieces*; a piece is a list of interchangeable *alternatives*; an alternative is a chunk id
(string) or an `Anchor` (doc + 1-based page + quote) that is resolved onto whatever chunks an index
has. The entry is scored by its best path.

Every alternative has its own *grade* (`Entry.grade`): an anchor's `relevance`, a chunk id's
`metadata.relevance[chunk_id]`, 1 when none is given (TREC's scale: 0 not relevant, 1 marginal,
2 relevant, 3 highly relevant). A grade-0 alternative satisfies nothing, so a piece needs at
least one home alternative graded above 0.

`chunk_hashes` records what chunk-id gold pointed at when it was labelled: for each chunk id the
entry names, the fingerprint of that chunk's text (`assay.gold.chunk_fingerprint`). Validation
against a chunk table then notices a chunk whose id survived a re-chunk but whose text changed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
)

from assay.dataset.labelgold import LabelGold
from assay.dataset.sqlgold import SqlGold
from assay.dataset.toolgold import ToolCallGold

__all__ = [
    "Alternative",
    "Anchor",
    "ConversationRef",
    "Entry",
    "EvidencePath",
    "ExpectedBehavior",
    "KeyFact",
    "Piece",
    "Principal",
    "Source",
    "SqlGold",
    "StructuredLookup",
    "grade",
    "require_graded",
]


LEGACY_GOLD_TIERS = frozenset({"expert-agreed", "expert-adjudicated"})
"""`label_tier` values the workbench export wrote before tiers were named; read as ``gold``."""


class ExpectedBehavior(StrEnum):
    answer = "answer"
    abstain = "abstain"
    clarify = "clarify"
    correct_premise = "correct_premise"
    refuse = "refuse"
    escalate = "escalate"


class Source(StrEnum):
    log = "log"
    hand = "hand"
    synthetic = "synthetic"
    benchmark = "benchmark"


class Anchor(BaseModel):
    """Where a piece of gold lives independent of any chunking: doc + 1-based page + quoted text.

    Optional: a `box` (x0, y0, x1, y1) on the page in PDF points (origin bottom-left), which
    aligns by overlap with a parser's line boxes; and for spreadsheets a `sheet` and a `cells`
    range, which align onto the table region that holds the whole range.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc: str = Field(min_length=1)
    page: StrictInt | None = Field(default=None, ge=1, description="1-based page number")
    quote: str = Field(min_length=1)
    box: tuple[float, float, float, float] | None = Field(
        default=None, description="optional (x0, y0, x1, y1) on the page"
    )
    relevance: StrictInt | None = Field(
        default=None,
        ge=0,
        description="optional grade, the gain nDCG gives this alternative when it is the one "
        "retrieved (default 1; 0: not relevant, satisfies nothing)",
    )
    sheet: str | None = Field(
        default=None, min_length=1, description="optional worksheet name (spreadsheet gold)"
    )
    cells: str | None = Field(
        default=None,
        pattern=r"^[A-Z]{1,3}[1-9][0-9]*(:[A-Z]{1,3}[1-9][0-9]*)?$",
        description="optional A1 cell or range on `sheet` (B3 or B3:E9)",
    )
    role: Literal["home", "mention"] = Field(
        default="home",
        description="home: where the fact is reported (headline retrieval credit); mention: "
        "the same fact repeated elsewhere (a later filing's comparative column), evidence but "
        "no headline credit",
    )

    def key(self) -> str:
        return f"{self.doc}@p{self.page}:{self.quote[:40]}"


Alternative = str | Anchor
_CHUNK_HASH = re.compile(r"[0-9a-f]{16}")
Piece = list[Alternative]
EvidencePath = list[Piece]


def grade(alt: Alternative, grades: dict[str, Any]) -> int:
    """The grade of one alternative: an anchor's `relevance`, else `grades[chunk_id]` (an entry's
    `metadata.relevance`); 1 when none is given."""
    if isinstance(alt, str):
        return int(grades.get(alt, 1))
    return 1 if alt.relevance is None else alt.relevance


def require_graded(piece: Piece, grades: dict[str, Any], i: int, j: int) -> None:
    """Refuse (ValueError) piece `j` of path `i` when nothing can satisfy it: every home
    alternative graded 0. `grades`: chunk id -> grade (an entry's `metadata.relevance`)."""
    homes = [a for a in piece if not (isinstance(a, Anchor) and a.role == "mention")]
    if homes and all(grade(a, grades) == 0 for a in homes):
        raise ValueError(
            f"path {i} piece {j}: every alternative is graded 0 (not relevant), so nothing can "
            "satisfy it; grade the evidence above 0 or drop the piece"
        )


class KeyFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact: str = Field(min_length=1)
    critical: StrictBool = True
    supporting: list[Alternative] = Field(default_factory=list)


class StructuredLookup(BaseModel):
    """The structured-data lookup behind a 'not disclosed' label: where the reviewer looked
    (``facts``: the corpus facts table, ``facts.jsonl``; ``xbrl``: the filing's XBRL company
    facts), what they looked for (the concept and period), what they found there (the figures,
    or that nothing was there), who looked and when. An unanswerable or partial entry is gold
    only with one (`assay.dataset.tiers.not_disclosed_shortfall`): a footnote the reader missed
    makes a correct refusal look wrong."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["facts", "xbrl"]
    searched: str = Field(
        min_length=1, description="what was looked for: the concept, company and period"
    )
    found: str = Field(min_length=1, description="what the lookup found: the figures, or 'nothing'")
    by: str | None = Field(default=None, min_length=1, description="who looked")
    at: dt.date | None = Field(default=None, description="when (ISO date)")

    @field_validator("searched", "found")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v


class Principal(BaseModel):
    """Who asks the question: a role, the groups they belong to (a deal team, the board) and a
    clearance tier (public < internal < insider < director); what access labels are checked
    against (`assay.corpus.access`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str = Field(min_length=1)
    groups: tuple[str, ...] = ()
    clearance: Literal["public", "internal", "insider", "director"] = "public"


class ConversationRef(BaseModel):
    """Where a turn entry sits in its conversation (`assay.dataset.conversations`): the
    conversation's id, this turn's 1-based number, the number of turns, the earlier turns this
    one needs (``depends_on``) and the conversation-level criteria (checks such as
    ``kept_context``). The loader sets it on each entry a ``turns`` line expands into."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    turn: StrictInt = Field(ge=1, description="1-based turn number")
    turns: StrictInt = Field(ge=1, description="how many turns the conversation has")
    depends_on: tuple[StrictInt, ...] = Field(
        default=(), description="earlier turn numbers this turn needs"
    )
    criteria: tuple[str, ...] = Field(
        default=(), description="conversation-level criteria (check names)"
    )

    @field_validator("depends_on")
    @classmethod
    def _earlier(cls, v: tuple[int, ...], info: ValidationInfo) -> tuple[int, ...]:
        turn = info.data.get("turn")
        bad = [d for d in v if d < 1 or (turn is not None and d >= turn)]
        if bad:
            raise ValueError(
                f"names turn {bad[0]}: a turn depends only on earlier turns (1..{(turn or 1) - 1})"
            )
        return v


class Entry(BaseModel):
    """One golden question. Unknown top-level fields are an error; put free data under `metadata`."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    category: str = Field(min_length=1)
    answerable: StrictBool | Literal["partial"] = True
    expected_behavior: ExpectedBehavior | None = None
    acceptable_response_notes: str | None = None
    clarify_with: list[str] | None = Field(
        default=None,
        min_length=2,
        description="expected_behavior clarify: the readings the question leaves open (the "
        "companies an alias may mean, 'fiscal 2023' and 'calendar 2023'); a good answer asks "
        "which is meant or answers each, naming it (checked by `clarify_ok`)",
    )
    false_premise: str | None = Field(
        default=None,
        min_length=1,
        description="expected_behavior correct_premise: the false assumption the question "
        "makes, stated as a claim ('X discloses its customer count for the third quarter'); a "
        "good answer says it is false (checked by `premise_corrected`)",
    )
    must_acknowledge_gap: StrictBool = Field(
        default=False,
        description="The filings answer only part of the question: a good answer says what "
        "they do not disclose (checked by `acknowledges_gap`)",
    )
    as_of: dt.date | None = None
    principal: Principal | None = Field(
        default=None,
        description="who asks (role, groups, clearance); none: the public. The runner passes it "
        "to a system whose retrieve() takes `principal`",
    )
    behavior_reason: str | None = Field(
        default=None,
        description="why the expected behaviour is what it is (e.g. the access label that "
        "denies the principal)",
    )
    evidence_paths: list[EvidencePath] = Field(default_factory=list)
    reference_answer: str | None = None
    key_facts: list[KeyFact] = Field(default_factory=list)
    chunk_hashes: dict[str, str] = Field(
        default_factory=dict,
        description="chunk id -> fingerprint of the chunk's text when it was labelled "
        "(16 hex digits, assay.gold.chunk_fingerprint); optional, checked by validate --chunks",
    )
    source: Source | None = None
    reviewed_by: StrictInt | None = Field(default=None, ge=0)
    created_by: str | None = Field(
        default=None,
        min_length=1,
        description="who wrote the entry: a person's handle, or the generator or import that "
        "made it (e.g. `synth/questions`, `import financebench`)",
    )
    added: dt.date | None = None
    label_tier: Literal["draft", "silver", "gold"] | None = Field(
        default=None,
        description="who verified the entry: draft (generated or imported, nobody checked it), "
        "silver (one expert), gold (two experts agreeing, or an adjudication); none: read from "
        "`reviewed_by` and `source` (assay.dataset.tiers). score, check, compare and gate use "
        "gold by default",
    )
    structured_lookup: StructuredLookup | None = Field(
        default=None,
        description="the structured-data lookup (facts table or XBRL) that backs a 'not "
        "disclosed' label; an unanswerable or partial entry is gold only with it and two "
        "reviewers (assay.dataset.tiers)",
    )
    ambiguous_reason: str | None = Field(
        default=None, min_length=1, description="why the entry is ambiguous"
    )
    ambiguous: StrictBool = Field(
        default=False,
        validate_default=True,
        description="the question has more than one defensible reading: reported apart, never "
        "scored or gated (needs `ambiguous_reason`)",
    )
    doc_versions: dict[str, Any] | list[Any] | None = None
    flags: list[str | dict[str, Any]] = Field(default_factory=list)
    split: str | None = None
    sql: SqlGold | None = Field(
        default=None, description="gold SQL for a text-to-SQL question (assay.dataset.sqlgold)"
    )
    expected_tool_calls: ToolCallGold | None = Field(
        default=None,
        description="the tool calls an agent should make, and must not (assay.dataset.toolgold)",
    )
    expected_label: LabelGold | None = Field(
        default=None,
        description="the label a router or guardrail should give (assay.dataset.labelgold)",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    conversation: ConversationRef | None = Field(
        default=None,
        description="the conversation this entry is a turn of (set by the loader from a "
        "``turns`` line; `assay.dataset.conversations`)",
    )

    @field_validator("as_of", "added", mode="before")
    @classmethod
    def _iso_date(cls, v: Any) -> Any:
        if v is None or isinstance(v, dt.date):
            return v
        if isinstance(v, str):
            try:
                return dt.date.fromisoformat(v)
            except ValueError:
                raise ValueError(f"{v!r} is not an ISO date (YYYY-MM-DD)") from None
        raise ValueError("must be an ISO date string (YYYY-MM-DD)")

    @field_validator("clarify_with", "false_premise")
    @classmethod
    def _behaviour_detail(cls, v: Any, info: ValidationInfo) -> Any:
        want = {
            "clarify_with": ExpectedBehavior.clarify,
            "false_premise": ExpectedBehavior.correct_premise,
        }
        if v is not None:
            texts = v if isinstance(v, list) else [v]
            if any(not t.strip() for t in texts):
                raise ValueError("must not be blank")
            behaviour = info.data.get("expected_behavior")
            if info.field_name is not None and behaviour is not want[info.field_name]:
                raise ValueError(
                    f"is for entries whose expected_behavior is {want[info.field_name].value} "
                    f"(this one's is {behaviour.value if behaviour else 'not set'})"
                )
        return v

    @field_validator("label_tier", mode="before")
    @classmethod
    def _legacy_tier(cls, v: Any) -> Any:
        # the workbench wrote these before tiers had names: both are two experts' word
        return "gold" if isinstance(v, str) and v in LEGACY_GOLD_TIERS else v

    @field_validator("ambiguous")
    @classmethod
    def _ambiguous_says_why(cls, v: bool, info: ValidationInfo) -> bool:
        reason = info.data.get("ambiguous_reason")
        if v and not reason:
            raise ValueError(
                "an ambiguous entry says why (ambiguous_reason: the readings it allows)"
            )
        if reason and not v:
            raise ValueError("ambiguous_reason is given but ambiguous is not true")
        return v

    @field_validator("evidence_paths")
    @classmethod
    def _no_empty_pieces(cls, paths: list[EvidencePath]) -> list[EvidencePath]:
        for i, path in enumerate(paths):
            if not path:
                raise ValueError(f"path {i} is empty (a path needs at least one piece)")
            for j, piece in enumerate(path):
                if not piece:
                    raise ValueError(
                        f"path {i} piece {j} is empty (a piece needs at least one alternative)"
                    )
                if any(isinstance(alt, str) and not alt.strip() for alt in piece):
                    raise ValueError(f"path {i} piece {j} has an empty chunk id")
                if all(isinstance(alt, str) for alt in piece):
                    continue  # chunk ids only: each a home, of grade 1 here (`_grades` grades)
                if all(isinstance(a, Anchor) and a.role == "mention" for a in piece):
                    raise ValueError(
                        f"path {i} piece {j} has only mention anchors (a piece needs a home: "
                        "mentions get no headline retrieval credit)"
                    )
                require_graded(piece, {}, i, j)
        return paths

    @field_validator("metadata")
    @classmethod
    def _grades(cls, metadata: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if "relevance" not in metadata:
            return metadata
        grades = metadata["relevance"]
        if not isinstance(grades, dict):
            raise ValueError("relevance must map chunk ids to grades (0-3)")
        bad = sorted(
            str(c)
            for c, g in grades.items()
            if not isinstance(g, int) or isinstance(g, bool) or g < 0
        )
        if bad:
            raise ValueError(
                f"relevance: the grade of {', '.join(bad[:5])} is not an integer >= 0 "
                "(0 not relevant .. 3 highly relevant)"
            )
        for i, path in enumerate(info.data.get("evidence_paths") or []):
            for j, piece in enumerate(path):
                require_graded(piece, grades, i, j)
        return metadata

    @field_validator("chunk_hashes")
    @classmethod
    def _hashes_name_gold_chunks(
        cls, hashes: dict[str, str], info: ValidationInfo
    ) -> dict[str, str]:
        bad = sorted(c for c, h in hashes.items() if not _CHUNK_HASH.fullmatch(h))
        if bad:
            raise ValueError(
                f"the hash of {', '.join(bad)} is not 16 lowercase hex digits "
                "(assay.gold.chunk_fingerprint of the chunk's text)"
            )
        if hashes:
            named: set[str] = set()
            for path in info.data.get("evidence_paths") or []:
                for piece in path:
                    named.update(a for a in piece if isinstance(a, str))
            for kf in info.data.get("key_facts") or []:
                named.update(a for a in kf.supporting if isinstance(a, str))
            stray = sorted(c for c in hashes if c not in named)
            if stray:
                raise ValueError(f"names chunk ids the entry's gold does not: {', '.join(stray)}")
        return hashes

    @field_validator("conversation")
    @classmethod
    def _turn_id(cls, v: ConversationRef | None, info: ValidationInfo) -> ConversationRef | None:
        if v is None:
            return v
        if v.turn > v.turns:
            raise ValueError(f"turn {v.turn} of a conversation of {v.turns} turns")
        want = f"{v.id}#{v.turn}"
        if info.data.get("id") not in (None, want):
            raise ValueError(f"a turn's id is '{{conversation id}}#{{turn}}' ({want!r})")
        return v

    def __setattr__(self, name: str, value: Any) -> None:
        # a field set for the first time is recorded in the entry's own set of fields set (the
        # one-pass reader shares one set among the entries of a row shape: `fast_entry`)
        given = self.__pydantic_fields_set__
        if name not in given and name in type(self).model_fields:
            object.__setattr__(self, "__pydantic_fields_set__", set(given))
        super().__setattr__(name, value)

    @property
    def is_answerable(self) -> bool:
        """Entries with evidence are scored on retrieval; `answerable: false` entries never are."""
        return self.answerable is not False and bool(self.evidence_paths)

    def behavior(self) -> ExpectedBehavior:
        if self.expected_behavior is not None:
            return self.expected_behavior
        return ExpectedBehavior.abstain if self.answerable is False else ExpectedBehavior.answer

    def grade(self, alt: Alternative) -> int:
        """The grade of one alternative of this entry's evidence: an anchor's `relevance`, a chunk
        id's `metadata.relevance[chunk_id]`; 1 when none is given. Grade 0 satisfies nothing."""
        return grade(alt, self.metadata.get("relevance") or {})

    def chunk_ids(self) -> set[str]:
        """Every chunk id named as an alternative in any path or key fact."""
        out: set[str] = set()
        for path in self.evidence_paths:
            for piece in path:
                out.update(a for a in piece if isinstance(a, str))
        for kf in self.key_facts:
            out.update(a for a in kf.supporting if isinstance(a, str))
        return out

    def anchors(self) -> list[Anchor]:
        out: list[Anchor] = []
        for path in self.evidence_paths:
            for piece in path:
                out.extend(a for a in piece if isinstance(a, Anchor))
        for kf in self.key_facts:
            out.extend(a for a in kf.supporting if isinstance(a, Anchor))
        return out

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready dict without unset optional fields (round-trips through `Entry.model_validate`)."""
        return self.model_dump(mode="json", exclude_defaults=True, exclude_none=True) | {
            "id": self.id,
            "query": self.query,
            "category": self.category,
        }


def _text(v: Any) -> bool:
    return type(v) is str and bool(v)


def _chunk_ids(paths: Any) -> bool:
    """Evidence paths of chunk ids only, none blank, no path or piece empty."""
    if type(paths) is not list:
        return False
    for path in paths:
        if type(path) is not list or not path:
            return False
        for piece in path:
            if type(piece) is not list or not piece:
                return False
            for alt in piece:
                if type(alt) is not str or not alt.strip():
                    return False
    return True


def _date(v: Any) -> dt.date | bool | None:
    """The date `Entry._iso_date` reads from ``v`` (None for None), or False."""
    if v is None:
        return None
    if type(v) is not str:
        return False
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        return False


_SOURCES = {s.value: s for s in Source}
_TIERS = frozenset({"draft", "silver", "gold", None})
_FAST: dict[str, Any] = {
    "id": _text,
    "query": _text,
    "category": _text,
    "answerable": lambda v: type(v) is bool,
    "evidence_paths": _chunk_ids,
    "reference_answer": lambda v: v is None or type(v) is str,
    "label_tier": lambda v: v in _TIERS if type(v) is str or v is None else False,
    "reviewed_by": lambda v: v is None or (type(v) is int and v >= 0),
    "created_by": lambda v: v is None or _text(v),
    "split": lambda v: v is None or type(v) is str,
    "source": lambda v: v is None or (type(v) is str and v in _SOURCES),
    "metadata": lambda v: type(v) is dict and "relevance" not in v,
}
_FAST_DATES = ("as_of", "added")
_FAST_KEYS = frozenset(_FAST).union(_FAST_DATES)


def fast_entry(
    row: dict[str, Any], *, fields_sets: dict[tuple[str, ...], set[str]] | None = None
) -> Entry | None:
    """The `Entry` of a row in the common shape, built without running the full validation,
    or None when the row holds anything else (then `Entry.model_validate` reads it, and names
    what is wrong). The common shape: only the fields of ``_FAST`` and the dates, each of the
    plainest valid kind (non-empty strings, chunk-id evidence, a known tier and source, a
    metadata object without relevance grades, ISO dates). Such a row is valid, and gives the
    entry validation gives (`tests/dataset/test_fast_entry.py` checks it against the model).

    ``fields_sets`` (a reader's, one per file): entries whose rows give the same fields in the
    same order share one set of the fields set (pydantic's ``model_fields_set``, which nothing
    here reads but ``model_dump(exclude_unset=True)``), instead of one set (~470 bytes) each."""
    if not (row.keys() <= _FAST_KEYS and "id" in row and "query" in row and "category" in row):
        return None
    values = dict(row)
    for key, v in row.items():
        if key in _TEXTS:  # id, query, category: the common keys checked inline
            if type(v) is not str or not v:
                return None
        elif key == "evidence_paths":
            if not _chunk_ids(v):
                return None
        elif key in _FAST_DATES:
            day = _date(v)
            if day is False:
                return None
            values[key] = day
        elif not _FAST[key](v):
            return None
    if values.get("source") is not None:
        values["source"] = _SOURCES[values["source"]]
    # what `Entry.model_construct` does, without its per-field loop (it inspects each default
    # factory's signature, entry after entry, at more than the cost of validating)
    entry = Entry.__new__(Entry)
    fields = _DEFAULTS | values  # in the fields' order: _DEFAULTS's
    # the default factories' empty values, made by literals (calling `list` and `dict` costs
    # more); `_FACTORIES` names these five (a test pins the list)
    if "evidence_paths" not in values:
        fields["evidence_paths"] = []
    fields["key_facts"] = []
    fields["chunk_hashes"] = {}
    fields["flags"] = []
    if "metadata" not in values:
        fields["metadata"] = {}
    _set(entry, "__dict__", fields)
    if fields_sets is None:
        given = set(values)
    elif (shared := fields_sets.get(keys := tuple(values))) is not None:
        given = shared
    else:
        given = fields_sets[keys] = set(values)
    _set(entry, "__pydantic_fields_set__", given)
    _set(entry, "__pydantic_extra__", None)
    _set(entry, "__pydantic_private__", None)
    return entry


_set = object.__setattr__
_DEFAULTS = {name: f.default for name, f in Entry.model_fields.items()}  # factories: made
_FACTORIES = [
    (n, cast("Callable[[], Any]", f.default_factory))  # list, dict: they take no data
    for n, f in Entry.model_fields.items()
    if f.default_factory is not None
]
_TEXTS = frozenset({"id", "query", "category"})
# `fast_entry` makes the factories' empty values itself: a new factory field must be added there
# (`tests/dataset/test_fast_entry.py` pins the list)
