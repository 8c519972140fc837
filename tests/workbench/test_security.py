"""The workbench under attack: each test runs the attack named in its docstring.

Login throttle (parallel guessing, spoofed client addresses, lock-out as denial of service),
oversized bodies, blindness of adjudicators who label, demo accounts in a real store, state
changes on GET, weak passwords, and bad input that used to answer 500.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from assay.errors import UsageError
from assay.workbench.app import client_address
from assay.workbench.auth import (
    AuthPolicy,
    LoginRateLimited,
    authenticate,
    check_password_policy,
    create_user,
    verify_password,
)
from assay.workbench.db import Database
from assay.workbench.models import Assignment, LoginThrottle, Task, User

from .conftest import judge_payload, login_client
from .serverutil import running_server, session_client

PW = "tulip-basin-4821"


def _login_form(c: Any) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text)
    assert m
    return m.group(1)


def _try_login(c: Any, user: str, pw: str, headers: dict[str, str] | None = None) -> int:
    tok = _login_form(c)
    r = c.post(
        "/login",
        data={"username": user, "password": pw, "csrf_token": tok},
        headers=headers or {},
        follow_redirects=False,
    )
    return int(r.status_code)


# ------------------------------------------------------------------------------ login throttle


def test_forty_parallel_wrong_passwords_are_counted_one_by_one(db: Database) -> None:
    """Attack: 40 threads send a wrong password for `ana` at the same instant, each from its own
    address. The check-and-count is atomic: only the 5 free failures are ever verified."""
    policy = AuthPolicy()
    barrier = threading.Barrier(40)
    results: list[str] = []
    lock = threading.Lock()

    def attempt(i: int) -> None:
        barrier.wait(30)
        try:
            out = authenticate(db, "ana", f"wrong-{i}", f"198.51.100.{i}", policy)
            res = "evaluated" if out is None else "in"
        except LoginRateLimited:
            res = "limited"
        with lock:
            results.append(res)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    counts = Counter(results)
    assert counts == {"evaluated": policy.max_failures_per_user, "limited": 35}, counts
    with db.read() as s:
        row = s.get(LoginThrottle, "user:ana")
        assert row is not None and row.failures == policy.max_failures_per_user


def test_forty_parallel_wrong_passwords_over_http(db: Database) -> None:
    """Attack: 40 clients post a wrong password for `admin` to a real server at once."""
    with running_server(db.url) as (_proc, base):
        clients = [httpx.Client(base_url=base, timeout=60) for _ in range(40)]
        tokens = [_login_form(c) for c in clients]
        barrier = threading.Barrier(40)
        codes: list[int] = []
        lock = threading.Lock()

        def attempt(i: int) -> None:
            barrier.wait(30)
            r = clients[i].post(
                "/login",
                data={"username": "admin", "password": f"guess-{i}", "csrf_token": tokens[i]},
            )
            with lock:
                codes.append(r.status_code)

        threads = [threading.Thread(target=attempt, args=(i,)) for i in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for c in clients:
            c.close()
    assert Counter(codes) == {401: 5, 429: 35}, Counter(codes)


def test_progressive_delay_doubles_and_expires(db: Database) -> None:
    """Attack: keep guessing after the free failures; each wait doubles, and a key that waited
    long enough is heard again (a delay, not a lock-out)."""
    policy = AuthPolicy(delay_seconds=0.4, max_failures_per_user=2)
    for i in range(2):
        assert authenticate(db, "ben", f"bad{i}", "192.0.2.1", policy) is None
    with pytest.raises(LoginRateLimited) as first:
        authenticate(db, "ben", "ben-demo-pw", "192.0.2.1", policy)  # even the right one waits
    assert 0.2 < first.value.retry_after <= 0.4
    time.sleep(first.value.retry_after + 0.05)
    assert authenticate(db, "ben", "bad2", "192.0.2.1", policy) is None  # heard again
    with pytest.raises(LoginRateLimited) as second:
        authenticate(db, "ben", "bad3", "192.0.2.1", policy)
    assert 0.6 < second.value.retry_after <= 0.8  # doubled
    time.sleep(second.value.retry_after + 0.05)
    user = authenticate(db, "ben", "ben-demo-pw", "192.0.2.1", policy)
    assert user is not None and user.username == "ben"


def test_lockout_is_not_a_denial_of_service(app: Any) -> None:
    """Attack: a stranger who knows the usernames `ana` and `admin` sends 12 wrong passwords
    for each. Their owners, in the browsers they logged in from before, still get in at once
    with the right password; the stranger's browser waits."""
    owners = {}
    for user in ("ana", "admin"):
        c, csrf = login_client(app, user)
        c.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
        assert c.cookies.get("assay_device")
        owners[user] = c
    stranger = TestClient(app)
    for user in ("ana", "admin"):
        codes = [_try_login(stranger, user, f"guess-{i}") for i in range(12)]
        assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}, codes
    r = stranger.post(
        "/login",
        data={"username": "ana", "password": "ana-demo-pw", "csrf_token": _login_form(stranger)},
        follow_redirects=False,
    )
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    for user, pw in (("ana", "ana-demo-pw"), ("admin", "admin-demo-pw")):
        assert _try_login(owners[user], user, pw) == 303, user
        assert owners[user].get("/api/me").json()["username"] == user
    # a device cookie is bound to its account: it does not lift the throttle of another one
    ana_browser = owners["ana"]
    assert _try_login(ana_browser, "admin", "admin-demo-pw") == 429


