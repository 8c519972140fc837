"""Accounts, password hashing (argon2id), server-side sessions with CSRF tokens, login rate limit."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass

from sqlalchemy import bindparam, delete, func, select

from assay.errors import UsageError
from assay.workbench.db import Database
from assay.workbench.models import ROLES, AuthSession, LoginAttempt, User, utcnow

__all__ = [
    "AuthPolicy",
    "LoginRateLimited",
    "authenticate",
    "create_user",
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


def _hasher(fast: bool = False):  # type: ignore[no-untyped-def]
    from argon2 import PasswordHasher

    if fast:  # for tests and demos only: the parameters are stored in the hash itself
        return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    return PasswordHasher()


def hash_password(password: str, *, fast: bool = False) -> str:
    if len(password) < 8:
        raise UsageError("a password needs at least 8 characters")
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
    """Session lifetime and login rate limit."""

    idle_minutes: int = 8 * 60
    max_hours: int = 24
    max_failures_per_user: int = 5
    max_failures_per_ip: int = 30
    failure_window_minutes: int = 15


class LoginRateLimited(Exception):
    pass


def create_user(
    db: Database,
    username: str,
    password: str,
    role: str = "annotator",
    *,
    domains: list[str] | None = None,
    fast_hash: bool = False,
) -> int:
    """Create an account; returns its id. Raises UsageError on a bad role or a taken name."""
    username = username.strip()
    if not username or len(username) > 100:
        raise UsageError("a username needs 1 to 100 characters")
    if role not in ROLES:
        raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
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


def _failures(db: Database, key: str, since: dt.datetime) -> int:
    with db.read() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(LoginAttempt)
                .where(LoginAttempt.key == key, LoginAttempt.at >= since)
            )
            or 0
        )


def authenticate(
    db: Database, username: str, password: str, ip: str, policy: AuthPolicy
) -> User | None:
    """Check a login. Raises LoginRateLimited after too many recent failures (per user and per
    client address); returns the user on success, None on a wrong name or password."""
    global _DUMMY_HASH
    now = utcnow()
    since = now - dt.timedelta(minutes=policy.failure_window_minutes)
    ukey, ikey = f"user:{username.lower()}", f"ip:{ip}"
    if (
        _failures(db, ukey, since) >= policy.max_failures_per_user
        or _failures(db, ikey, since) >= policy.max_failures_per_ip
    ):
        raise LoginRateLimited()
    with db.read() as s:
        user = s.scalar(select(User).where(User.username == username, User.active.is_(True)))
    if user is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hash_password("not-a-real-password")
        verify_password(_DUMMY_HASH, password)
        ok = False
    else:
        ok = verify_password(user.password_hash, password)
    with db.write() as s:
        if ok:
            s.execute(delete(LoginAttempt).where(LoginAttempt.key == ukey))
        else:
            s.add_all([LoginAttempt(key=ukey, at=now), LoginAttempt(key=ikey, at=now)])
        s.execute(delete(LoginAttempt).where(LoginAttempt.at < now - dt.timedelta(days=1)))
    return user if ok else None


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
    select(AuthSession, User)
    .join(User, User.id == AuthSession.user_id)
    .where(AuthSession.token_hash == bindparam("th"))
)


def resolve_session(db: Database, token: str | None, policy: AuthPolicy) -> SessionInfo | None:
    """The live session of a cookie token, sliding its idle expiry; None when missing or expired."""
    if not token:
        return None
    now = utcnow()
    th = _token_hash(token)
    with db.read() as s:
        row = s.execute(_Q_SESSION, {"th": th}).first()
    if row is None:
        return None
    sess, user = row
    hard_limit = sess.created_at + dt.timedelta(hours=policy.max_hours)
    if now >= sess.expires_at or now >= hard_limit or not user.active:
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.id == sess.id))
        return None
    if (now - sess.last_seen).total_seconds() > 60:  # slide the idle window, at most once a minute
        with db.write() as s:
            live = s.get(AuthSession, sess.id)
            if live is not None:
                live.last_seen = now
                live.expires_at = min(now + dt.timedelta(minutes=policy.idle_minutes), hard_limit)
    return SessionInfo(user=user, csrf=sess.csrf_token, session_id=sess.id)


def end_session(db: Database, token: str | None) -> None:
    if token:
        with db.write() as s:
            s.execute(delete(AuthSession).where(AuthSession.token_hash == _token_hash(token)))


def csrf_ok(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected, given or "")
