"""Accounts, password policy and hashing (argon2id), server-side sessions with CSRF tokens, and
the login throttle.

The throttle is a progressive delay, not a lock-out. Each key has a number of free failures;
after that, every further failure makes the key wait twice as long before its next attempt
(30 s, 60 s, 120 s, ... at most 15 minutes), and an attempt made while a key waits is refused
without checking the password. The keys are the account (`user:NAME`) and the client address
(`ip:ADDRESS`) for clients that have never logged in to that account, and the browser's device
cookie (`device:ID`) for one that has: after a successful login a browser gets a signed cookie
naming the account, and its later attempts on that account count only against the device. So a
stranger who knows a username can slow down logins to it from unknown browsers, but never
those of its owner from the browser they use (OWASP's device-cookie scheme, no CAPTCHA).

Check and count are one atomic step: an attempt first reserves a failure on each of its keys in
one write transaction (rows locked with SELECT ... FOR UPDATE on PostgreSQL; SQLite serialises
writers with BEGIN IMMEDIATE), then verifies the password, and gives the reservation back on
success. Forty parallel wrong passwords for one account are therefore counted one by one: only
the free failures are ever verified.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from assay.errors import UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    ROLES,
    AuthSession,
    LoginThrottle,
    Setting,
    User,
    username_key,
    utcnow,
)

__all__ = [
    "MIN_PASSWORD_LENGTH",
    "MIN_PASSWORD_SCORE",
    "AuthPolicy",
    "LoginRateLimited",
    "authenticate",
    "check_password_policy",
    "create_user",
    "device_token",
    "end_session",
    "hash_password",
    "resolve_session",
    "session_cache",
    "start_session",
    "username_key",
    "verify_password",
]

# argon2id with the library's defaults (RFC 9106 low-memory profile: t=3, m=64 MiB, p=4).
# Hashing is memory-hard on purpose; at most a few hashes run at once so that a burst of logins
# cannot exhaust memory.
_HASH_SLOTS = threading.BoundedSemaphore(4)
MIN_PASSWORD_LENGTH = 12


def _hasher(fast: bool = False):  # type: ignore[no-untyped-def]
    from argon2 import PasswordHasher

    if fast:  # for tests and demos only: the parameters are stored in the hash itself
        return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    return PasswordHasher()


# Passwords published where an attacker reads them: the demo's, and xkcd 936's example passphrase
# (in every cracking list). Each is refused in any case and with any separators.
_PUBLISHED = (
    "admin-demo-pw",
    "adjudicator-demo-pw",
    "ana-demo-pw",
    "ben-demo-pw",
    "correcthorsebatterystaple",
)
# Words an attacker of this workbench tries first: its own name and the published passwords.
_CONTEXT = ("assay", "workbench", *_PUBLISHED)
MIN_PASSWORD_SCORE = 3  # zxcvbn's scale 0-4; 3 is "safely unguessable" (< 10^10 guesses)


def _zxcvbn(password: str, context: list[str]) -> dict[str, Any]:
    try:
        from zxcvbn import zxcvbn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from assay.errors import MissingExtraError

        raise MissingExtraError("workbench", "checking passwords", "zxcvbn") from exc
    result: dict[str, Any] = zxcvbn(password[:100], user_inputs=context)
    return result


def check_password_policy(password: str, username: str = "") -> None:
    """Refuse a weak password (UsageError saying why). The strength is zxcvbn's estimate (Dropbox's
    estimator: dictionaries, keyboard walks, dates, repeats, leetspeak), told the username and the
    demo's published passwords as words an attacker knows. Refused: fewer than 12 characters,
    the username itself, a published password respelled (case, separators) with nothing hard to
    guess around it, a score under 3 of 4, or a score of 3 or more that rests on the
    username or one of the thousand commonest passwords (what is left without them scores under
    3: `Alice123456!` for alice, `P@ssw0rd-2024!`)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    low = password.lower()
    name = username.strip().lower()
    if name and low.strip() == name:
        raise UsageError("the password must not be the username")
    context = [name, *_CONTEXT] if name else list(_CONTEXT)
    _refuse_published(low, context)
    result = _zxcvbn(password, context)
    if int(result["score"]) < MIN_PASSWORD_SCORE:
        raise UsageError(_weak(result))
    known = [
        m["token"]
        for m in result["sequence"]
        if m.get("pattern") == "dictionary"
        and (
            m.get("dictionary_name") == "user_inputs"
            or (m.get("dictionary_name") == "passwords" and int(m.get("rank", 10**9)) <= 1000)
        )
    ]
    if known:
        rest = password
        for token in known:
            rest = rest.replace(token, "")
        if not rest or int(_zxcvbn(rest, context)["score"]) < MIN_PASSWORD_SCORE:
            raise UsageError(
                "the password is built on a common password, the username or a published "
                "password, and what is left is easy to guess: choose a passphrase of unrelated "
                "words"
            )