def test_device_cookie_is_throttled_too(app: Any) -> None:
    """Attack: guessing from a browser that once logged in (a stolen laptop): the device's
    own free failures run out like anyone's."""
    c, csrf = login_client(app, "ben")
    c.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
    codes = [_try_login(c, "ben", f"guess-{i}") for i in range(7)]
    assert codes == [401] * 5 + [429] * 2


def test_spoofed_forwarded_for_does_not_spread_the_per_address_limit(db: Database) -> None:
    """Attack: 31 wrong logins for 31 different accounts, each claiming another client address in
    X-Forwarded-For, straight to the server (no proxy). The per-address limit (30) still holds;
    with --trusted-proxy 127.0.0.1 the forwarded addresses are believed. The first 30 accounts
    exist (with the demo's fast password hashes: a wrong password costs the server what it
    costs for them), the last does not (the server verifies a full-cost dummy hash)."""
    for i in range(30):
        create_user(db, f"nobody-{i}", PW, fast_hash=True, check_policy=False)

    def spray(base: str) -> list[int]:
        with httpx.Client(base_url=base, timeout=60) as c:
            return [
                _try_login(c, f"nobody-{i}", "guess", {"X-Forwarded-For": f"203.0.113.{i}"})
                for i in range(31)
            ]

    with running_server(db.url) as (_p, base):
        codes = spray(base)
    assert codes[:30] == [401] * 30 and codes[30] == 429, codes
    with db.read() as s:
        keys = set(s.scalars(select(LoginThrottle.key).where(LoginThrottle.key.like("ip:%"))))
    assert keys == {"ip:127.0.0.1"}
    with db.write() as s:
        s.query(LoginThrottle).delete()
    with running_server(db.url, extra=("--trusted-proxy", "127.0.0.1")) as (_p, base):
        codes = spray(base)
    assert set(codes) == {401}


def test_client_address_believes_only_trusted_hops() -> None:
    from assay.workbench.app import networks

    proxies = networks(["10.0.0.0/8", "127.0.0.1"])
    assert client_address("127.0.0.1", "6.6.6.6", []) == "127.0.0.1"
    assert client_address("192.0.2.7", "6.6.6.6", proxies) == "192.0.2.7"  # not a proxy
    assert client_address("127.0.0.1", "6.6.6.6", proxies) == "6.6.6.6"
    # the client prepends a fake hop: the right-most untrusted address wins
    assert client_address("127.0.0.1", "1.1.1.1, 6.6.6.6, 10.1.2.3", proxies) == "6.6.6.6"
    assert client_address("127.0.0.1", "not-an-ip", proxies) == "127.0.0.1"
    with pytest.raises(UsageError):
        networks(["nonsense"])


