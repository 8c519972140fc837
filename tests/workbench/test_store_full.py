"""A store out of room (a full disk) refuses writes as the server's state, not the request's:
503 with Retry-After, no traceback and no SQL, while a write refused for its data stays a 422
(issue 40: "on a full disk every request logs a traceback"; a 422 told the client its input was
wrong)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import DBAPIError

from assay.workbench import service as svc
from assay.workbench.db import StoreRefused, _refusal, _refused


def _sqlite_full(tmp_path: Path) -> sqlite3.Error:
    """SQLite's own SQLITE_FULL, from a database capped at its page count."""
    conn = sqlite3.connect(tmp_path / "capped.db")
    conn.execute("CREATE TABLE t (x BLOB)")
    conn.execute("PRAGMA max_page_count = 3")
    try:
        conn.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("the capped database took the row")


def test_a_full_store_is_unavailable_and_a_bad_value_is_not(tmp_path: Path) -> None:
    import psycopg.errors

    full = _sqlite_full(tmp_path)
    assert _refusal(full).unavailable, str(full)
    assert _refusal(psycopg.errors.DiskFull("could not extend file")).unavailable
    assert _refusal(OSError(28, "No space left on device")).unavailable
    assert not _refusal(sqlite3.OperationalError("string or blob too big")).unavailable
    assert not _refusal(psycopg.errors.StringDataRightTruncation("value too long")).unavailable
    with pytest.raises(StoreRefused) as caught, _refused():
        raise DBAPIError.instance("INSERT ...", {"x": "secret"}, full, sqlite3.Error)
    assert caught.value.unavailable and "INSERT" not in str(caught.value)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("unavailable", [True, False])
def test_a_full_store_answers_503_with_retry_after(
    login: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, unavailable: bool
) -> None:
    full = _sqlite_full(tmp_path)
    bad = sqlite3.OperationalError("string or blob too big")

    def refuse(*args: Any, **kwargs: Any) -> int:
        with _refused():
            raise DBAPIError.instance("INSERT", {}, full if unavailable else bad, sqlite3.Error)
        raise AssertionError("unreachable")

    monkeypatch.setattr(svc, "add_flag", refuse)
    client, csrf = login("ana")
    r = client.post(
        "/api/flags",
        json={"item_id": "x", "flag": "ambiguous", "note": "n"},
        headers={"X-CSRF-Token": csrf},
    )
    if unavailable:
        assert r.status_code == 503 and r.headers["Retry-After"] == "30", r.text
        assert "disk is full" in r.json()["detail"], r.text
    else:
        assert r.status_code == 422 and "Retry-After" not in r.headers, r.text
    assert "INSERT" not in r.text and "Traceback" not in r.text
    assert client.get("/api/me").status_code == 200