def _letters(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum())


def _refuse_published(low: str, context: list[str]) -> None:
    """Refuse a password that is a published one respelled (case, spaces, dots, dashes), alone or
    with an easy-to-guess rest ("admin.demo.pw.2024")."""
    bare = _letters(low)
    for known in _PUBLISHED:
        word = _letters(known)
        if word not in bare:
            continue
        rest = bare.replace(word, "")
        if not rest or int(_zxcvbn(rest, context)["score"]) < MIN_PASSWORD_SCORE:
            raise UsageError(
                "the password is a published password spelled another way (its letters and "
                "digits are known to attackers): choose a passphrase of unrelated words"
            )


def _weak(result: dict[str, Any]) -> str:
    feedback = result.get("feedback") or {}
    hint = feedback.get("warning") or ""
    tips = " ".join(feedback.get("suggestions") or [])
    why = f" ({hint.rstrip('.')})" if hint else ""
    return (
        f"that password is too easy to guess{why}: strength {result['score']} of 4, at least "
        f"{MIN_PASSWORD_SCORE} needed. " + (tips or "Choose a passphrase of unrelated words.")
    ).strip()


def hash_password(password: str, *, fast: bool = False) -> str:
    with _HASH_SLOTS:
        return str(_hasher(fast).hash(password))


def verify_password(stored_hash: str, password: str) -> bool:
    from argon2.exceptions import InvalidHashError, VerificationError

    with _HASH_SLOTS:
        try:
            return bool(_hasher().verify(stored_hash, password))
        except (VerificationError, InvalidHashError):
            return False


# A real hash to verify against when the user does not exist, so that timing does not tell.
_DUMMY_HASH: str | None = None


@dataclass(frozen=True)
class AuthPolicy:
    """Session lifetime and the login throttle (see the module's docstring)."""

    idle_minutes: int = 8 * 60
    max_hours: int = 24
    max_failures_per_user: int = 5
    max_failures_per_ip: int = 30
    max_failures_per_device: int = 5
    delay_seconds: float = 30.0
    max_delay_seconds: float = 15 * 60.0
    failure_window_minutes: int = 15
    # how long a process may answer a JSON API call from a session it read lately, without
    # reading it again (`SessionCache`); 0 reads the store on every call
    session_cache_seconds: float = 5.0

    def delay(self, failures: int, free: int) -> float:
        """Seconds a key waits after its `failures`-th failure."""
        if failures < free:
            return 0.0
        return float(min(self.max_delay_seconds, self.delay_seconds * 2 ** (failures - free)))


class LoginRateLimited(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"too many failed logins; try again in {retry_after:.0f} s")
        self.retry_after = retry_after


