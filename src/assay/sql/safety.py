"""Is a query valid in its dialect, and is it read-only? Decided on sqlglot's syntax tree, before
anything runs.

`parse_query(sql, dialect)` parses one statement (a trailing semicolon is fine; two statements
are not). `check_safe(sql, dialect)` refuses anything that is not a plain read:

- the statement must be a query (SELECT, set operations over SELECTs, VALUES); DESCRIBE, SHOW,
  PRAGMA, SET, ATTACH/DETACH, COPY, INSTALL/LOAD, EXPORT, VACUUM, CALL and every statement sqlglot
  cannot parse (it falls back to an opaque command) are refused;
- no node anywhere in the tree may write or change state: INSERT, UPDATE, DELETE, MERGE, CREATE,
  DROP, ALTER, TRUNCATE, GRANT/REVOKE, transactions, SELECT ... INTO, FOR UPDATE locks (a
  data-modifying CTE such as ``WITH d AS (DELETE ... RETURNING *) SELECT ...`` is caught here);
- no function that reaches outside the database or changes it: file and network readers
  (``read_csv``, ``read_parquet``, ``read_json``, ``glob``, anything named ``read_*`` or
  ``*_scan``, ``sqlite_attach``, ``postgres_scan``), ``query()``/``query_table()`` (they run a
  string as SQL), ``getenv``, ``load_extension``, ``readfile``/``writefile``, PostgreSQL's
  ``pg_read_file``, the large objects (``lo_*``), ``dblink``, ``set_config``,
  ``nextval``/``setval``, ``pg_sleep``, the ``*_to_xml`` family (``query_to_xml`` runs a
  string as SQL, ``table_to_xml`` dumps a table named by a string), the server's folders, logs,
  WAL and replication (``pg_ls_*``, ``pg_current_logfile``, ``pg_switch_wal``, ...),
  ``pg_notify``, ``txid_current``, ``inet_client_addr`` and its siblings,
  ``sqlite_source_id``, and DuckDB's secret and settings catalogs;
- no function that builds a large value from a small query or reads the server's state: the
  memory bombs ``repeat``, ``lpad``/``rpad``, ``space``, ``printf``/``format``, ``bar``,
  ``zeroblob``/``randomblob``, ``list_resize``/``array_resize``, and ``write_log``,
  ``getvariable``, ``version``, SQLite's ``fts3_tokenizer``; nor the catalog that shows the
  server's files, settings and sessions: every function, table or schema named ``pg_*``,
  ``duckdb_*`` or ``pragma_*`` (``pg_settings``, ``pg_catalog.pg_proc``, ``duckdb_databases``,
  ``pragma_database_list()``, any letter case), but for the few `_CATALOG_ALLOWED` names
  (``pg_typeof``), SQLite's ``dbstat``, and DuckDB's ``SHOW``, ``DESCRIBE`` and ``SUMMARIZE``
  written as a subquery (``FROM (SHOW TABLES)``);
- Unicode escapes are read as PostgreSQL reads them: ``U&"\\0067etenv"('HOME')`` is checked as
  ``getenv('HOME')`` (and ``U&'...'`` strings, with ``UESCAPE``, likewise);
- no table name that is a path or a URL (DuckDB reads ``FROM 'data.parquet'`` as a file), and no
  table function other than ``generate_series``, ``range`` and ``unnest``;
- no nesting deeper than `MAX_NESTING` levels (parentheses, or subexpressions in the parsed tree):
  a deeper query is refused with that reason instead of exhausting the parser's stack.

The check is on the syntax tree, so it does not depend on what the database would allow; the
connections are read-only as well (`assay.sql.engine`), so a query that slips through cannot
write either.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from assay.sql._deps import need_sqlglot

__all__ = [
    "MAX_NESTING",
    "Parsed",
    "SafetyVerdict",
    "SqlParseError",
    "check_dialect",
    "check_safe",
    "normalise",
    "parse_query",
    "transpile",
]


class SqlParseError(ValueError):
    """The text is not one statement of the dialect (the message says where)."""


_FORBIDDEN_NODES = (
    "Insert",
    "Update",
    "Delete",
    "Merge",
    "Create",
    "Drop",
    "Alter",
    "AlterTable",
    "TruncateTable",
    "Grant",
    "Revoke",
    "Transaction",
    "Commit",
    "Rollback",
    "Into",
    "Lock",
    "Copy",
    "Attach",
    "Detach",
    "Pragma",
    "Set",
    "Install",
    "Command",
    "LoadData",
    "Export",
    "Use",
    "Kill",
    "Refresh",
    "Cache",
    "Uncache",
    "Analyze",
    "Comment",
    "Describe",
    "Show",
    "Summarize",
)

_FORBIDDEN_FUNCTIONS = frozenset(
    {
        "glob",
        "getenv",
        "query",
        "query_table",
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fsdir",
        "sqlite_attach",
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "dblink",
        "dblink_exec",
        "dblink_connect",
        "set_config",
        "current_setting",
        "nextval",
        "setval",
        "duckdb_secrets",
        "which_secret",
        "duckdb_settings",
        "duckdb_extensions",
        "install_extension",
        "load",
        "checkpoint",
        "force_checkpoint",
        "loread",
        "lowrite",
        "pg_current_logfile",
        "pg_switch_wal",
        "pg_rotate_logfile",
        "pg_create_restore_point",
        "pg_notify",
        "pg_promote",
        "pg_log_backend_memory_contexts",
        "pg_logical_emit_message",
        "pg_export_snapshot",
        "pg_import_system_collations",
        "txid_current",
        "pg_current_xact_id",
        "inet_server_addr",
        "inet_server_port",
        "inet_client_addr",
        "inet_client_port",
        "sqlite_source_id",
        "sqlite_compileoption_get",
        "sqlite_compileoption_used",
        "pg_postmaster_start_time",
        "pg_conf_load_time",
        "pg_backend_pid",
        "pg_config",
    }
)
_COSTLY_FUNCTIONS = frozenset(
    {  # a large value from a small query (memory bombs), or the server's own state
        "repeat",
        "pad",
        "lpad",
        "rpad",
        "space",
        "printf",
        "format",
        "bar",
        "zeroblob",
        "randomblob",
        "list_resize",
        "array_resize",
        "write_log",
        "getvariable",
        "version",
        "current_version",
        "fts3_tokenizer",
    }
)
MAX_NESTING = 40
"""Deepest nesting a query may have: parentheses in its text, and the parsed tree's depth
divided by `_TREE_PER_LEVEL` (a level of parentheses is a few tree nodes)."""
_TREE_PER_LEVEL = 8
_OWN_STACK_FROM = 8  # parentheses from which a query is parsed on a stack of its own
_CACHED_TEXT = 4000  # verdicts are remembered for query texts up to this length only
_CATALOG = re.compile(r"^(pg_|duckdb_|pragma_)")
"""The catalog's prefixes: a function, table or schema so named shows the server's state
(settings, files, sessions, statistics) and is refused unless `_CATALOG_ALLOWED` names it."""
_CATALOG_ALLOWED = frozenset({"pg_typeof"})
_STATE_TABLES = frozenset({"dbstat"})  # catalog views outside the prefixes (SQLite's pages)
_STATE_KEYWORDS = frozenset({"show", "desc", "describe", "summarize"})
"""DuckDB runs ``(SHOW TABLES)``, ``(DESC t)`` as a subquery; sqlglot reads the keyword as a
table or column name, unquoted."""
_FORBIDDEN_PATTERNS = (
    re.compile(r"^read_"),
    re.compile(r"_scan$"),
    re.compile(r"^(http|s3|gcs)"),
    # PostgreSQL: the *_to_xml family runs a string as SQL or dumps a table named by a string;
    # large objects; the server's folders, logs, WAL, replication and statistics resets
    re.compile(r"_to_xml"),
    re.compile(r"^lo_"),
    re.compile(r"^pg_ls_"),
    re.compile(r"^pg_stat_reset"),
    re.compile(r"replication_slot"),
    re.compile(r"^pg_(start|stop)_backup$|^pg_backup_(start|stop)$"),
)
_TABLE_FUNCTIONS = frozenset({"generate_series", "generateseries", "range", "unnest", "explode"})
_PATHLIKE = re.compile(r"[/\\:*?]|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|db|sqlite|duckdb|xlsx)$")

# sqlglot logs a warning when it falls back to an opaque command; the verdict says it instead
logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True)
class Parsed:
    """One parsed statement: the tree and the dialect it was read in."""

    tree: Any  # a sqlglot expression
    dialect: str

    def sql(self, dialect: str | None = None) -> str:
        """The statement written in `dialect` (default: its own), normalised by sqlglot."""
        return str(self.tree.sql(dialect=dialect or self.dialect))


@dataclass(frozen=True)
class SafetyVerdict:
    """`ok` when the query is a read that touches nothing outside the database."""

    ok: bool
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.ok


def check_dialect(dialect: str) -> str:
    """`dialect` if sqlglot knows it, else a `SqlParseError` (a ValueError) naming it."""
    need_sqlglot()
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(dialect)
    except ValueError as exc:
        raise SqlParseError(f"unknown SQL dialect {dialect!r}: {exc}") from None
    return dialect


def parse_query(sql: str, dialect: str = "duckdb") -> Parsed:
    """Parse exactly one statement in `dialect`; `SqlParseError` says what is wrong."""
    check_dialect(dialect)
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    if not isinstance(sql, str) or not sql.strip():
        raise SqlParseError("empty query")
    deepest = paren_depth(sql)
    if deepest > MAX_NESTING:
        raise SqlParseError(_too_deep(f"{deepest} levels of parentheses"))
    try:
        if deepest >= _OWN_STACK_FROM:
            trees = _parse_on_own_stack(sql, dialect)
        else:
            trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SqlParseError(f"does not parse as {dialect}: {first}") from None
    except RecursionError:
        raise SqlParseError(_too_deep("more levels than the parser can follow")) from None
    for t in trees:
        depth = tree_depth(t)
        if depth > MAX_NESTING * _TREE_PER_LEVEL:
            raise SqlParseError(_too_deep(f"a syntax tree {depth} nodes deep"))
    if not trees:
        raise SqlParseError("empty query")
    if len(trees) > 1:
        raise SqlParseError(f"{len(trees)} statements; a query is exactly one statement")
    return Parsed(trees[0], dialect)


def _parse_on_own_stack(sql: str, dialect: str) -> list[Any]:
    """sqlglot's trees for `sql`, parsed in a thread of its own. The parser recurses about 24
    frames per level of parentheses (`MAX_NESTING` levels take some 950 of Python's 1,000), so
    on the caller's stack whether a deep query parses depended on how deep the caller already
    was (a server's request thread, a test runner's worker); on a fresh stack it does not."""
    import sqlglot

    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["trees"] = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
        except BaseException as exc:  # handed to the caller as raised
            out["error"] = exc

    worker = threading.Thread(target=work, name="assay-sql-parse", daemon=True)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    trees: list[Any] = out["trees"]
    return trees


def _too_deep(what: str) -> str:
    return f"nested too deeply: {what} (at most {MAX_NESTING} levels)"


def paren_depth(sql: str) -> int:
    """The deepest nesting of parentheses in `sql`, outside string literals, quoted names and
    comments."""
    depth = deepest = 0
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"`":
            end = sql.find(ch, i + 1)
            while end != -1 and sql[end + 1 : end + 2] == ch:  # a doubled quote inside
                end = sql.find(ch, end + 2)
            i = n if end == -1 else end + 1
            continue
        if ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end + 1
            continue
        if ch == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
            continue
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth = max(0, depth - 1)
        i += 1
    return deepest


_UESCAPE = re.compile(r"\s*UESCAPE\s*'(.)'", re.IGNORECASE)


def decode_unicode_escapes(sql: str) -> str:
    r"""`sql` with its Unicode-escape names and strings (``U&"\0067etenv"``, ``U&'\+000061'``,
    ``UESCAPE '!'``) written plainly, as PostgreSQL reads them; unchanged when it has none. A
    bad escape is a `SqlParseError`."""
    if "&" not in sql:
        return sql
    out: list[str] = []
    i, n, last = 0, len(sql), 0
    while i < n:
        ch = sql[i]
        if ch in "'\"`" or sql.startswith(("--", "/*"), i):
            close = {"-": "\n", "/": "*/"}.get(ch, ch)
            end = sql.find(close, i + (2 if ch in "-/" else 1))
            while ch in "'\"`" and end != -1 and sql[end + 1 : end + 2] == ch:
                end = sql.find(ch, end + 2)
            if end == -1:
                break
            if ch in "'\"" and i >= 2 and sql[i - 2 : i].upper() == "U&":
                body = sql[i + 1 : end].replace(ch * 2, ch)
                esc = _UESCAPE.match(sql, end + 1)
                text = _unescape(body, esc.group(1) if esc else "\\")
                out.append(sql[last : i - 2] + ch + text.replace(ch, ch * 2) + ch)
                last = esc.end() if esc else end + 1
                i = last
                continue
            i = end + len(close)
            continue
        i += 1
    return "".join(out) + sql[last:] if out else sql


def _unescape(body: str, esc: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] != esc:
            out.append(body[i])
            i += 1
            continue
        if body[i + 1 : i + 2] == esc:
            out.append(esc)
            i += 2
            continue
        width = 7 if body[i + 1 : i + 2] == "+" else 4
        digits = body[i + 1 : i + 1 + width].lstrip("+")
        if len(digits) != 6 if width == 7 else len(digits) != 4:
            raise SqlParseError(f"bad Unicode escape: {body[i : i + 1 + width]}")
        try:
            out.append(chr(int(digits, 16)))
        except ValueError:
            raise SqlParseError(f"bad Unicode escape: {body[i : i + 1 + width]}") from None
        i += 1 + width
    return "".join(out)


def tree_depth(tree: Any) -> int:
    """The depth of a sqlglot tree, walked without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in node.iter_expressions())
    return deepest


