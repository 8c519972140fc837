"""assay.dataset: golden datasets, what every evaluation reads.

A dataset is a versioned JSONL of `Entry` (one expert-verified question: query, category,
answerability and `ExpectedBehavior`, ``as_of``, evidence paths of `Anchor` pieces, reference
answer, `KeyFact`, `Source` provenance, optionally a `Principal`, SQL or tool-call gold) plus a
manifest beside it (version, index binding, changelog, splits).

Main entry points:

- `load_dataset(path)` -> `Dataset` (entries, their lines, the manifest); `write_dataset`,
  `parse_entries`, `load_manifest` / `save_manifest`; a line with ``turns`` is a conversation,
  one entry per turn (`ConversationRef`, `by_conversation`, `history_of`);
- `split_entries` / `split_dataset`: stratified splits; `groups(entries, by)`: the rows of
  ``--by`` (any field of an entry); `select_tiers` / `open_dataset`: label tiers;
- `diff_datasets(old, new)` -> `DatasetDiff` (``assay diff``);
  `content_changed_since_version` -> `VersionCheck` and `bump_version` (``assay validate``);
- ``fresh``: the sealed fresh-sample guard, a namespace of verbs (``fresh.seal``,
  ``fresh.using``, ``fresh.retire``); its types (`FreshSession`, `FreshUse`, `SealedSample`,
  `FreshReuseError`) are here too.

Everything is imported lazily, on first use (``import assay.dataset`` imports no module of it,
and the command line starts without pydantic). Import from here, not from the modules: which
module holds a name may change; other packages of assay do (tests/test_package_faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._faces import lazy_face

if TYPE_CHECKING:
    from assay._text import normalise_query
    from assay.dataset import fresh
    from assay.dataset.categories import CATEGORY_KEYS, RISKS, category_risks, high_risk_categories
    from assay.dataset.clustering import (
        AUTO,
        NO_CLUSTER,
        cluster_labels,
        clustering_for,
        evidence_doc,
    )
    from assay.dataset.conversations import (
        HISTORY_MODES,
        TURN_FIELDS,
        ConversationRollup,
        by_conversation,
        conversation_lines,
        expand_conversation,
        has_conversations,
        history_of,
        is_conversation,
        rollup,
    )
    from assay.dataset.diff import DatasetDiff, EntryChange, FieldChange, GoldMove, diff_datasets
    from assay.dataset.fingerprint import entry_fingerprint, legacy_entry_fingerprint
    from assay.dataset.fresh import FreshReuseError, FreshSession, FreshUse, SealedSample
    from assay.dataset.grouping import NONE, PRINCIPAL_FIELDS, SCALAR_FIELDS, group_of, groups
    from assay.dataset.io import (
        VERSION_RECORD,
        Dataset,
        entries_hash,
        load_dataset,
        load_manifest,
        manifest_path,
        parse_entries,
        save_manifest,
        write_dataset,
    )
    from assay.dataset.labelgold import LabelGold, predicted, scores_of
    from assay.dataset.schema import (
        Alternative,
        Anchor,
        ConversationRef,
        Entry,
        EvidencePath,
        ExpectedBehavior,
        KeyFact,
        Piece,
        Principal,
        Source,
        StructuredLookup,
        grade,
        require_graded,
    )
    from assay.dataset.split import (
        SplitResult,
        StratumReport,
        field_value,
        split_dataset,
        split_entries,
    )
    from assay.dataset.sqlgold import MatchRule, SqlGold, SqlResult, SqlSemantics
    from assay.dataset.tierreport import TIERS, Tier, TierReport
    from assay.dataset.tiers import (
        DEFAULT_TIERS,
        not_disclosed_shortfall,
        open_dataset,
        parse_tiers,
        select_tiers,
        tier_contradiction,
        tier_of,
    )
    from assay.dataset.toolgold import (
        ExpectedToolCall,
        ToolCall,
        ToolCallGold,
        argument_matches,
        call_matches,
        longest_common,
        matching,
        max_matching,
        parse_calls,
    )
    from assay.dataset.versions import (
        VersionCheck,
        bump_version,
        content_changed_since_version,
        version_record,
    )

__all__ = [
    "AUTO",
    "CATEGORY_KEYS",
    "DEFAULT_TIERS",
    "HISTORY_MODES",
    "NONE",
    "NO_CLUSTER",
    "PRINCIPAL_FIELDS",
    "RISKS",
    "SCALAR_FIELDS",
    "TIERS",
    "TURN_FIELDS",
    "VERSION_RECORD",
    "Alternative",
    "Anchor",
    "ConversationRef",
    "ConversationRollup",
    "Dataset",
    "DatasetDiff",
    "Entry",
    "EntryChange",
    "EvidencePath",
    "ExpectedBehavior",
    "ExpectedToolCall",
    "FieldChange",
    "FreshReuseError",
    "FreshSession",
    "FreshUse",
    "GoldMove",
    "KeyFact",
    "LabelGold",
    "MatchRule",
    "Piece",
    "Principal",
    "SealedSample",
    "Source",
    "SplitResult",
    "SqlGold",
    "SqlResult",
    "SqlSemantics",
    "StratumReport",
    "StructuredLookup",
    "Tier",
    "TierReport",
    "ToolCall",
    "ToolCallGold",
    "VersionCheck",
    "argument_matches",
    "bump_version",
    "by_conversation",
    "call_matches",
    "category_risks",
    "cluster_labels",
    "clustering_for",
    "content_changed_since_version",
    "conversation_lines",
    "diff_datasets",
    "entries_hash",
    "entry_fingerprint",
    "evidence_doc",
    "expand_conversation",
    "field_value",
    "fresh",
    "grade",
    "group_of",
    "groups",
    "has_conversations",
    "high_risk_categories",
    "history_of",
    "is_conversation",
    "legacy_entry_fingerprint",
    "load_dataset",
    "load_manifest",
    "longest_common",
    "manifest_path",
    "matching",
    "max_matching",
    "normalise_query",
    "not_disclosed_shortfall",
    "open_dataset",
    "parse_calls",
    "parse_entries",
    "parse_tiers",
    "predicted",
    "require_graded",
    "rollup",
    "save_manifest",
    "scores_of",
    "select_tiers",
    "split_dataset",
    "split_entries",
    "tier_contradiction",
    "tier_of",
    "version_record",
    "write_dataset",
]

#: name -> the module that defines it (read on first access: nothing is imported up front)
_LAZY: dict[str, str] = {
    "normalise_query": "assay._text",
    "CATEGORY_KEYS": "assay.dataset.categories",
    "RISKS": "assay.dataset.categories",
    "category_risks": "assay.dataset.categories",
    "high_risk_categories": "assay.dataset.categories",
    "AUTO": "assay.dataset.clustering",
    "NO_CLUSTER": "assay.dataset.clustering",
    "cluster_labels": "assay.dataset.clustering",
    "clustering_for": "assay.dataset.clustering",
    "evidence_doc": "assay.dataset.clustering",
    "HISTORY_MODES": "assay.dataset.conversations",
    "TURN_FIELDS": "assay.dataset.conversations",
    "by_conversation": "assay.dataset.conversations",
    "conversation_lines": "assay.dataset.conversations",
    "expand_conversation": "assay.dataset.conversations",
    "has_conversations": "assay.dataset.conversations",
    "history_of": "assay.dataset.conversations",
    "is_conversation": "assay.dataset.conversations",
    "ConversationRollup": "assay.dataset.conversations",
    "rollup": "assay.dataset.conversations",
    "ConversationRef": "assay.dataset.schema",
    "DatasetDiff": "assay.dataset.diff",
    "EntryChange": "assay.dataset.diff",
    "FieldChange": "assay.dataset.diff",
    "GoldMove": "assay.dataset.diff",
    "diff_datasets": "assay.dataset.diff",
    "entry_fingerprint": "assay.dataset.fingerprint",
    "legacy_entry_fingerprint": "assay.dataset.fingerprint",
    "FreshReuseError": "assay.dataset.fresh",
    "FreshSession": "assay.dataset.fresh",
    "FreshUse": "assay.dataset.fresh",
    "SealedSample": "assay.dataset.fresh",
    "NONE": "assay.dataset.grouping",
    "PRINCIPAL_FIELDS": "assay.dataset.grouping",
    "SCALAR_FIELDS": "assay.dataset.grouping",
    "group_of": "assay.dataset.grouping",
    "groups": "assay.dataset.grouping",
    "Dataset": "assay.dataset.io",
    "VERSION_RECORD": "assay.dataset.io",
    "entries_hash": "assay.dataset.io",
    "load_dataset": "assay.dataset.io",
    "load_manifest": "assay.dataset.io",
    "manifest_path": "assay.dataset.io",
    "parse_entries": "assay.dataset.io",
    "save_manifest": "assay.dataset.io",
    "write_dataset": "assay.dataset.io",
    "LabelGold": "assay.dataset.labelgold",
    "predicted": "assay.dataset.labelgold",
    "scores_of": "assay.dataset.labelgold",
    "Alternative": "assay.dataset.schema",
    "Anchor": "assay.dataset.schema",
    "Entry": "assay.dataset.schema",
    "EvidencePath": "assay.dataset.schema",
    "ExpectedBehavior": "assay.dataset.schema",
    "KeyFact": "assay.dataset.schema",
    "Piece": "assay.dataset.schema",
    "Principal": "assay.dataset.schema",
    "Source": "assay.dataset.schema",
    "StructuredLookup": "assay.dataset.schema",
    "grade": "assay.dataset.schema",
    "require_graded": "assay.dataset.schema",
    "SplitResult": "assay.dataset.split",
    "StratumReport": "assay.dataset.split",
    "field_value": "assay.dataset.split",
    "split_dataset": "assay.dataset.split",
    "split_entries": "assay.dataset.split",
    "MatchRule": "assay.dataset.sqlgold",
    "SqlGold": "assay.dataset.sqlgold",
    "SqlResult": "assay.dataset.sqlgold",
    "SqlSemantics": "assay.dataset.sqlgold",
    "TIERS": "assay.dataset.tierreport",
    "Tier": "assay.dataset.tierreport",
    "TierReport": "assay.dataset.tierreport",
    "DEFAULT_TIERS": "assay.dataset.tiers",
    "not_disclosed_shortfall": "assay.dataset.tiers",
    "open_dataset": "assay.dataset.tiers",
    "parse_tiers": "assay.dataset.tiers",
    "select_tiers": "assay.dataset.tiers",
    "tier_contradiction": "assay.dataset.tiers",
    "tier_of": "assay.dataset.tiers",
    "ExpectedToolCall": "assay.dataset.toolgold",
    "ToolCall": "assay.dataset.toolgold",
    "ToolCallGold": "assay.dataset.toolgold",
    "argument_matches": "assay.dataset.toolgold",
    "call_matches": "assay.dataset.toolgold",
    "longest_common": "assay.dataset.toolgold",
    "matching": "assay.dataset.toolgold",
    "max_matching": "assay.dataset.toolgold",
    "parse_calls": "assay.dataset.toolgold",
    "VersionCheck": "assay.dataset.versions",
    "bump_version": "assay.dataset.versions",
    "content_changed_since_version": "assay.dataset.versions",
    "version_record": "assay.dataset.versions",
}
#: namespaces of verbs: the submodule itself
_NAMESPACES: dict[str, str] = {"fresh": "assay.dataset.fresh"}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(__name__, _LAZY, _NAMESPACES)
