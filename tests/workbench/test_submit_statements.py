"""PostgreSQL: a new label after its claim is one statement that checks and writes together (the
task's kind remembered from the claim), and whatever that statement cannot vouch for goes the
careful way with the same answers: a kind not remembered (another server process), a kind
remembered wrongly, a task made calibration or hidden since the claim, a chunk not in the
corpus or hidden, a task not claimed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import select, text

from assay.errors import DataError
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import Task, User

from .conftest import PG_URL, judge_payload
from .test_claims import _statements

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL"),
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]


def _user(db: Database, name: str) -> User:
    with db.read() as s:
        u = s.scalar(select(User).where(User.username == name))
        assert u is not None
        return u


def _submit(
    db: Database, user: User, task_id: int, payload: Any, cid: str
) -> tuple[Any, list[str]]:
    """The submission's answer (or the exception it raised) and the statements it ran."""
    seen, stop = _statements(db)
    try:
        got: Any = svc.submit_label(db, user, task_id, payload, client_id=cid)
    except (svc.NotFound, svc.Conflict, ValidationError, DataError) as exc:
        got = exc
    finally:
        stop()
    return got, seen


def _stored(db: Database, cid: str) -> list[tuple[Any, ...]]:
    """(task, user, revisions, assignment submitted) of each label with this client id."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT l.task_id, l.user_id, (SELECT count(*) FROM label_revisions r "
                "WHERE r.label_id = l.id), a.submitted_at IS NOT NULL FROM labels l "
                "JOIN assignments a ON a.task_id = l.task_id AND a.user_id = l.user_id "
                "WHERE l.client_id = :c"
            ),
            {"c": cid},
        )
        return [tuple(r) for r in rows]


def test_one_statement_after_the_claim_two_in_a_process_that_did_not_claim(db: Database) -> None:
    ana, ben = _user(db, "ana"), _user(db, "ben")
    first = svc.claim_next(db, ana, "judge")
    assert first is not None
    one, seen = _submit(db, ana, first, judge_payload(), "one-1")
    assert seen == ["WITH mark AS"] and one.created and one.feedback is None
    assert _stored(db, "one-1") == [(first, ana.id, 1, True)]

    # another server process (nothing remembered): the checks, then the same write
    other = Database(db.url)
    try:
        task = svc.claim_next(db, ben, "judge")
        assert task is not None
        sub, seen = _submit(other, ben, task, judge_payload(), "two-1")
        assert seen == ["SELECT tasks.kind, tasks.calibration,", "WITH mark AS"] and sub.created
        assert _stored(db, "two-1") == [(task, ben.id, 1, True)]
        # and it remembers: its next claim's label is one statement again
        task = svc.claim_next(other, ben, "judge")
        assert task is not None
        sub, seen = _submit(other, ben, task, judge_payload(), "two-2")
        assert seen == ["WITH mark AS"] and sub.created
    finally:
        other.dispose()

    # a retry answers the first label; a reused client id on another task is refused
    again, _ = _submit(db, ana, first, judge_payload(), "one-1")
    assert again.label_id == one.label_id and not again.created
    nxt = svc.claim_next(db, ana, "judge")
    assert nxt is not None
    refused, _ = _submit(db, ana, nxt, judge_payload(), "one-1")
    assert isinstance(refused, svc.Conflict) and "another task" in str(refused)
    assert _stored(db, "one-1") == [(first, ana.id, 1, True)]


def test_a_kind_remembered_wrongly_or_gone_stale_is_checked_not_trusted(db: Database) -> None:
    ana = _user(db, "ana")
    task = svc.claim_next(db, ana, "judge")
    assert task is not None
    db.task_kinds[task] = "policy"  # a judging label is no policy label: read, then written
    sub, seen = _submit(db, ana, task, judge_payload(), "wrong-1")
    assert sub.created and seen == ["SELECT tasks.kind, tasks.calibration,", "WITH mark AS"]
    assert db.task_kinds[task] == "judge" and _stored(db, "wrong-1") == [(task, ana.id, 1, True)]

    # a payload valid for the remembered kind but not the task's: the statement refuses the
    # kind, and the careful path validates it against the task's own
    task = svc.claim_next(db, ana, "judge")
    assert task is not None
    db.task_kinds[task] = "evidence"
    bad, _ = _submit(db, ana, task, {"paths": []}, "wrong-2")
    assert isinstance(bad, ValidationError) and _stored(db, "wrong-2") == []

    # a task made a calibration task since its claim (a new import): feedback against its gold
    gold = judge_payload(correct="wrong figure")
    with db.engine.begin() as conn:
        conn.execute(
            text("UPDATE tasks SET calibration = true, gold = CAST(:g AS json) WHERE id = :t"),
            {"g": json.dumps(gold), "t": task},
        )
    sub, _ = _submit(db, ana, task, judge_payload(), "cal-1")
    assert sub.created and sub.feedback is not None
    assert sub.feedback.matches == {c: c != "correct" for c in gold["verdicts"]}
    assert _stored(db, "cal-1") == [(task, ana.id, 1, True)]


def test_a_task_hidden_or_not_claimed_takes_no_label(db: Database) -> None:
    ana, ben = _user(db, "ana"), _user(db, "ben")
    task = svc.claim_next(db, ana, "judge")
    assert task is not None
    # ben never claimed it (the kind is remembered all the same)
    got, _ = _submit(db, ben, task, judge_payload(), "ben-1")
    assert isinstance(got, svc.NotFound) and _stored(db, "ben-1") == []
    # ana's access narrowed since her claim: the task's material now needs a key she lacks
    with db.engine.begin() as conn:
        conn.execute(text("INSERT INTO access_keys (key, labels) VALUES ('k-new', '[\"x\"]')"))
        conn.execute(text("UPDATE tasks SET access_key = 'k-new' WHERE id = :t"), {"t": task})
    got, _ = _submit(db, ana, task, judge_payload(), "ana-1")
    assert isinstance(got, svc.NotFound) and _stored(db, "ana-1") == []
    with db.engine.connect() as conn:
        open_ = conn.execute(
            text("SELECT submitted_at FROM assignments WHERE task_id = :t AND user_id = :u"),
            {"t": task, "u": ana.id},
        ).scalar_one()
    assert open_ is None  # nothing written, the claim not marked either


def test_an_evidence_label_checks_its_chunks_in_the_same_statement(db: Database) -> None:
    ana = _user(db, "ana")
    with db.engine.connect() as conn:
        known = conn.execute(text("SELECT chunk_id FROM chunks ORDER BY chunk_id")).scalars()
        public, hidden = next(iter(known)), "restricted-chunk#1"
        conn.execute(text("INSERT INTO access_keys (key, labels) VALUES ('k-chunk', '[\"x\"]')"))
        conn.execute(
            text(
                "INSERT INTO chunks (chunk_id, doc_id, seq, text, pages, extra, access_key) "
                "SELECT :h, doc_id, 99, 'secret', '[]', '{}', 'k-chunk' FROM chunks "
                "WHERE chunk_id = :p"
            ),
            {"h": hidden, "p": public},
        )
        conn.commit()
    task = svc.claim_next(db, ana, "evidence")
    assert task is not None and db.task_kinds[task] == "evidence"
    for cid, chunk in (("ev-1", "no-such-chunk#1"), ("ev-2", hidden)):
        got, _ = _submit(db, ana, task, {"paths": [[[chunk]]]}, cid)
        assert isinstance(got, DataError) and f"not in the corpus: {chunk}" in str(got)
        assert _stored(db, cid) == []
    sub, seen = _submit(db, ana, task, {"paths": [[[public]]]}, "ev-3")
    assert sub.created and seen == ["WITH mark AS"]
    assert _stored(db, "ev-3") == [(task, ana.id, 1, True)]
    with db.read() as s:
        assert s.get(Task, task).kind == "evidence"  # type: ignore[union-attr]


def _plans(db: Database) -> dict[str, tuple[int, int]]:
    """(generic, custom) plans of each prepared statement on every pooled connection of the
    store, by its first words, summed over connections."""
    found: dict[str, tuple[int, int]] = {}
    for engine in (db.engine, db._auto):
        assert engine is not None
        held = [engine.raw_connection() for _ in range(engine.pool.checkedin())]
        try:
            for raw in held:
                cur = raw.driver_connection.cursor()  # type: ignore[union-attr]
                cur.execute(
                    "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
                )
                for sql, generic, custom in cur.fetchall():
                    key = " ".join(str(sql).split()[:3])
                    g, c = found.get(key, (0, 0))
                    found[key] = (g + int(generic), c + int(custom))
                cur.close()
        finally:
            for raw in held:
                raw.close()
    return found


def test_the_claim_and_the_label_are_planned_once_per_connection(
    db: Database, tmp_path: Path
) -> None:
    """Each is one statement text whatever its values, prepared by psycopg after a few runs on a
    connection, and PostgreSQL keeps its generic plan: no plan per execution (a list parameter,
    a changing literal or a custom plan preferred would each bring that back)."""
    n = 12
    (tmp_path / "e.jsonl").write_text(
        "".join(
            json.dumps({"id": f"p-{i}", "query": f"question {i}", "category": "metric"}) + "\n"
            for i in range(n)
        )
    )
    (tmp_path / "r.jsonl").write_text(
        "".join(json.dumps({"id": f"p-{i}", "answer": f"a{i}"}) + "\n" for i in range(n))
    )
    svc.import_entries(db, tmp_path / "e.jsonl", kinds=())
    svc.import_run(db, tmp_path / "r.jsonl", run_name="plans")
    fresh = Database(db.url)  # its pools start empty: one connection each, run after run
    try:
        users = [_user(fresh, "ana"), _user(fresh, "ben")]
        for i in range(n):
            for u in users:
                task = svc.claim_next(fresh, u, "judge")
                assert task is not None
                sub = svc.submit_label(fresh, u, task, judge_payload(), client_id=f"p{i}")
                assert sub.created
        plans = _plans(fresh)
    finally:
        fresh.dispose()
    runs = len(users) * n
    for first in ("WITH state AS", "WITH mark AS"):
        generic, custom = plans.get(first, (0, 0))
        # psycopg prepares a statement on its 5th run; PostgreSQL plans its first 5 executions
        # for their values, then keeps the generic plan
        assert custom <= 5 and generic >= runs - 10, (first, plans)
