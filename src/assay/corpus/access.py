"""Access labels: who may see a document, and what a system should do for someone who may not.

A document (a line of documents.jsonl) may carry an ``access`` label; the corpus build copies it
onto every chunk of the document (the chunk table's ``access`` field). A document without one is
public. A label says:

``groups``
    the principal must belong to at least one of them (a deal team ``deal:ACME``, the board
    ``board:ACME``); empty: no group is needed.
``clearance``
    the lowest clearance tier that may see it (`TIERS`: public < internal < insider <
    director); None: any tier.
``public_from``
    the date the document becomes public (a draft 8-K at its acceptance): from that ``as_of``
    on the label no longer restricts anyone. A question without ``as_of`` is asked *now*, and
    the label restricts (the conservative reading).
``escalate_from``
    a principal denied access whose clearance is at least this tier should be told to escalate
    (ask the data-room owner, compliance) rather than refused; None: always refuse.
``label``
    the label in words, shown in reports and the explorer.

A principal (`assay.dataset.schema.Principal`: role, groups, clearance) asks each question; an
entry without one is asked by the public (no groups, clearance ``public``). `allows` is the one
rule every system, check and guard uses; `expected_behavior` is what a system should do for a
principal who asks a question whose evidence carries these labels.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import DataError, Problem

__all__ = [
    "PUBLIC",
    "TIERS",
    "AccessLabel",
    "PrincipalLike",
    "allows",
    "decision",
    "parse_access",
    "principal_json",
    "principal_key",
    "tier_rank",
]

TIERS: tuple[str, ...] = ("public", "internal", "insider", "director")
"""Clearance tiers, lowest first."""

Tier = Literal["public", "internal", "insider", "director"]


def tier_rank(tier: str | None) -> int:
    """The position of a tier in `TIERS` (None: public)."""
    return TIERS.index(tier or "public")


class PrincipalLike(Protocol):
    """Who asks: a role, the groups they belong to, their clearance tier."""

    @property
    def role(self) -> str: ...
    @property
    def groups(self) -> Sequence[str]: ...
    @property
    def clearance(self) -> str: ...


class _Public:
    role = "public"
    groups: tuple[str, ...] = ()
    clearance = "public"


PUBLIC: PrincipalLike = _Public()
"""The principal of an entry that names none: no group, the lowest tier."""


class AccessLabel(BaseModel):
    """Who may see a document (module docs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    groups: tuple[str, ...] = ()
    clearance: Tier | None = None
    public_from: dt.date | None = None
    escalate_from: Tier | None = None
    label: str = Field(default="restricted", min_length=1)

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(not g.strip() for g in v):
            raise ValueError("a group name must not be empty")
        return tuple(sorted(set(v)))

    @property
    def restricts(self) -> bool:
        return bool(self.groups) or tier_rank(self.clearance) > 0

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {
            "label": self.label
        }


def parse_access(
    value: Any, *, file: str = "<access>", line: int | None = None, field: str = "access"
) -> AccessLabel | None:
    """An access label from its JSON form (None: public), or a `DataError` naming FILE:LINE."""
    if value is None:
        return None
    if isinstance(value, AccessLabel):
        return value
    if not isinstance(value, Mapping):
        raise DataError("an access label is a JSON object", file=file, line=line, field=field)
    try:
        return AccessLabel.model_validate(dict(value))
    except ValidationError as exc:
        raise DataError(
            [
                Problem(
                    file,
                    line,
                    ".".join([field, *(str(p) for p in err["loc"])]),
                    err["msg"],
                )
                for err in exc.errors()
            ]
        ) from None


def allows(
    access: AccessLabel | None, principal: PrincipalLike | None, as_of: dt.date | None = None
) -> bool:
    """May `principal` (None: the public) see a document labelled `access` at `as_of`?"""
    if access is None or not access.restricts:
        return True
    if access.public_from is not None and as_of is not None and as_of >= access.public_from:
        return True
    who = principal if principal is not None else PUBLIC
    if access.groups and not set(access.groups) & set(who.groups):
        return False
    return tier_rank(who.clearance) >= tier_rank(access.clearance)


def decision(
    labels: Iterable[AccessLabel | None],
    principal: PrincipalLike | None,
    as_of: dt.date | None = None,
) -> tuple[Literal["answer", "refuse", "escalate"], str | None]:
    """What a system should do when `principal` asks a question whose evidence carries `labels`:
    ``answer`` when every label allows them; otherwise ``escalate`` when their clearance reaches
    every denying label's ``escalate_from``, else ``refuse``. The second item is the reason (the
    first denying label in words), None when answering."""
    who = principal if principal is not None else PUBLIC
    denied = [a for a in labels if a is not None and not allows(a, who, as_of)]
    if not denied:
        return "answer", None
    rank = tier_rank(who.clearance)
    escalate = all(
        a.escalate_from is not None and rank >= tier_rank(a.escalate_from) for a in denied
    )
    return ("escalate" if escalate else "refuse"), denied[0].label


def principal_key(principal: PrincipalLike | None) -> str | None:
    """A stable text of a principal (what cache keys and journals record); None for none."""
    if principal is None:
        return None
    groups = ",".join(sorted(principal.groups))
    return f"{principal.role}|{principal.clearance}|{groups}"


def principal_json(principal: PrincipalLike | None) -> dict[str, Any] | None:
    """A principal as the wire sends it (the HTTP and ``--python`` adapters): ``{"role": str,
    "groups": [str, ...] (sorted), "clearance": tier}``; None for none (the public)."""
    if principal is None:
        return None
    return {
        "role": principal.role,
        "groups": sorted(principal.groups),
        "clearance": principal.clearance,
    }