# ---------------------------------------------------------------------------------- bodies


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_200_mb_body_is_refused_before_it_is_read(db: Database) -> None:
    """Attack: POST a 200 MB JSON body to /api/labels, once with its Content-Length and no
    session, once chunked (no length) with a valid session. The server answers 413 (or closes)
    after at most a few MB, and its peak memory barely moves."""
    size, chunk = 200 * 1024 * 1024, b"[" + b"1," * (512 * 1024 - 1) + b"1]"
    sent = 0

    def body() -> Any:
        nonlocal sent
        while sent < size:
            sent += len(chunk)
            yield chunk

    with running_server(db.url) as (proc, base):
        with httpx.Client(base_url=base, timeout=60) as c:
            assert c.get("/login").status_code == 200
        before = _peak_rss_mb(proc.pid)
        with httpx.Client(base_url=base, timeout=60) as c:
            try:
                r = c.post(
                    "/api/labels",
                    content=body(),
                    headers={"Content-Length": str(size), "Content-Type": "application/json"},
                )
                assert r.status_code == 413, r.text
            except httpx.TransportError:
                pass  # the server closed the connection while we were still sending
        first = sent
        sent = 0
        client, csrf = session_client(base, db, "ana")
        try:
            r = client.post(
                "/api/labels",
                content=body(),
                headers={"Content-Type": "application/json", "X-CSRF-Token": csrf},
            )
            assert r.status_code == 413, r.text
            assert "limit" in r.json()["detail"]
        except httpx.TransportError:
            pass
        finally:
            client.close()
        with httpx.Client(base_url=base, timeout=60) as c:
            assert c.get("/login").status_code == 200  # still serving
        grown = _peak_rss_mb(proc.pid) - before
    assert first < 64 * 1024 * 1024 and sent < 64 * 1024 * 1024, (first, sent)
    assert grown < 40, f"peak memory grew by {grown:.0f} MB"


def test_api_posts_authenticate_before_parsing(app: Any) -> None:
    """Attack: malformed and oversized-but-allowed JSON to every API POST without a session:
    the answer is 401 (nothing parsed), and with a session but no CSRF token, 403."""
    c = TestClient(app)
    for url in ("/api/labels", "/api/flags", "/api/adjudications", "/api/guidelines"):
        r = c.post(url, content=b'{"task_id": ', headers={"Content-Type": "application/json"})
        assert r.status_code == 401, (url, r.status_code, r.text)
    ana, _ = login_client(app, "ana")
    r = ana.post("/api/labels", content=b"{", headers={"Content-Type": "application/json"})
    assert r.status_code == 403
    r = ana.post("/api/labels", content=b"x" * 1_000_001)
    assert r.status_code == 413


# ------------------------------------------------------------------------------- blindness


def test_an_adjudicator_who_labels_is_blind_like_anyone(app: Any, login: Any, db: Database) -> None:
    """Attack: the adjudicator claims a judging task that ana also claims, lets ana submit
    first, then tries every route to read ana's label before submitting their own. A second
    adjudicator who is not a labeller tries too, while the task is half labelled."""
    create_user(db, "adj2", PW, "adjudicator", fast_hash=True)
    ana, ana_csrf = login("ana")
    adj, adj_csrf = login("adjudicator")
    adj2, _ = login("adj2")
    task = adj.post("/api/next/judge", headers={"X-CSRF-Token": adj_csrf}).json()["task_id"]
    assert ana.post("/api/next/judge", headers={"X-CSRF-Token": ana_csrf}).json()["task_id"] == task
    secret = "ANA-SECRET the figure is from 2022."
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": judge_payload(correct=secret), "client_id": "a"},
        headers={"X-CSRF-Token": ana_csrf},
    )
    ana_label = r.json()["label_id"]
    for who in (adj, adj2):
        assert who.get(f"/api/labels/{ana_label}").status_code == 404
        assert who.get(f"/api/tasks/{task}/labels").json()["labels"] == []
        assert secret not in who.get(f"/api/tasks/{task}").text
        assert secret not in who.get(f"/task/{task}").text
        assert who.get(f"/adjudicate/{task}").status_code == 404
        assert task not in {
            q["task_id"] for q in who.get("/api/adjudication-queue").json()["queue"]
        }
    body = {"task_id": task, "payload": judge_payload(), "root_cause": "annotator_error"}
    assert adj2.post(
        "/api/adjudications", json=body, headers={"X-CSRF-Token": _csrf(adj2)}
    ).status_code in (404,)
    # the adjudicator submits: both labels are in, the adjudication opens for both adjudicators
    r = adj.post(
        "/api/labels",
        json={"task_id": task, "payload": judge_payload(), "client_id": "j"},
        headers={"X-CSRF-Token": adj_csrf},
    )
    assert r.status_code == 200
    for who in (adj, adj2):
        assert who.get(f"/api/labels/{ana_label}").status_code == 200
    assert secret in adj2.get(f"/adjudicate/{task}").text
    # the adjudicator labelled the task: never its adjudicator
    r = adj.get(f"/adjudicate/{task}")
    assert r.status_code == 409 and secret not in r.text
    # ana, an annotator, still sees only her own until adjudication
    assert [x["user"] for x in ana.get(f"/api/tasks/{task}/labels").json()["labels"]] == ["ana"]