def create_user(
    db: Database,
    username: str,
    password: str,
    role: str = "annotator",
    *,
    domains: list[str] | None = None,
    groups: list[str] | None = None,
    clearance: str = "public",
    fast_hash: bool = False,
    check_policy: bool = True,
) -> int:
    """Create an account; returns its id. Raises UsageError on a bad role, a taken name, bad
    access (`groups`, `clearance`: see `assay.workbench.service.access`) or a password the
    policy refuses (`check_policy=False` only for the demo's throwaway store)."""
    from assay.workbench.service.access import check_access_input, refresh_grants

    username = username.strip()
    if not username or len(username) > 100:
        raise UsageError("a username needs 1 to 100 characters")
    if "\x00" in username or "\x00" in password:
        raise UsageError("username and password must not contain NUL characters")
    if role not in ROLES:
        raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    clean_groups = check_access_input(groups or [], clearance)
    if check_policy:
        check_password_policy(password, username)
    pw_hash = hash_password(password, fast=fast_hash)
    key = username_key(username)
    with db.write() as s:
        taken = s.scalar(select(User.username).where(User.username_key == key))
        if taken is not None:
            same = "" if taken == username else f" (as {taken!r}: names differ by letter case only)"
            raise UsageError(f"user {username!r} exists already{same}")
        user = User(
            username=username,
            username_key=key,
            password_hash=pw_hash,
            role=role,
            domains=sorted(set(domains or [])),
            groups=clean_groups,
            clearance=clearance,
            active=True,
        )
        s.add(user)
        s.flush()
        refresh_grants(s, [user.id])
        return user.id


# ------------------------------------------------------------------------- device cookies

_SECRETS: dict[str, bytes] = {}
_SECRET_KEY = "device_cookie_secret"


def _server_secret(db: Database) -> bytes:
    """The store's signing key for device cookies, made once and shared by every worker."""
    got = _SECRETS.get(db.url)
    if got is not None:
        return got
    with db.write() as s:
        row = s.get(Setting, _SECRET_KEY)
        if row is None:
            row = Setting(key=_SECRET_KEY, value=secrets.token_hex(32))
            s.add(row)
        value = row.value
    _SECRETS[db.url] = bytes.fromhex(value)
    return _SECRETS[db.url]


def _sign(db: Database, username: str, nonce: str) -> str:
    msg = f"{username_key(username)}\0{nonce}".encode()
    return hmac.new(_server_secret(db), msg, hashlib.sha256).hexdigest()[:32]


def device_token(db: Database, username: str) -> str:
    """A device cookie value for a browser that just logged in to `username`."""
    nonce = secrets.token_urlsafe(12)
    return f"{nonce}.{_sign(db, username, nonce)}"


def _device_id(db: Database, username: str, token: str | None) -> str | None:
    """The device's id when `token` is a valid device cookie for `username`, else None."""
    if not token or token.count(".") != 1 or len(token) > 100:
        return None
    nonce, sig = token.split(".")
    return nonce if hmac.compare_digest(sig, _sign(db, username, nonce)) else None


# ------------------------------------------------------------------------------ throttle


def _reserve(db: Database, keys: list[tuple[str, int]], policy: AuthPolicy) -> None:
    """Count one failure on every key, atomically, unless one of them must still wait."""
    window = dt.timedelta(minutes=policy.failure_window_minutes)
    names = sorted(k for k, _ in keys)
    free = dict(keys)
    with db.write() as s:
        rows = {r.key: r for r in s.scalars(_locked(db, names))}
        missing = [k for k in names if k not in rows]
        if missing:
            _insert_missing(db, s, missing, utcnow())
            rows = {r.key: r for r in s.scalars(_locked(db, names))}
        now = utcnow()  # read once the rows are ours: earlier holders wrote their own times
        wait = 0.0
        for key in names:
            row = rows[key]
            if now - row.last_at > window:
                row.failures = 0
            delay = policy.delay(row.failures, free[key])
            if delay > 0:
                wait = max(wait, delay - (now - row.last_at).total_seconds())
        if wait > 0:
            raise LoginRateLimited(wait)
        for key in names:
            rows[key].failures += 1
            rows[key].last_at = max(now, rows[key].last_at)


def _locked(db: Database, names: list[str]):  # type: ignore[no-untyped-def]
    q = select(LoginThrottle).where(LoginThrottle.key.in_(names)).order_by(LoginThrottle.key)
    return q.with_for_update() if db.dialect == "postgresql" else q


def _insert_missing(db: Database, s: Session, keys: list[str], now: dt.datetime) -> None:
    """Add zero rows for new keys; a concurrent insert of the same key is not an error."""
    rows = [{"key": k, "failures": 0, "last_at": now - dt.timedelta(days=1)} for k in keys]
    if db.dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        s.execute(pg_insert(LoginThrottle).on_conflict_do_nothing(index_elements=["key"]), rows)
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        s.execute(sqlite_insert(LoginThrottle).on_conflict_do_nothing(index_elements=["key"]), rows)


