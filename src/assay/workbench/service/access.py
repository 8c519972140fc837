"""Annotators' own access: an expert never sees documents their groups and clearance do not open.

Documents and chunks carry access labels (`assay.corpus.access`: groups, clearance tier,
``public_from``); users carry groups and a clearance tier (`User.groups`, `User.clearance`), set by
an admin (`set_user_access`, the admin page, `assay workbench access`). The one rule is
`assay.corpus.access.allows`, applied with the user as the principal and no ``as_of``: an expert
works *now*, and a label restricts now (the module's conservative reading of a date-less
question). Letter case counts: a user in ``DEAL:ACME`` is not in ``deal:ACME``.

What the store keeps so that queues and search filter in SQL:

- every distinct set of labels is one `AccessKey` row (the SHA-256 of its canonical JSON);
- a restricted chunk's `access_key` holds its own label and its document's (both must allow);
  a document's `access_key` its own label;
- a task's `access_key` holds the labels of every chunk its material names: the entry's gold
  (evidence paths, key facts' support, anchors' documents) and the output's retrieved and cited
  chunks. An expert who may not see one of them is never served the task: they could neither
  judge it nor find its evidence, and its question may reveal the restricted matter;
- `AccessGrant` rows: the keys each user may see (every label of the key allows them). Derived
  data, rebuilt by the imports and whenever a user's access changes. A key without a grant is
  hidden, so a store that missed a rebuild hides too much, never too little.

A restricted thing the viewer may not see is answered exactly as a missing one (404, "not in
the corpus"): its existence is not revealed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, exists, insert, or_, select, update
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from assay.corpus import TIERS, AccessLabel, allows, parse_access
from assay.dataset import Principal
from assay.errors import UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    AccessGrant,
    AccessKey,
    Chunk,
    Document,
    Item,
    Output,
    Setting,
    Task,
    User,
    username_key,
)
from assay.workbench.service.quotes import bump_revision, quote_index, redact

__all__ = [
    "MAX_GROUPS",
    "UserAccess",
    "chunk_labels",
    "hidden_chunks",
    "item_hidden",
    "labels_key",
    "material_hidden",
    "material_ids",
    "principal_of",
    "quoted_chunks",
    "redact_hidden",
    "redacting",
    "refresh_access",
    "refresh_grants",
    "set_redacting",
    "set_user_access",
    "strings",
    "task_hidden",
    "text_hidden",
    "visible_to",
]

MAX_GROUPS = 200  # groups one user may hold (a list read by a person, not a dump)


@dataclass(frozen=True)
class UserAccess:
    """A user's access after a change, and groups that match no label exactly (a likely typo:
    a group differing only by letter case from a label's opens nothing)."""

    username: str
    groups: list[str]
    clearance: str
    unmatched: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "username": self.username,
            "groups": self.groups,
            "clearance": self.clearance,
            "unmatched_groups": self.unmatched,
        }


def principal_of(groups: Iterable[str], clearance: str | None) -> Principal:
    """A user's access as the principal `assay.corpus.access.allows` checks."""
    return Principal.model_validate(
        {"role": "expert", "groups": tuple(groups), "clearance": clearance or "public"}
    )


def check_access_input(groups: Iterable[str], clearance: str) -> list[str]:
    """Clean groups (stripped, unique, sorted; case kept) or a `UsageError`."""
    if clearance not in TIERS:
        raise UsageError(f"clearance must be one of {', '.join(TIERS)}, not {clearance!r}")
    out: set[str] = set()
    for g in groups:
        if not isinstance(g, str):
            raise UsageError("a group is a name")
        name = g.strip()
        if not name:
            continue
        if len(name) > 100 or "\x00" in name:
            raise UsageError(f"group {name[:40]!r}: 1 to 100 characters, no NUL")
        out.add(name)
    if len(out) > MAX_GROUPS:
        raise UsageError(f"at most {MAX_GROUPS} groups per user")
    return sorted(out)