def _csrf(client: Any) -> str:
    return str(client.get("/api/me").json()["csrf"])


# ---------------------------------------------------------------------------------- demo


def test_demo_refuses_a_real_store_and_never_publishes_passwords_in_it(tmp_path: Path) -> None:
    """Attack (by accident): `assay workbench demo --db` pointed at a production store."""
    import assay.cli.workbench_cmds  # noqa: F401
    from assay.cli import app as cli

    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'prod.db'}"
    r = runner.invoke(cli, ["workbench", "adduser", "dora", "--db", url], input=f"{PW}\n{PW}\n")
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["workbench", "demo", "--db", url])
    assert r.exit_code == 2 and "--force" in r.output and "Traceback" not in r.output
    store = Database(url)
    with store.read() as s:
        assert [u.username for u in s.scalars(select(User))] == ["dora"]
    r = runner.invoke(cli, ["workbench", "demo", "--db", url, "--force"])
    assert r.exit_code == 0, r.output
    with store.read() as s:
        users = {u.username: u for u in s.scalars(select(User))}
    from assay.workbench.demo_store import DEMO_USERS

    for name, published, _role in DEMO_USERS:
        assert not verify_password(users[name].password_hash, published), name
    store.dispose()


# ----------------------------------------------------------------------------- GET is safe