def _release(db: Database, reset: list[str], undo: list[str]) -> None:
    """After a successful login: forget the failures of `reset`, give back the reservation on
    `undo` (the client address keeps what others did from it), drop rows older than a day."""
    now = utcnow()
    with db.write() as s:
        for key in reset:
            row = s.get(LoginThrottle, key)
            if row is not None:
                row.failures = 0
        for key in undo:
            row = s.get(LoginThrottle, key)
            if row is not None and row.failures > 0:
                row.failures -= 1
        s.execute(delete(LoginThrottle).where(LoginThrottle.last_at < now - dt.timedelta(days=1)))


def authenticate(
    db: Database,
    username: str,
    password: str,
    ip: str,
    policy: AuthPolicy,
    device: str | None = None,
) -> User | None:
    """Check a login. Raises LoginRateLimited while one of the attempt's keys must wait; returns
    the user on success, None on a wrong name or password. `device` is the browser's device
    cookie, if any (see the module's docstring)."""
    global _DUMMY_HASH
    if "\x00" in username or "\x00" in password or "\x00" in ip:
        raise UsageError("username: must not contain NUL characters")
    name = username_key(username)[:150]
    dev = _device_id(db, username, device)
    if dev is not None:
        keys = [(f"device:{dev}", policy.max_failures_per_device)]
    else:
        keys = [
            (f"user:{name}", policy.max_failures_per_user),
            (f"ip:{ip[:100]}", policy.max_failures_per_ip),
        ]
    _reserve(db, keys, policy)
    with db.read() as s:
        user = s.scalar(select(User).where(User.username_key == name, User.active.is_(True)))
    if user is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hash_password("not-a-real-password")
        verify_password(_DUMMY_HASH, password)
        return None
    if not verify_password(user.password_hash, password):
        return None
    reset = [k for k, _ in keys if not k.startswith("ip:")]
    _release(db, reset, [k for k, _ in keys if k.startswith("ip:")])
    return user


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(db: Database, user_id: int, policy: AuthPolicy) -> tuple[str, str]:
    """Open a session; returns (cookie token, CSRF token). Only the token's hash is stored."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = utcnow()
    with db.write() as s:
        s.add(
            AuthSession(
                token_hash=_token_hash(token),
                user_id=user_id,
                csrf_token=csrf,
                created_at=now,
                last_seen=now,
                expires_at=now + dt.timedelta(minutes=policy.idle_minutes),
            )
        )
    return token, csrf


@dataclass(frozen=True)
class SessionInfo:
    user: User
    csrf: str
    session_id: int


_Q_SESSION = (
    select(
        AuthSession.id,
        AuthSession.csrf_token,
        AuthSession.created_at,
        AuthSession.last_seen,
        AuthSession.expires_at,
        User.id,
        User.username,
        User.role,
        User.domains,
        User.active,
    )
    .join(User, User.id == AuthSession.user_id)
    .where(AuthSession.token_hash == bindparam("th"))
)


class SessionCache:
    """Sessions this process read from one store lately, by token hash: the JSON API's guard
    answers from here for `AuthPolicy.session_cache_seconds` after a read instead of reading the
    store on every call (the session read is a fifth to a quarter of a label's work in
    process: `bench/bench_session_read.py`).

    What a session carries never changes while it lives (its user, CSRF token, creation time;
    the user's name, role and domains are set when the account is made), so a cached entry is
    wrong only once the session ends. Its end is kept exact where this process can know it: the
    idle and hard expiry are checked against the cached times on every hit (an entry never
    outlives the session's `expires_at` as last read), and a logout or an expiry handled by
    this process (`end_session`, `resolve_session`) removes the entry. A session ended in
    another process (a logout on another `--workers` process, a row deleted by hand) is still
    honoured here for at most `session_cache_seconds`. Bounded to `max_entries` (the oldest
    entries go first); safe to share between threads."""

    def __init__(self, max_entries: int = 20_000) -> None:
        self.max_entries = max_entries
        # token hash -> (session, read at (monotonic seconds), expires at (UTC, naive))
        self._entries: dict[str, tuple[SessionInfo, float, dt.datetime]] = {}
        self._ended: dict[str, None] = {}  # token hashes of sessions ended here: never cached
        self._lock = threading.Lock()

    def get(self, token: str | None, seconds: float) -> SessionInfo | None:
        """The cached live session of `token` read less than `seconds` ago, else None."""
        if not token or seconds <= 0:
            return None
        entry = self._entries.get(_token_hash(token))
        if entry is None:
            return None
        info, read_at, expires = entry
        if time.monotonic() - read_at >= seconds or utcnow() >= expires:
            return None
        return info

    def put(self, th: str, info: SessionInfo, expires: dt.datetime) -> None:
        with self._lock:
            if th in self._ended:  # a read that raced its logout
                return
            self._entries.pop(th, None)
            while len(self._entries) >= self.max_entries:
                del self._entries[next(iter(self._entries))]
            self._entries[th] = (info, time.monotonic(), expires)

    def forget(self, th: str, *, ended: bool = False) -> None:
        """Drop the entry of a token hash; `ended`: its session is over for good (a logout),
        and a read that raced the logout must not put it back."""
        with self._lock:
            self._entries.pop(th, None)
            if ended:
                self._ended[th] = None
                while len(self._ended) > self.max_entries:
                    del self._ended[next(iter(self._ended))]

    def __len__(self) -> int:
        return len(self._entries)


_CACHES: weakref.WeakKeyDictionary[Database, SessionCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def session_cache(db: Database) -> SessionCache:
    """This process's `SessionCache` of the store `db`."""
    with _CACHES_LOCK:
        cache = _CACHES.get(db)
        if cache is None:
            cache = _CACHES[db] = SessionCache()
        return cache


def resolve_session(
    db: Database, token: str | None, policy: AuthPolicy, *, cached: bool = False
) -> SessionInfo | None:
    """The live session of a cookie token, sliding its idle expiry; None when missing or expired.

    One plain row read (no ORM loading: this is the hottest query of the app); the user comes
    back as a detached `User` carrying id, name, role, domains and active. With `cached` (the
    JSON API's guard, which answers from `session_cache(db)` first and calls this on a miss),
    the session read is kept there for `policy.session_cache_seconds`; pages always read it."""
    if not token:
        return None
    cache = session_cache(db)
    now = utcnow()
    th = _token_hash(token)
    with db.direct(durable=False) if db.dialect == "postgresql" else db.quick_read() as conn:
        row = conn.execute(_Q_SESSION, {"th": th}).first()
    if row is None:
        cache.forget(th)
        return None
    sid, csrf, created, last_seen, expires, uid, name, role, domains, active = row
    hard_limit = created + dt.timedelta(hours=policy.max_hours)
    if now >= expires or now >= hard_limit or not active:
        cache.forget(th)
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.id == sid))
        return None
    if (now - last_seen).total_seconds() > 60:  # slide the idle window, at most once a minute
        with db.write() as s:
            live = s.get(AuthSession, sid)
            if live is not None:
                live.last_seen = now
                live.expires_at = min(now + dt.timedelta(minutes=policy.idle_minutes), hard_limit)
                expires = live.expires_at
    user = User(id=uid, username=name, role=role, domains=list(domains or []), active=active)
    info = SessionInfo(user=user, csrf=csrf, session_id=sid)
    if cached and policy.session_cache_seconds > 0:
        cache.put(th, info, min(expires, hard_limit))
    return info


def end_session(db: Database, token: str | None) -> None:
    if token:
        th = _token_hash(token)
        session_cache(db).forget(th, ended=True)
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.token_hash == th))


def csrf_ok(expected: str, given: str | None) -> bool:
    """The token sent is the session's, compared in constant time as bytes (a header or form
    field may hold any character: a non-ASCII one is a mismatch, not an error)."""
    if not given:
        return False
    return hmac.compare_digest(
        expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass")
    )
