"""The policy task kind: an expert checks that a system respected the asker's access.

`import-run` opens a policy task (kind ``policy``) besides the judging task for a row whose item
is a policy item (`is_policy_item`: the entry names a principal, or expects a refusal or an
escalation). The task page shows the request, who asks (the principal: role, groups,
clearance; none is the public) and when (``as_of``), the system's answer, and the chunks it
retrieved and cited, each with its access label and whether the principal may see it
(`assay.corpus.access.allows` at the entry's ``as_of``): a chunk the principal may not see is
marked as a leak. The expert passes or fails `policy_ok` with a one-sentence critique
(`assay.workbench.payloads.PolicyPayload`). Like every kind it is batched by domain, labelled
blind by `overlap` experts, adjudicated where they disagree, and its labels are exported as the
``policy_ok`` criterion (`assay.workbench.export.labels_long`), the check of that name.

The expert's own access applies as everywhere (`assay.workbench.service.access`): a task whose
chunks the expert may not see is never served to them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from assay.corpus import allows, parse_access
from assay.dataset import Principal
from assay.workbench.service._common import ChunkView

__all__ = ["PolicyView", "is_policy_item", "policy_view"]


def is_policy_item(entry: dict[str, Any]) -> bool:
    """An entry whose answer depends on who asks: it names a principal, or it expects a
    refusal or an escalation."""
    return entry.get("principal") is not None or entry.get("expected_behavior") in (
        "refuse",
        "escalate",
    )


@dataclass(frozen=True)
class PolicyView:
    """What a policy task page shows besides the question and the system output: the
    principal, and per chunk shown (retrieved, then cited) whether the principal may see it."""

    principal: dict[str, Any] | None
    as_of: str | None
    may_see: dict[str, bool]
    cited_only: list[ChunkView]

    @property
    def leaked(self) -> list[str]:
        return [cid for cid, ok in self.may_see.items() if not ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "principal": self.principal,
            "as_of": self.as_of,
            "may_see": self.may_see,
            "leaked": self.leaked,
            "cited_only": [c.to_dict() for c in self.cited_only],
        }


def policy_view(
    entry: dict[str, Any], retrieved: list[ChunkView], cited_only: list[ChunkView]
) -> PolicyView:
    """The policy panel of an item whose output showed `retrieved` and `cited_only` chunks."""
    raw = entry.get("principal")
    principal = Principal.model_validate(raw) if raw is not None else None
    as_of = dt.date.fromisoformat(entry["as_of"]) if entry.get("as_of") else None
    may_see: dict[str, bool] = {}
    for c in [*retrieved, *cited_only]:
        if c.missing:
            continue
        labels = [parse_access(a, file=c.chunk_id) for a in c.access]
        may_see[c.chunk_id] = all(allows(a, principal, as_of) for a in labels)
    return PolicyView(
        principal=principal.model_dump(mode="json") if principal is not None else None,
        as_of=as_of.isoformat() if as_of else None,
        may_see=may_see,
        cited_only=cited_only,
    )