def test_get_requests_never_claim_slots(login: Any, db: Database) -> None:
    """Attack: a link prefetcher (or an <img src>) fetching /work/judge and /api/next/judge."""

    def claims() -> tuple[int, int]:
        with db.read() as s:
            n = s.scalar(select(func.count()).select_from(Assignment)) or 0
            m = s.scalar(select(func.sum(Task.n_claimed))) or 0
        return int(n), int(m)

    ana, csrf = login("ana")
    before = claims()
    for kind in ("evidence", "reference", "judge"):
        r = ana.get(f"/work/{kind}", follow_redirects=False)
        assert r.status_code == 200 and 'action="/work/' in r.text
        assert ana.get(f"/api/next/{kind}").status_code == 405
    ana.get("/")
    assert claims() == before
    r = ana.post("/work/judge", data={"csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/task/")
    assert claims() == (before[0] + 1, before[1] + 1)
    # with a claim open, looking at /work/judge leads back to it and still claims nothing
    r = ana.get("/work/judge", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/task/")
    assert claims() == (before[0] + 1, before[1] + 1)
    assert ana.post("/work/judge", data={}, follow_redirects=False).status_code == 403


# ------------------------------------------------------------------------------ passwords


@pytest.mark.parametrize(
    "pw",
    [
        "short-pw1!",
        "password1234",
        "P@ssw0rd-2024!",
        "qwertyuiop12",
        "iloveyou2024",
        "Welcome12345",
        "aaaaaaaaaaaaaa",
        "123456789012",
        "monkeymonkey99",
        "longusername01",
    ],
)
def test_weak_passwords_are_refused(pw: str) -> None:
    with pytest.raises(UsageError):
        check_password_policy(pw, username="longusername01")


@pytest.mark.parametrize("pw", [PW, "tundra bagpipe orchard fossil", "Ledger-Otter-Quarry-9"])
def test_strong_passwords_pass(pw: str) -> None:
    check_password_policy(pw, username="ana")


@pytest.mark.parametrize(
    "pw",
    [
        "correcthorsebatterystaple",
        "correct horse battery staple",
        "Correct-Horse-Battery-Staple",
        "CorrectHorseBatteryStaple!",
        "adjudicator demo pw",
        "Adjudicator_Demo_Pw",
        "admin.demo.pw.2024",
    ],
)
def test_published_passwords_are_refused_in_any_spelling(pw: str) -> None:
    """Attack: xkcd's example passphrase (in every cracking list) and the demo's published
    passwords were accepted once their case or separators changed."""
    with pytest.raises(UsageError, match="published"):
        check_password_policy(pw, username="cleo")


def test_a_published_passphrase_inside_a_strong_password_is_not_refused() -> None:
    check_password_policy("correct horse battery staple / tundra bagpipe orchard", "cleo")


def test_weak_passwords_are_refused_by_every_door(login: Any, db: Database, tmp_path: Path) -> None:
    """Attack (by habit): an admin creates `cleo` with password `password1234`, in the admin page
    and on the command line."""
    admin, csrf = login("admin")
    r = admin.post(
        "/admin/users",
        data={"csrf_token": csrf, "username": "cleo", "password": "password1234"},
        follow_redirects=False,
    )
    assert "common" in admin.get(r.headers["location"]).text
    r = admin.post(
        "/admin/users",
        data={"csrf_token": csrf, "username": "cleo-the-analyst", "password": "cleo-the-analyst"},
        follow_redirects=False,
    )
    assert "username" in admin.get(r.headers["location"]).text
    with db.read() as s:
        assert s.scalar(select(User).where(User.username.like("cleo%"))) is None
    import assay.cli.workbench_cmds  # noqa: F401
    from assay.cli import app as cli

    r = CliRunner().invoke(
        cli,
        ["workbench", "adduser", "cleo", "--db", f"sqlite:///{tmp_path / 'w.db'}"],
        input="password1234\npassword1234\n",
    )
    assert r.exit_code == 2 and "common" in r.output


# ------------------------------------------------------------------------------ bad input


def test_bad_input_answers_4xx_with_the_field_never_500(app: Any) -> None:
    """Attack: non-numbers, 20-digit ids and negative ids in every place that takes a number."""
    c, csrf = login_client(app, "adjudicator")
    c = TestClient(app, raise_server_exceptions=False, cookies=dict(c.cookies))
    huge = "9" * 20
    h = {"X-CSRF-Token": csrf}
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/session/start", {"data": {"csrf_token": csrf, "minutes": "abc"}}, "minutes"),
        ("POST", "/session/start", {"data": {"csrf_token": csrf, "minutes": huge}}, "minutes"),
        ("POST", "/session/start", {"data": {"csrf_token": csrf, "minutes": "1"}}, "session"),
        ("GET", f"/task/{huge}", {}, "task_id"),
        ("GET", "/task/-1", {}, "task_id"),
        ("GET", f"/adjudicate/{huge}", {}, "task_id"),
        ("GET", f"/api/tasks/{huge}", {}, "task_id"),
        ("GET", f"/api/tasks/{huge}/labels", {}, "task_id"),
        ("GET", f"/api/labels/{huge}", {}, "label_id"),
        ("GET", "/api/labels/abc", {}, "label_id"),
        ("GET", "/api/search?limit=abc", {}, "limit"),
        ("POST", "/api/labels", {"json": {"task_id": int(huge), "payload": {}, "client_id": "x"}}, "task_id"),
        ("POST", "/api/labels", {"json": {"task_id": "abc", "payload": {}, "client_id": "x"}}, "task_id"),
        ("POST", "/api/adjudications", {"json": {"task_id": int(huge), "payload": {}, "root_cause": "x"}}, "task_id"),
    ]  # fmt: skip
    for method, url, kw, field in cases:
        r = c.request(method, url, headers=h, follow_redirects=False, **kw)
        assert 400 <= r.status_code < 500, (method, url, r.status_code, r.text[:200])
        assert field in r.text, (url, r.text[:300])


def test_validation_errors_name_their_fields(login: Any) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    bad = {"verdicts": dict.fromkeys(("correct", "comprehensive", "faithful", "policy"), "maybe")}
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": bad, "client_id": "v"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 422
    detail = r.json()["detail"]
    for c in ("correct", "comprehensive", "faithful", "policy"):
        assert f"payload.verdicts.{c}: Input should be 'pass' or 'fail'" in detail
    assert {e["field"] for e in r.json()["errors"]} >= {"payload.verdicts.correct"}


def test_agreement_panel_counts_only_tasks_whose_labels_are_all_in(db: Database) -> None:
    """Attack: an adjudicator holding the third claim on a task reads the agreement panel to
    learn how the first two judged it."""
    from sqlalchemy import update

    from assay.workbench import service as svc
    from assay.workbench.agreement import judge_label_records

    with db.write() as s:
        s.execute(update(Task).where(Task.kind == "judge").values(overlap=3))
    with db.read() as s:
        users = {u.username: u for u in s.scalars(select(User))}
    task = svc.claim_next(db, users["ana"], "judge")
    assert task is not None
    for name in ("ana", "ben"):
        assert svc.claim_next(db, users[name], "judge") == task
        svc.submit_label(db, users[name], task, judge_payload(), client_id=f"{name}-p")
    assert svc.claim_next(db, users["adjudicator"], "judge") == task
    assert not [r for r in judge_label_records(db) if r["item"] == f"task-{task}"]
    svc.submit_label(db, users["adjudicator"], task, judge_payload(), client_id="adj-p")
    assert len([r for r in judge_label_records(db) if r["item"] == f"task-{task}"]) == 3 * 4
