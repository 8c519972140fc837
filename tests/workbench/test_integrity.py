"""Labels that cannot be lost or faked: the output guard of every workbench command that writes,
labellers never adjudicating, labels revised after seeing the others, revision history,
case-insensitive usernames (and the migration of stores that predate them), every
X-Forwarded-For line, NUL characters and oversized labels refused, import checks, passwords."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app as cli_app
from assay.errors import DataError, UsageError
from assay.workbench import service as svc
from assay.workbench.app import networks
from assay.workbench.auth import (
    AuthPolicy,
    LoginRateLimited,
    authenticate,
    check_password_policy,
    create_user,
)
from assay.workbench.db import Database, schema_version
from assay.workbench.demo_store import DEMO_DIR, DEMO_USERS
from assay.workbench.models import Label, LabelRevision, Task, User
from assay.workbench.routes._web import client_address

from .conftest import JUDGE_PASS, judge_payload

runner = CliRunner()
PW = "tulip-basin-4821"


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def cli(*args: str, input: str | None = None) -> tuple[int, str]:
    r = runner.invoke(cli_app, list(args), input=input)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


# ------------------------------------------------------------------------- the output guard


def _store_with_a_label(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "x.db"
    url = f"sqlite:///{path}"
    code, out = cli("workbench", "demo", "--db", url, "-f", "json")
    assert code == 0, out
    d = Database(url)
    u = users(d)
    t = svc.claim_next(d, u["ana"], "judge")
    assert t is not None
    svc.submit_label(d, u["ana"], t, JUDGE_PASS, client_id="keep-me")
    d.dispose()
    return path, url


def _labels_in(url: str) -> int:
    d = Database(url)
    with d.read() as s:
        n = int(s.scalar(select(func.count()).select_from(Label)) or 0)
    d.dispose()
    return n


@pytest.mark.parametrize("option", ["--out", "--fewshot", "--labels-long"])
@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_no_export_output_can_overwrite_the_store(tmp_path: Path, option: str, how: str) -> None:
    """Attack: `workbench export --out x.db --db sqlite:///x.db` replaced the store with JSONL
    (every label lost, exit 0), and so did --fewshot. Every output is refused, by any name."""
    store, url = _store_with_a_label(tmp_path)
    before = store.read_bytes()
    target = store
    if how == "symlink":
        target = tmp_path / "alias.jsonl"
        target.symlink_to(store)
    elif how == "hard link":
        target = tmp_path / "linked.jsonl"
        os.link(store, target)
    args = ["workbench", "export", "--db", url]
    if option == "--out":
        args += ["--out", str(target)]
    else:
        args += ["--out", str(tmp_path / "gold.jsonl"), option, str(target)]
    code, out = cli(*args)
    assert code == 2, out
    assert "this output is an input" in out and str(target) in out
    assert store.read_bytes() == before
    assert _labels_in(url) == 1
    assert not (tmp_path / "gold.jsonl").exists()  # nothing written


def test_release_stale_refuses_negative_hours(tmp_path: Path) -> None:
    """Attack: `release-stale --hours -1` released every claim, work in progress included."""
    _store, url = _store_with_a_label(tmp_path)
    d = Database(url)
    svc.claim_next(d, users(d)["ben"], "evidence")
    d.dispose()
    for hours in ("-1", "nan"):
        code, out = cli("workbench", "release-stale", "--hours", hours, "--db", url)
        assert code == 2 and "--hours" in out, out
    code, out = cli("workbench", "release-stale", "--hours", "0", "--db", url, "-f", "json")
    assert code == 0 and json.loads(out)["released"] == 1, out
    with pytest.raises(UsageError, match="--hours"):
        svc.release_stale_claims(Database(url), hours=-1)


# ----------------------------------------------------------------------- faked agreement


def _both_label_judge(db: Database, adj_payload: dict[str, Any]) -> int:
    u = users(db)
    t = svc.claim_next(db, u["adjudicator"], "judge")
    assert t is not None
    assert svc.claim_next(db, u["ana"], "judge") == t
    svc.submit_label(db, u["ana"], t, judge_payload(comprehensive="Misses 2022."), client_id="a1")
    svc.submit_label(db, u["adjudicator"], t, adj_payload, client_id="j1")
    return t


def test_whoever_labelled_a_task_never_adjudicates_it(db: Database) -> None:
    u = users(db)
    t = _both_label_judge(db, JUDGE_PASS)
    assert t not in {q.task_id for q in svc.adjudication_queue(db, u["adjudicator"])}
    with pytest.raises(svc.Conflict, match="you labelled this task"):
        svc.adjudication_view(db, u["adjudicator"], t)
    with pytest.raises(svc.Conflict, match="you labelled this task"):
        svc.adjudicate(db, u["adjudicator"], t, JUDGE_PASS, root_cause="annotator_error")
    # the admin did not label it: may settle it
    assert t in {q.task_id for q in svc.adjudication_queue(db, u["admin"])}
    svc.adjudicate(db, u["admin"], t, JUDGE_PASS, root_cause="annotator_error")


def test_a_label_revised_after_seeing_the_others_never_counts_as_agreement(
    db: Database, tmp_path: Path
) -> None:
    """Attack: once every label is in, an adjudicator who labelled the task reads the other
    label, copies it, and the task dropped out of the queue as agreed gold."""
    from assay.workbench.export import export_gold

    u = users(db)
    t = _both_label_judge(db, JUDGE_PASS)
    ana_label = next(lab for lab in svc.list_labels(db, u["adjudicator"], t) if lab.user == "ana")
    copied = ana_label.payload  # visible now: every label is in
    svc.submit_label(db, u["adjudicator"], t, copied, client_id="j2")
    with db.read() as s:
        labels = list(s.scalars(select(Label).where(Label.task_id == t).order_by(Label.id)))
        task = s.get(Task, t)
        assert task is not None
        revs = list(
            s.scalars(
                select(LabelRevision).where(LabelRevision.task_id == t).order_by(LabelRevision.id)
            )
        )
    mine = next(lab for lab in labels if lab.user_id == u["adjudicator"].id)
    assert mine.revised_after_seen and mine.payload == copied
    # the history: ana's label, the adjudicator's first answer, then the copy (flagged)
    assert [(r.user_id, r.after_seen) for r in revs] == [
        (u["ana"].id, False),
        (u["adjudicator"].id, False),
        (u["adjudicator"].id, True),
    ]
    assert revs[1].payload == JUDGE_PASS
    assert svc.gold_for_task(task, labels, None) is None  # not agreement
    assert t in {q.task_id for q in svc.adjudication_queue(db, u["admin"])}
    view = next(lab for lab in svc.list_labels(db, u["admin"], t) if lab.user == "adjudicator")
    assert view.revised_after_seen and view.revisions == 2
    res = export_gold(db, tmp_path / "g.jsonl")
    assert res["n_with_gold"] == 0
    # agreement is measured on the adjudicator's blind answer, not on the copy
    from assay.workbench.agreement import judge_label_records
    from assay.workbench.export import labels_long

    for rows in (judge_label_records(db), labels_long(db)):
        mine = {r["criterion"]: r["label"] for r in rows if r["rater"] == "adjudicator"}
        assert mine["comprehensive"] == "pass"  # ana failed it; the copy would say fail


def test_a_revision_before_seeing_anything_is_not_flagged(db: Database) -> None:
    u = users(db)
    t = svc.claim_next(db, u["ana"], "judge")
    assert t is not None
    svc.submit_label(db, u["ana"], t, JUDGE_PASS, client_id="x1")
    svc.submit_label(db, u["ana"], t, judge_payload(policy="Gives advice."), client_id="x2")
    with db.read() as s:
        lab = s.scalar(select(Label).where(Label.task_id == t))
        n = s.scalar(
            select(func.count()).select_from(LabelRevision).where(LabelRevision.task_id == t)
        )
    assert lab is not None and not lab.revised_after_seen and n == 2


# ------------------------------------------------------------------------------ usernames


def test_usernames_are_unique_regardless_of_case(db: Database) -> None:
    with pytest.raises(UsageError, match="exists already"):
        create_user(db, "ANA", PW, fast_hash=True)
    with pytest.raises(UsageError, match="exists already"):
        create_user(db, "Ana", PW, fast_hash=True)


def test_every_spelling_of_a_name_shares_one_login_counter(db: Database) -> None:
    """Attack: logins to `ANA` minted device cookies (and counters) that gave free guesses on
    `ana`. Now both spellings are one account and one counter."""
    policy = AuthPolicy(max_failures_per_user=3, max_failures_per_ip=100)
    for i, spelling in enumerate(("ANA", "ana", "Ana")):
        assert authenticate(db, spelling, "wrong-password", f"10.0.0.{i}", policy) is None
    with pytest.raises(LoginRateLimited):
        authenticate(db, "aNa", "ana-demo-pw", "10.0.0.9", policy)
    # the right password under another spelling logs into the one account
    fresh = AuthPolicy()
    user = authenticate(db, "ANA", "ana-demo-pw", "10.0.1.1", fresh)
    assert user is not None and user.username == "ana"


def _store_at_0002(path: Path, names: list[str]) -> str:
    from alembic import command
    from alembic.config import Config

    url = f"sqlite:///{path}"
    d = Database(url)
    cfg = Config()
    cfg.set_main_option(
        "script_location",
        str(Path(__file__).resolve().parents[2] / "src/assay/workbench/migrations"),
    )
    with d.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        for n in names:
            conn.exec_driver_sql(
                "INSERT INTO users (username, password_hash, role, domains, active, created_at) "
                "VALUES (?, 'x', 'annotator', '[]', 1, '2026-01-01 00:00:00')",
                (n,),
            )
        conn.commit()
    d.dispose()
    return url


def test_a_store_with_names_differing_by_case_refuses_to_upgrade(tmp_path: Path) -> None:
    url = _store_at_0002(tmp_path / "old.db", ["ana", "ANA", "ben", "Ben", "cleo"])
    d = Database(url)
    with pytest.raises(UsageError) as err:
        d.migrate()
    msg = str(err.value)
    assert "'ana' and 'ANA'" in msg and "'ben' and 'Ben'" in msg and "cleo" not in msg
    assert "never merged" in msg
    assert schema_version(d.engine) == "0002"  # nothing changed
    d.dispose()
    code, out = cli("workbench", "release-stale", "--db", url)  # any command says the same
    assert code == 2 and "'ana' and 'ANA'" in out


def test_a_store_without_collisions_upgrades_and_keeps_names(tmp_path: Path) -> None:
    url = _store_at_0002(tmp_path / "old.db", ["Ana", "ben"])
    d = Database(url)
    d.migrate()
    assert {u.username: u.username_key for u in users(d).values()} == {"Ana": "ana", "ben": "ben"}
    with pytest.raises(UsageError):
        create_user(d, "ANA", PW, fast_hash=True)
    d.dispose()


# ---------------------------------------------------------------------- forwarded headers


def test_every_forwarded_for_line_is_read() -> None:
    """Attack: with a trusted proxy, only the first X-Forwarded-For line was read, so a line the
    client sent itself beat the one the proxy appended."""
    proxies = networks(["127.0.0.1"])
    lines = ["6.6.6.6", "203.0.113.7"]  # the client's forged line, then the proxy's
    assert client_address("127.0.0.1", lines, proxies) == "203.0.113.7"
    assert client_address("127.0.0.1", ["6.6.6.6, 1.1.1.1", "127.0.0.1"], proxies) == "1.1.1.1"
    assert client_address("198.51.100.1", lines, proxies) == "198.51.100.1"  # not a proxy


def test_the_app_reads_every_forwarded_for_line(db: Database) -> None:
    from starlette.requests import Request

    from assay.workbench.app import WorkbenchConfig, create_app

    app = create_app(
        WorkbenchConfig(db_url=db.url, migrate=False, trusted_proxies=("127.0.0.1",)), db=db
    )
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "headers": [(b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-for", b"203.0.113.7")],
        "client": ("127.0.0.1", 5000),
        "app": app,
    }
    assert app.state.web.client_ip(Request(scope)) == "203.0.113.7"


# --------------------------------------------------------------- NUL bytes and huge labels


def test_nul_characters_and_oversized_labels_are_4xx_naming_the_field(login: Any) -> None:
    """Attack: NUL bytes in login, search, flags and client_id, and an evidence label naming
    more than 65,535 chunk ids, gave 500 on PostgreSQL."""
    from fastapi.testclient import TestClient

    ana, csrf = login("ana")
    h = {"X-CSRF-Token": csrf}
    task = ana.post("/api/next/evidence", headers=h).json()["task_id"]
    r = ana.get("/api/search", params={"q": "margin\x00"})
    assert r.status_code == 422 and r.json()["detail"].startswith("q:")
    r = ana.post("/api/flags", json={"item_id": "demo\x00", "flag": "not_my_domain"}, headers=h)
    assert r.status_code == 422 and "item_id" in r.json()["detail"]
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": {"paths": []}, "client_id": "a\x00"},
        headers=h,
    )
    assert r.status_code == 422 and "client_id" in r.json()["detail"]
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": {"paths": [], "note": "x\x00"}, "client_id": "n"},
        headers=h,
    )
    assert r.status_code == 422 and "payload" in r.json()["detail"]
    many = [[[f"c{i}"] for i in range(70_000)]]
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": {"paths": many}, "client_id": "m"},
        headers=h,
    )
    assert r.status_code == 422 and "at most 1000 distinct chunk ids" in r.json()["detail"]
    # the login form
    c = TestClient(ana.app)
    page = c.get("/login")
    import re

    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token
    r = c.post(
        "/login",
        data={"username": "ana\x00", "password": "x", "csrf_token": token.group(1)},
        follow_redirects=False,
    )
    assert r.status_code == 422 and "username" in r.text
    c.close()


# ------------------------------------------------------------------------------ imports


def _entries(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    p = tmp_path / "entries.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _entry(i: str, **kw: Any) -> dict[str, Any]:
    return {"id": i, "query": f"question {i}?", "category": "numeric", **kw}


def test_import_entries_checks_like_validate(empty_db: Database, tmp_path: Path) -> None:
    dup = _entries(tmp_path, [_entry("q1"), _entry("q2"), _entry("q1")])
    with pytest.raises(DataError) as err:
        svc.import_entries(empty_db, dup)
    assert any(p.line == 3 and "duplicate" in p.message for p in err.value.problems)
    good = _entries(tmp_path, [_entry("q1"), _entry("q2")])
    with pytest.raises(DataError, match="calibration") as err:
        svc.import_entries(empty_db, good, calibration=["q1", "nope"])
    assert "nope" in str(err.value.problems[0])
    for overlap in (0, 1001, 99_999_999_999):
        with pytest.raises(UsageError, match="--overlap"):
            svc.import_entries(empty_db, good, overlap=overlap)
    nul = _entries(tmp_path, [_entry("q1", metadata={"note": "a\x00b"})])
    with pytest.raises(DataError) as err:
        svc.import_entries(empty_db, nul)
    assert err.value.problems[0].field == "metadata.note"
    with empty_db.read() as s:
        assert s.scalar(select(func.count()).select_from(Task)) == 0  # nothing stored


def test_import_run_refuses_nan_scores_and_duplicates(db: Database, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(
        '{"id": "demo-001", "retrieved": [{"chunk_id": "a", "score": NaN}], "answer": "x"}\n'
    )
    with pytest.raises(DataError) as err:
        svc.import_run(db, run)
    assert err.value.problems[0].field == "retrieved.0.score"
    run.write_text(
        '{"id": "demo-001", "retrieved": [], "answer": "x"}\n'
        '{"id": "demo-001", "retrieved": [], "answer": "y"}\n'
    )
    with pytest.raises(DataError, match="id"):
        svc.import_run(db, run)
    with pytest.raises(UsageError, match="--overlap"):
        svc.import_run(db, DEMO_DIR / "run.jsonl", overlap=99_999_999_999)


@pytest.mark.parametrize(
    ("cmd", "args", "field"),
    [
        ("import-entries", ["--overlap", "99999999999"], "--overlap"),
        ("import-entries", ["--calibration", "demo-001,nope"], "calibration"),
        ("import-run", ["--overlap", "0"], "--overlap"),
    ],
)
def test_import_commands_exit_2_naming_the_field(
    tmp_path: Path, cmd: str, args: list[str], field: str
) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    src = DEMO_DIR / ("entries.jsonl" if cmd == "import-entries" else "run.jsonl")
    code, out = cli("workbench", cmd, str(src), *args, "--db", url)
    assert code == 2 and field in out, out


# ----------------------------------------------------------------------------- passwords


@pytest.mark.parametrize(
    ("username", "password"),
    [
        ("alice", "Alice123456!"),
        ("alice", "alicealice12"),
        ("alice", "qwertyuiopas"),
        ("alice", "1qaz2wsx3edc"),
        ("alice", "trustno1trustno1"),
        *[(name, pw) for name, pw, _ in DEMO_USERS],
        *[("cleo", pw) for _, pw, _ in DEMO_USERS],
    ],
)
def test_the_issues_passwords_are_refused(username: str, password: str) -> None:
    with pytest.raises(UsageError):
        check_password_policy(password, username)


def test_adduser_prompts_for_a_hidden_confirmed_password(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    code, out = cli("workbench", "adduser", "dora", "--db", url, input=f"{PW}\n{PW}\n")
    assert code == 0, out
    assert "Password:" in out and "Repeat for confirmation:" in out and PW not in out
    d = Database(url)
    assert authenticate(d, "dora", PW, "1.2.3.4", AuthPolicy()) is not None
    d.dispose()
    # a mismatch asks again; a weak one is refused before the store changes
    code, out = cli(
        "workbench", "adduser", "eve", "--db", url, input=f"{PW}\nother-words-9\n{PW}\n{PW}\n"
    )
    assert code == 0 and "do not match" in out, out
    code, out = cli(
        "workbench", "adduser", "fred", "--db", url, input="Alice123456!\nAlice123456!\n"
    )
    assert code == 2 and "error" in out
    assert "fred" not in users(Database(url))