def _function_name(node: Any) -> str | None:
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if isinstance(node, exp.Func):
        return str(node.sql_name()).lower()
    return None


def _state_name(name: str) -> bool:
    """A catalog name (`_CATALOG`, not allowed) or a state table."""
    return (bool(_CATALOG.match(name)) and name not in _CATALOG_ALLOWED) or name in _STATE_TABLES


def _forbidden_function(name: str) -> bool:
    return name in _FORBIDDEN_FUNCTIONS or any(p.search(name) for p in _FORBIDDEN_PATTERNS)


def safety_reasons(tree: Any) -> list[str]:
    """Why the statement `tree` is not a plain read ([] when it is)."""
    from sqlglot import exp

    reasons: list[str] = []
    if not isinstance(tree, (exp.Query, exp.Values)):
        reasons.append(f"not a query: a {type(tree).__name__.upper()} statement")
    forbidden = tuple(getattr(exp, n) for n in _FORBIDDEN_NODES if hasattr(exp, n))
    for node in tree.walk():
        if isinstance(node, forbidden):
            what = type(node).__name__.upper()
            if f"writes or changes state: {what}" not in reasons and node is not tree:
                reasons.append(f"writes or changes state: {what}")
            continue
        if (
            isinstance(node, exp.Identifier)
            and not node.quoted
            and str(node.name).lower() in _STATE_KEYWORDS
        ):
            reasons.append(f"reads the server's state: {str(node.name).upper()}")
        name = _function_name(node)
        if name is not None and _forbidden_function(name):
            reasons.append(f"reaches outside the database: {name}()")
        elif name is not None and _state_name(name):
            reasons.append(f"reads the server's state: {name}()")
        elif name is not None and name in _COSTLY_FUNCTIONS:
            reasons.append(f"builds a large value or reads the server's state: {name}()")
        if isinstance(node, exp.Table):
            this = node.this
            if isinstance(this, exp.Identifier):
                if _PATHLIKE.search(str(this.name)):
                    reasons.append(f"reads a file or URL as a table: {this.name!r}")
                for part in (this, node.args.get("db"), node.args.get("catalog")):
                    if isinstance(part, exp.Identifier) and _state_name(str(part.name).lower()):
                        reasons.append(f"reads the server's state: {str(part.name).lower()}")
            elif this is not None:
                fname = _function_name(this) or type(this).__name__.lower()
                if fname not in _TABLE_FUNCTIONS and not (
                    _forbidden_function(fname) or _state_name(fname)
                ):
                    reasons.append(f"table function not allowed: {fname}()")
    return list(dict.fromkeys(reasons))


