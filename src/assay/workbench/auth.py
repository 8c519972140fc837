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
import itertools
import re
import secrets
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from assay.errors import UsageError
from assay.workbench.db import Database
from assay.workbench.models import ROLES, AuthSession, LoginThrottle, Setting, User, utcnow

__all__ = [
    "MIN_PASSWORD_LENGTH",
    "AuthPolicy",
    "LoginRateLimited",
    "authenticate",
    "check_password_policy",
    "create_user",
    "device_token",
    "end_session",
    "hash_password",
    "resolve_session",
    "start_session",
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


@cache
def _common_passwords() -> frozenset[str]:
    path = Path(__file__).with_name("common_passwords.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(x.strip().lower() for x in lines if x.strip() and not x.startswith("#"))


_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)
_EDGES = re.compile(r"^[\W\d_]+|[\W\d_]+$")


def _core(password: str) -> str:
    """The word inside a password: leading and trailing digits and symbols removed, leetspeak
    undone, letters only ("P@ssw0rd-2024!" -> "password")."""
    inner = _EDGES.sub("", password.lower())
    return re.sub(r"[^a-z]", "", inner.translate(_LEET))


def _is_run(text: str) -> bool:
    """Digits counting up or down (1234567890, 987654...), the commonest long 'password'."""
    digits = [int(c) for c in text if c.isdigit()]
    if len(digits) < len(text) - 2 or len(digits) < 6:
        return False
    steps = {(b - a) % 10 for a, b in itertools.pairwise(digits)}
    return steps <= {1} or steps <= {9}


def check_password_policy(password: str, username: str = "") -> None:
    """Refuse a weak password (UsageError saying why): fewer than 12 characters, equal to the
    username, fewer than 5 different characters, a run of digits, or built on a common password (the list
    shipped in the package: its core, or the core repeated, is on it)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    low = password.lower()
    if username and low.strip() == username.strip().lower():
        raise UsageError("the password must not be the username")
    if len(set(low)) < 5:
        raise UsageError("the password repeats too few characters; choose a passphrase")
    common = _common_passwords()
    core = _core(password)
    if low in common or core in common or (not core and (len(set(low)) < 8 or _is_run(low))):
        raise UsageError("that password is on the list of common passwords; choose another")
    for n in range(1, len(core) // 2 + 1):
        if len(core) % n == 0 and core[:n] * (len(core) // n) == core and core[:n] in common:
            raise UsageError("that password is on the list of common passwords; choose another")


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
    fast_hash: bool = False,
    check_policy: bool = True,
) -> int:
    """Create an account; returns its id. Raises UsageError on a bad role, a taken name or a
    password the policy refuses (`check_policy=False` only for the demo's throwaway store)."""
    username = username.strip()
    if not username or len(username) > 100:
        raise UsageError("a username needs 1 to 100 characters")
    if role not in ROLES:
        raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if check_policy:
        check_password_policy(password, username)
    pw_hash = hash_password(password, fast=fast_hash)
    with db.write() as s:
        if s.scalar(select(User.id).where(User.username == username)) is not None:
            raise UsageError(f"user {username!r} exists already")
        user = User(
            username=username,
            password_hash=pw_hash,
            role=role,
            domains=sorted(set(domains or [])),
            active=True,
        )
        s.add(user)
        s.flush()
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
    msg = f"{username.strip().lower()}\0{nonce}".encode()
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
    name = username.strip().lower()[:150]
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
        user = s.scalar(select(User).where(User.username == username, User.active.is_(True)))
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


def resolve_session(db: Database, token: str | None, policy: AuthPolicy) -> SessionInfo | None:
    """The live session of a cookie token, sliding its idle expiry; None when missing or expired.

    One plain row read on every request (no ORM loading: this is the hottest query of the app);
    the user comes back as a detached `User` carrying id, name, role, domains and active."""
    if not token:
        return None
    now = utcnow()
    th = _token_hash(token)
    with db.quick_read() as conn:
        row = conn.execute(_Q_SESSION, {"th": th}).first()
    if row is None:
        return None
    sid, csrf, created, last_seen, expires, uid, name, role, domains, active = row
    hard_limit = created + dt.timedelta(hours=policy.max_hours)
    if now >= expires or now >= hard_limit or not active:
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.id == sid))
        return None
    if (now - last_seen).total_seconds() > 60:  # slide the idle window, at most once a minute
        with db.write() as s:
            live = s.get(AuthSession, sid)
            if live is not None:
                live.last_seen = now
                live.expires_at = min(now + dt.timedelta(minutes=policy.idle_minutes), hard_limit)
    user = User(id=uid, username=name, role=role, domains=list(domains or []), active=active)
    return SessionInfo(user=user, csrf=csrf, session_id=sid)


def end_session(db: Database, token: str | None) -> None:
    if token:
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.token_hash == _token_hash(token)))


def csrf_ok(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected, given or "")