def _restricting(labels: Iterable[AccessLabel | None]) -> list[AccessLabel]:
    out: list[AccessLabel] = []
    for a in labels:
        if a is not None and a.restricts and a not in out:
            out.append(a)
    return out


def chunk_labels(
    extra: dict[str, Any] | None, doc_meta: dict[str, Any] | None, *, where: str = "<chunk>"
) -> list[AccessLabel]:
    """The labels that restrict a chunk: its own (`extra["access"]`, as the chunk table holds
    it) and its document's (`meta["access"]`, from documents.jsonl); both must allow."""
    return _restricting(
        [
            parse_access((extra or {}).get("access"), file=where),
            parse_access((doc_meta or {}).get("access"), file=where),
        ]
    )


def _canonical(labels: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    texts = sorted({json.dumps(d, sort_keys=True, separators=(",", ":")) for d in labels})
    return [json.loads(t) for t in texts]


def labels_key(labels: Iterable[AccessLabel | dict[str, Any]]) -> tuple[str, list[Any]] | None:
    """(key, canonical labels JSON) of a set of restricting labels; None when there are none."""
    dicts = [a.to_json_dict() if isinstance(a, AccessLabel) else a for a in labels]
    canon = _canonical(dicts)
    if not canon:
        return None
    text = json.dumps(canon, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest(), canon


class _Keys:
    """The store's access keys, loaded once per refresh; new ones are inserted on first use."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.labels: dict[str, list[Any]] = {
            k: list(v) for k, v in conn.execute(select(AccessKey.key, AccessKey.labels))
        }

    def put(self, labels: Iterable[AccessLabel | dict[str, Any]]) -> str | None:
        got = labels_key(labels)
        if got is None:
            return None
        key, canon = got
        if key not in self.labels:
            self.conn.execute(insert(_T_KEYS), [{"key": key, "labels": canon}])
            self.labels[key] = canon
        return key


def _table(model: Any) -> Table:
    return cast(Table, model.__table__)


_T_CHUNK = _table(Chunk)
_T_DOC = _table(Document)
_T_TASK = _table(Task)
_T_KEYS = _table(AccessKey)
_T_GRANTS = _table(AccessGrant)
_SET_CHUNK = (
    update(_T_CHUNK)
    .where(_T_CHUNK.c.chunk_id == bindparam("b_id"))
    .values(access_key=bindparam("b_key"))
)
_SET_DOC = (
    update(_T_DOC).where(_T_DOC.c.doc_id == bindparam("b_id")).values(access_key=bindparam("b_key"))
)
_SET_TASK = (
    update(_T_TASK).where(_T_TASK.c.id == bindparam("b_id")).values(access_key=bindparam("b_key"))
)


def _batches(ids: list[Any], n: int = 500) -> Iterable[list[Any]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


def refresh_chunk_access(conn: Any, doc_ids: Collection[str] | None = None) -> None:
    """Recompute the access keys of documents (all, or `doc_ids`) and of their chunks."""
    keys = _Keys(conn)
    if doc_ids is None:
        docs = list(conn.execute(select(Document.doc_id, Document.meta, Document.access_key)))
        wanted: list[str] | None = None
    else:
        wanted = sorted(doc_ids)
        docs = [
            r
            for b in _batches(wanted)
            for r in conn.execute(
                select(Document.doc_id, Document.meta, Document.access_key).where(
                    Document.doc_id.in_(b)
                )
            )
        ]
    meta = {d: m or {} for d, m, _k in docs}
    doc_changes = []
    for doc_id, m, old in docs:
        new = keys.put(_restricting([parse_access((m or {}).get("access"), file=doc_id)]))
        if new != old:
            doc_changes.append({"b_id": doc_id, "b_key": new})
    if doc_changes:
        conn.execute(_SET_DOC, doc_changes)
    q = select(Chunk.chunk_id, Chunk.doc_id, Chunk.extra, Chunk.access_key)
    chunk_rows = (
        list(conn.execute(q))
        if wanted is None
        else [r for b in _batches(wanted) for r in conn.execute(q.where(Chunk.doc_id.in_(b)))]
    )
    changes = []
    for cid, doc_id, extra, old in chunk_rows:
        new = keys.put(chunk_labels(extra, meta.get(doc_id), where=cid))
        if new != old:
            changes.append({"b_id": cid, "b_key": new})
    if changes:
        conn.execute(_SET_CHUNK, changes)
    bump_revision(conn)  # chunks or their access changed: the quote index is rebuilt


def strings(*objs: Any) -> list[str]:
    """Every string in JSON-like values (a payload, a draft, a note): the free text in them."""
    out: list[str] = []
    stack = list(objs)
    while stack:
        o = stack.pop()
        if isinstance(o, str):
            out.append(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, list | tuple):
            stack.extend(o)
    return out


def quoted_chunks(conn: Any, *objs: Any) -> set[str]:
    """The restricted chunks whose words the free text in `objs` quotes, cited or not
    (`assay.workbench.service.quotes`)."""
    texts = strings(*objs)
    return quote_index(conn).quoted(*texts) if texts else set()


def text_hidden(conn: Any, user_id: int, *objs: Any) -> bool:
    """The free text in `objs` quotes a chunk the user may not see."""
    ids = quoted_chunks(conn, *objs)
    return bool(ids) and bool(hidden_chunks(conn, user_id, ids))


REDACT_SETTING = "redact_quoted"  # "1": quoted spans are redacted instead of the text hidden


def redacting(conn: Any) -> bool:
    """The store redacts what a text quotes from chunks a viewer may not see, instead of hiding
    the whole text (`set_redacting`, `assay workbench serve --redact`)."""
    got = conn.execute(select(Setting.value).where(Setting.key == REDACT_SETTING)).scalar()
    return bool(got == "1")


def set_redacting(db: Database, on: bool) -> None:
    """Turn redaction on (quoted restricted spans replaced by "[restricted]", the rest shown) or
    off (a text quoting what the viewer may not see is hidden whole)."""
    with db.write() as s:
        s.merge(Setting(key=REDACT_SETTING, value="1" if on else "0"))


def redact_hidden(conn: Any, user_id: int, obj: Any) -> Any:
    """`obj` (a string or JSON-like value) with every span that quotes a chunk hidden from the
    user replaced by `REDACTED` (`assay.workbench.service.quotes`)."""
    index = quote_index(conn)
    cache: dict[frozenset[str], set[str]] = {}

    def one(text: str) -> str:
        spans = index.find(text)
        if not spans:
            return text
        ids = frozenset(sp.chunk_id for sp in spans)
        if ids not in cache:
            cache[ids] = hidden_chunks(conn, user_id, ids)
        return redact(text, [sp for sp in spans if sp.chunk_id in cache[ids]])

    def walk(o: Any) -> Any:
        if isinstance(o, str):
            return one(o)
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [walk(v) for v in o]
        return o

    return walk(obj)


def material_ids(
    entry: dict[str, Any] | None, retrieved: Iterable[Any] = (), citations: Iterable[Any] = ()
) -> tuple[set[str], set[str]]:
    """(chunk ids, document ids) a task's material names: the entry's evidence paths and key
    facts' support (chunk ids; anchors name a document), the output's retrieved and cited
    chunks."""
    chunks: set[str] = set()
    docs: set[str] = set()

    def take(a: Any) -> None:
        if isinstance(a, str):
            chunks.add(a)
        elif isinstance(a, dict) and isinstance(a.get("doc"), str):
            docs.add(a["doc"])

    e = entry or {}
    for path in e.get("evidence_paths") or []:
        for piece in path if isinstance(path, list) else []:
            for a in piece if isinstance(piece, list) else []:
                take(a)
    for kf in e.get("key_facts") or []:
        for a in (kf.get("supporting") or []) if isinstance(kf, dict) else []:
            take(a)
    for r in [*retrieved, *citations]:
        if isinstance(r, str):
            chunks.add(r)
        elif isinstance(r, dict) and isinstance(r.get("chunk_id"), str):
            chunks.add(r["chunk_id"])
    return chunks, docs


def refresh_task_access(conn: Any, task_ids: Collection[int] | None = None) -> None:
    """Recompute the access keys of tasks (all, or `task_ids`) from their material."""
    keys = _Keys(conn)
    chunk_key: dict[str, str] = {
        c: k
        for c, k in conn.execute(
            select(Chunk.chunk_id, Chunk.access_key).where(Chunk.access_key.is_not(None))
        )
    }
    doc_key: dict[str, str] = {
        d: k
        for d, k in conn.execute(
            select(Document.doc_id, Document.access_key).where(Document.access_key.is_not(None))
        )
    }
    q = (
        select(
            Task.id,
            Task.access_key,
            Item.entry,
            Output.retrieved,
            Output.citations,
            Output.tool_calls,
            Output.answer,
            Output.draft,
            Output.reference_draft,
        )
        .join(Item, Item.id == Task.item_id)
        .outerjoin(Output, Output.id == Task.output_id)
    )
    rows = (
        list(conn.execute(q))
        if task_ids is None
        else [r for b in _batches(sorted(task_ids)) for r in conn.execute(q.where(Task.id.in_(b)))]
    )
    changes = []
    for tid, old, entry, retrieved, citations, calls, *texts in rows:
        # a tool call's arguments and result are what the system was given: a chunk id in
        # them names that chunk, a quote in them quotes it
        named = [*(citations or ()), *strings(calls)]
        chunks, docs = material_ids(entry, retrieved or (), named)
        chunks |= quoted_chunks(conn, *texts, calls)  # what the answer quotes, cited or not
        found = {chunk_key[c] for c in chunks if c in chunk_key}
        found |= {doc_key[d] for d in docs if d in doc_key}
        labels = [lab for k in sorted(found) for lab in keys.labels[k]]
        new = keys.put(labels)
        if new != old:
            changes.append({"b_id": tid, "b_key": new})
    if changes:
        conn.execute(_SET_TASK, changes)


def refresh_grants(conn: Any, user_ids: Collection[int] | None = None) -> None:
    """Rebuild the grants of users (all, or `user_ids`) from their access and every key."""
    uq = select(User.id, User.groups, User.clearance)
    if user_ids is not None:
        uq = uq.where(User.id.in_(sorted(user_ids)))
    users = list(conn.execute(uq))
    if not users:
        return
    ids = [u[0] for u in users]
    for b in _batches(ids):
        conn.execute(delete(_T_GRANTS).where(_T_GRANTS.c.user_id.in_(b)))
    keys = [
        (k, [parse_access(d, file=f"access key {k[:12]}") for d in labels])
        for k, labels in conn.execute(select(AccessKey.key, AccessKey.labels))
    ]
    rows: list[dict[str, Any]] = []
    for uid, groups, clearance in users:
        who = principal_of(groups or [], clearance)
        rows.extend(
            {"user_id": uid, "key": k} for k, labs in keys if all(allows(a, who) for a in labs)
        )
    if rows:
        conn.execute(insert(_T_GRANTS), rows)


def refresh_access(
    conn: Any, *, doc_ids: Collection[str] | None = (), task_ids: Collection[int] | None = None
) -> None:
    """Bring every derived access row in step after an import: the chunks of `doc_ids` (None:
    all; empty: none), then tasks (`task_ids`; None: all), then every user's grants."""
    if doc_ids is None or doc_ids:
        refresh_chunk_access(conn, doc_ids)
    refresh_task_access(conn, task_ids)
    refresh_grants(conn)


def visible_to(key_col: Any, uid: int | BindParameter[int]) -> ColumnElement[bool]:
    """SQL: a row whose access key is `key_col` is visible to user `uid` (public, or granted)."""
    return or_(
        key_col.is_(None),
        exists().where(AccessGrant.user_id == uid, AccessGrant.key == key_col),
    )


def hidden_chunks(conn: Any, user_id: int, ids: Iterable[str]) -> set[str]:
    """Of `ids`, the chunks that exist and that the user may not see."""
    wanted = sorted(set(ids))
    out: set[str] = set()
    for b in _batches(wanted):
        out.update(
            conn.execute(
                select(Chunk.chunk_id).where(
                    Chunk.chunk_id.in_(b), ~visible_to(Chunk.access_key, user_id)
                )
            ).scalars()
        )
    return out


def material_hidden(
    conn: Any,
    user_id: int,
    entry: dict[str, Any] | None,
    retrieved: Iterable[Any] = (),
    citations: Iterable[Any] = (),
    texts: Iterable[Any] = (),
) -> bool:
    """Some chunk or document that `material_ids` finds in this material, or that its free
    `texts` quote (`quoted_chunks`), is hidden from the user: a text built from it (a run's
    answer, a draft) quotes what they may not see."""
    chunks, docs = material_ids(entry, retrieved, citations)
    chunks |= quoted_chunks(conn, *texts)
    if chunks and hidden_chunks(conn, user_id, chunks):
        return True
    for b in _batches(sorted(docs)):
        q = select(Document.doc_id).where(
            Document.doc_id.in_(b), ~visible_to(Document.access_key, user_id)
        )
        if conn.execute(q.limit(1)).first() is not None:
            return True
    return False


def item_hidden(conn: Any, user_id: int, item_id: str) -> bool:
    """Something the item's material names is hidden from the user: its entry's gold, or what
    any run's answer on it retrieved, cited or quotes, or what its tool calls name or quote. Free text written on such an item by someone
    who may see it (critiques, notes, reference answers, flags) may quote that material, so
    it is shown only to viewers for whom this is False (and to its author)."""
    entry = conn.execute(select(Item.entry).where(Item.id == item_id)).scalar()
    retrieved: list[Any] = []
    citations: list[Any] = []
    texts: list[Any] = []
    for r, c, calls, *t in conn.execute(
        select(
            Output.retrieved,
            Output.citations,
            Output.tool_calls,
            Output.answer,
            Output.draft,
            Output.reference_draft,
        ).where(Output.item_id == item_id)
    ):
        retrieved.extend(r or ())
        citations.extend(c or ())
        citations.extend(strings(calls))  # a tool call's arguments and result name chunks too
        texts.extend([*t, calls])
    return material_hidden(conn, user_id, entry, retrieved, citations, texts)


def task_hidden(conn: Any, user_id: int, task: Task) -> bool:
    """The task's material names something the user may not see."""
    if task.access_key is None:
        return False
    granted = conn.execute(
        select(AccessGrant.key).where(
            AccessGrant.user_id == user_id, AccessGrant.key == task.access_key
        )
    ).first()
    return granted is None


def set_user_access(
    db: Database, username: str, *, groups: Iterable[str], clearance: str
) -> UserAccess:
    """Set a user's groups and clearance (replacing the old ones) and rebuild their grants."""
    clean = check_access_input(groups, clearance)
    with db.write() as s:
        user = s.scalar(select(User).where(User.username_key == username_key(username)))
        if user is None:
            raise UsageError(f"no user {username!r}")
        user.groups, user.clearance = clean, clearance
        s.flush()
        refresh_grants(s, [user.id])
        known = {
            g
            for labels in s.scalars(select(AccessKey.labels))
            for d in labels
            for g in d.get("groups", [])
        }
        name = user.username
    return UserAccess(
        username=name,
        groups=clean,
        clearance=clearance,
        unmatched=[g for g in clean if g not in known],
    )