def check_safe(sql: str, dialect: str = "duckdb") -> SafetyVerdict:
    """Is `sql` one read-only query (see the module docs)? A query that does not parse is not
    safe (its reason says why). Verdicts are remembered (the same text in the same dialect
    always gets the same one)."""
    if len(sql) > _CACHED_TEXT:
        return _verdict(sql, dialect)
    return _check_safe(sql, dialect)


@functools.lru_cache(maxsize=8192)
def _check_safe(sql: str, dialect: str) -> SafetyVerdict:
    return _verdict(sql, dialect)


def _verdict(sql: str, dialect: str) -> SafetyVerdict:
    try:
        parsed = parse_query(sql, dialect)
        reasons = safety_reasons(parsed.tree)
        decoded = decode_unicode_escapes(sql)
        if decoded != sql:  # PostgreSQL reads U&"\0067etenv" as getenv: check what it reads
            reasons = list(
                dict.fromkeys(reasons + safety_reasons(parse_query(decoded, dialect).tree))
            )
    except SqlParseError as exc:
        return SafetyVerdict(False, (str(exc),))
    except RecursionError:
        return SafetyVerdict(False, (_too_deep("more levels than the check can follow"),))
    return SafetyVerdict(not reasons, tuple(reasons))


def transpile(sql: str, read: str, write: str) -> str:
    """`sql` (one statement in `read`) written in `write`; unchanged when the dialects agree."""
    if read == write:
        return sql
    check_dialect(write)
    try:
        return parse_query(sql, read).sql(write)
    except RecursionError:
        raise SqlParseError(_too_deep("more levels than the writer can follow")) from None


def normalise(sql: str, dialect: str = "duckdb") -> str:
    """A canonical form of the query (sqlglot's optimiser's qualify-free normal printing):
    whitespace, keyword case and quoting made uniform, so two spellings of one query compare
    equal as text."""
    try:
        return parse_query(sql, dialect).sql()
    except RecursionError:
        raise SqlParseError(_too_deep("more levels than the writer can follow")) from None
