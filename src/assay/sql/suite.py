"""Test-suite databases: K variants of a database that tell apart queries which agree by accident
on the original (in the spirit of Spider's test-suite accuracy, Zhong, Yu and Klein 2020).

A variant keeps the schema and every invariant that holds inside one entity (a company and every
row that hangs off it through foreign keys), and changes what a query may silently depend on.
The column roles of the `DatabaseSchema` say what may change. Each variant, from its own seeded
generator:

1. **clones** some entities (at least one): every row of the entity, with new keys, references
   remapped inside the clone, labels suffixed -- so names that were unique are no longer the only
   ones of their kind, and a join on the wrong column multiplies rows; and adds one bare entity
   (its root row alone), so an inner join that should be an outer one loses a row;
2. **shifts the dates** of some entities by 1 to 11 months (month ends stay month ends; `month`
   columns move too) -- fiscal years keep their names, so a fiscal year derived from dates, or a
   date range copied from the original, no longer finds the same rows;
3. **scales the measures** of some entities by one factor each -- sums inside an entity stay
   consistent, orders between entities change;
4. **resamples category codes** (`domain`, which may list codes the data never holds) and flips
   some nullable dates to or from NULL -- a filter that was redundant on the original, because
   the value it excludes was absent, starts to matter;
5. **deletes** some rows of `deletable` tables, with every row that references them.

The gold result on a variant is the gold query's result on it: the gold query is what keeps its
meaning. A system's query passes test-suite matching when it matches the gold on the original and
on every variant.

The suite lives beside the database: ``warehouse.duckdb`` -> ``warehouse.suite/`` holding
``variant-01.duckdb`` ... and ``suite.json`` (seed, k, the source's SHA-256, what each variant
changed). `load_suite` refuses a suite built from another version of the database.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import json_loads, sha256_file, write_text_atomic
from assay.errors import UsageError
from assay.report import ReportMixin, Tabular
from assay.sql.schema import DatabaseSchema, Table, schema_path_for
from assay.sql.store import read_tables, write_duckdb

__all__ = [
    "Suite",
    "SuiteSummary",
    "build_suite",
    "load_suite",
    "perturb",
    "shift_date",
    "suite_dir_for",
]

SUITE_VERSION = 1
P_CLONE = 0.35
P_SHIFT = 0.5
P_SCALE = 0.5
P_CATEGORY = 0.15
P_NULL_FLIP = 0.1
P_DELETE = 0.08

Rows = dict[str, list[dict[str, Any]]]


def suite_dir_for(database: str | Path) -> Path:
    p = Path(database)
    return p.with_name(p.stem + ".suite")


def shift_date(d: dt.date, months: int) -> dt.date:
    """`d` moved by `months`; a month end stays a month end, other days are clipped."""
    last = calendar.monthrange(d.year, d.month)[1]
    m0 = d.year * 12 + (d.month - 1) + months
    y, m = divmod(m0, 12)
    days = calendar.monthrange(y, m + 1)[1]
    day = days if d.day == last else min(d.day, days)
    return dt.date(y, m + 1, day)


def _as_date(v: Any) -> dt.date | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    return dt.date.fromisoformat(str(v))


class _Owners:
    """Which root entity owns each row: followed through reference columns to the root table."""

    def __init__(self, schema: DatabaseSchema, rows: Rows):
        self.schema = schema
        self.rows = rows
        self.roots = {t.entity for t in schema.tables if t.entity}
        if len(self.roots) > 1:
            raise UsageError(f"a suite needs one entity table; the schema names {self.roots}")
        self.root = next(iter(self.roots)) if self.roots else None
        self.order = self._topological()

    def _refs(self, t: Table) -> list[tuple[str, str, str]]:
        out = []
        for c in t.columns:
            if c.role == "ref" and c.references:
                table, col = c.references.split(".", 1)
                out.append((c.name, table, col))
        return out

    def _topological(self) -> list[Table]:
        done: list[Table] = []
        seen: set[str] = set()
        pending = list(self.schema.tables)
        while pending:
            progressed = False
            for t in list(pending):
                deps = {tb for _, tb, _ in self._refs(t) if tb != t.name}
                if deps <= seen:
                    done.append(t)
                    seen.add(t.name)
                    pending.remove(t)
                    progressed = True
            if not progressed:
                raise UsageError(
                    "the schema's references form a cycle: " + ", ".join(t.name for t in pending)
                )
        return done

    def owner_path(self, t: Table) -> tuple[str, str, str] | None:
        """The reference column that leads toward the root: (column, table, referenced col)."""
        if self.root is None or t.entity != self.root or t.name == self.root:
            return None
        refs = self._refs(t)
        for r in refs:
            if r[1] == self.root:
                return r
        for r in refs:
            ref_table = self.schema.table(r[1])
            if r[1] != t.name and ref_table.entity == self.root:
                return r
        return None

    def owners(self) -> dict[str, list[Any]]:
        """Per table, the root key owning each row (None for shared tables)."""
        out: dict[str, list[Any]] = {}
        key_owner: dict[str, dict[Any, Any]] = {}
        for t in self.order:
            rows = self.rows[t.name]
            if t.entity != self.root or self.root is None:
                out[t.name] = [None] * len(rows)
                continue
            key = t.key.name if t.key else None
            if t.name == self.root:
                own = [r[key] for r in rows] if key else [None] * len(rows)
            else:
                path = self.owner_path(t)
                if path is None:
                    own = [None] * len(rows)
                else:
                    col, table, _ = path
                    if table == self.root:
                        own = [r[col] for r in rows]
                    else:
                        m = key_owner.get(table, {})
                        own = [m.get(r[col]) for r in rows]
            out[t.name] = own
            if key:
                key_owner[t.name] = {r[key]: o for r, o in zip(rows, own, strict=True)}
        return out


def _next_keys(rows: Rows, schema: DatabaseSchema) -> dict[str, int]:
    out = {}
    for t in schema.tables:
        if t.key is not None and t.key.type in ("INTEGER", "BIGINT"):
            out[t.name] = max((int(r[t.key.name]) for r in rows[t.name]), default=0) + 1
    return out


def perturb(
    schema: DatabaseSchema, rows: Rows, rng: np.random.Generator
) -> tuple[Rows, dict[str, Any]]:
    """One variant of `rows` (not modified) and a summary of what changed (module docs)."""
    rows = {k: [dict(r) for r in v] for k, v in rows.items()}
    owners_of = _Owners(schema, rows)
    root = owners_of.root
    log: dict[str, Any] = {"clones": 0, "shifted": {}, "scaled": {}, "resampled": 0, "deleted": 0}
    if root is None:
        return rows, log
    root_table = schema.table(root)
    assert root_table.key is not None
    root_key = root_table.key.name

    # 1. clones of whole entities
    nxt = _next_keys(rows, schema)
    roots = [r[root_key] for r in rows[root]]
    picks = [k for k in roots if rng.random() < P_CLONE] or [roots[int(rng.integers(len(roots)))]]
    owners = owners_of.owners()
    snapshot = {name: list(v) for name, v in rows.items()}
    for n, k in enumerate(picks, start=1):
        mapping: dict[str, dict[Any, Any]] = {}
        for t in owners_of.order:
            if t.entity != root or t.key is None:
                continue
            mine = [r for r, o in zip(snapshot[t.name], owners[t.name], strict=True) if o == k]
            kmap: dict[Any, Any] = {}
            for r in mine:
                kmap[r[t.key.name]] = nxt[t.name]
                nxt[t.name] += 1
            mapping[t.name] = kmap
            for r in mine:
                new = dict(r)
                for c in t.columns:
                    if c.role == "key":
                        new[c.name] = kmap[r[c.name]]
                    elif c.role == "ref" and c.references and new[c.name] is not None:
                        target = c.references.split(".", 1)[0]
                        if target in mapping:
                            new[c.name] = mapping[target].get(new[c.name], new[c.name])
                    elif c.role == "label" and new[c.name] is not None:
                        new[c.name] = f"{new[c.name]}-{n}"
                rows[t.name].append(new)
        log["clones"] += 1
    # and one bare entity: the root row alone, nothing hangs off it yet
    bare = dict(rows[root][int(rng.integers(len(roots)))])
    for c in root_table.columns:
        if c.role == "key":
            bare[c.name] = nxt[root]
        elif c.role == "label" and bare[c.name] is not None:
            bare[c.name] = f"{bare[c.name]}-new"
    nxt[root] += 1
    rows[root].append(bare)
    log["bare"] = 1
    owners = owners_of.owners()

    # 2-3. per entity: shift dates, scale measures
    for k in [r[root_key] for r in rows[root]]:
        months = int(rng.integers(1, 12)) if rng.random() < P_SHIFT else 0
        factor = float(rng.uniform(0.5, 2.0)) if rng.random() < P_SCALE else 1.0
        if months:
            log["shifted"][str(k)] = months
        if factor != 1.0:
            log["scaled"][str(k)] = round(factor, 4)
        if not months and factor == 1.0:
            continue
        for t in schema.tables:
            if t.entity != root:
                continue
            for r, o in zip(rows[t.name], owners[t.name], strict=True):
                if o != k:
                    continue
                for c in t.columns:
                    v = r[c.name]
                    if v is None:
                        continue
                    if months and c.role == "date":
                        d = _as_date(v)
                        assert d is not None
                        r[c.name] = shift_date(d, months)
                    elif months and c.role == "month":
                        r[c.name] = (int(v) - 1 + months) % 12 + 1
                    elif factor != 1.0 and c.role == "measure":
                        r[c.name] = float(v) * factor

    # 4. category codes and nullable dates
    for t in schema.tables:
        if t.entity != root:
            continue
        for c in t.columns:
            if c.role == "category" and c.domain:
                for r in rows[t.name]:
                    if rng.random() < P_CATEGORY:
                        r[c.name] = c.domain[int(rng.integers(len(c.domain)))]
                        log["resampled"] += 1
            if c.role == "date" and c.nullable:
                present = [r[c.name] for r in rows[t.name] if r[c.name] is not None]
                for r in rows[t.name]:
                    if rng.random() < P_NULL_FLIP:
                        if r[c.name] is not None:
                            r[c.name] = None
                        elif present:
                            r[c.name] = present[int(rng.integers(len(present)))]
                        log["resampled"] += 1

    # 5. deletions, with every row that references a deleted one
    gone: dict[str, set[Any]] = {t.name: set() for t in schema.tables}
    for t in schema.tables:
        if t.deletable and t.key is not None:
            for r in rows[t.name]:
                if rng.random() < P_DELETE:
                    gone[t.name].add(r[t.key.name])
    changed = True
    while changed:
        changed = False
        for t in schema.tables:
            if t.key is None:
                continue
            for r in rows[t.name]:
                kv = r[t.key.name]
                if kv in gone[t.name]:
                    continue
                for c in t.columns:
                    if c.role == "ref" and c.references and r[c.name] is not None:
                        target = c.references.split(".", 1)[0]
                        if r[c.name] in gone.get(target, set()):
                            gone[t.name].add(kv)
                            changed = True
                            break
    for t in schema.tables:
        if t.key is None or not gone[t.name]:
            continue
        before = len(rows[t.name])
        rows[t.name] = [r for r in rows[t.name] if r[t.key.name] not in gone[t.name]]
        log["deleted"] += before - len(rows[t.name])
    return rows, log


@dataclass
class Suite:
    """A database's test suite: its variant files (absolute paths) and its manifest."""

    source: Path
    variants: list[Path]
    manifest: dict[str, Any]


@dataclass
class SuiteSummary(ReportMixin):
    source: str
    directory: str
    variants: int
    seed: int
    changes: list[dict[str, Any]] = field(default_factory=list)

    def tabular(self) -> Tabular:
        return Tabular(
            title=f"test suite of {self.source}: {self.variants} variants (seed {self.seed})",
            header=["variant", "clones", "shifted", "scaled", "resampled", "deleted"],
            rows=[
                [
                    c["file"],
                    str(c["clones"]),
                    str(len(c["shifted"])),
                    str(len(c["scaled"])),
                    str(c["resampled"]),
                    str(c["deleted"]),
                ]
                for c in self.changes
            ],
        )


def build_suite(
    database: str | Path,
    schema: DatabaseSchema | None = None,
    *,
    k: int = 8,
    seed: int = 0,
    out_dir: str | Path | None = None,
) -> SuiteSummary:
    """Write `k` variants of the DuckDB file `database` (module docs) into its suite folder
    (replaced whole, atomically). `schema` defaults to the ``.schema.json`` beside it."""
    if k < 1:
        raise UsageError("a test suite needs at least one variant (k >= 1)")
    database = Path(database)
    if not database.is_file():
        raise UsageError(f"{database}: database file not found")
    if schema is None:
        sp = schema_path_for(database)
        if not sp.is_file():
            raise UsageError(f"{database}: no schema beside it ({sp.name}); pass one")
        schema = DatabaseSchema.load(sp)
    target = Path(out_dir) if out_dir is not None else suite_dir_for(database)
    rows = read_tables(database, schema)
    stage = Path(tempfile.mkdtemp(prefix=".suite-", dir=target.parent))
    changes: list[dict[str, Any]] = []
    try:
        for i in range(1, k + 1):
            variant, log = perturb(schema, rows, np.random.default_rng([seed, i]))
            name = f"variant-{i:02d}.duckdb"
            write_duckdb(stage / name, schema, variant)
            changes.append({"file": name, **log})
        manifest = {
            "suite_version": SUITE_VERSION,
            "source": database.name,
            "source_sha256": sha256_file(database),
            "k": k,
            "seed": seed,
            "variants": changes,
        }
        write_text_atomic(stage / "suite.json", json.dumps(manifest, indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)
        stage.replace(target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return SuiteSummary(str(database), str(target), k, seed, changes)


_SUITES: dict[tuple[str, int, int, int], Suite] = {}


def load_suite(database: str | Path) -> Suite:
    """The suite beside `database`; a `UsageError` says how to build it when it is missing or
    was built from another version of the database."""
    database = Path(database).resolve()
    d = suite_dir_for(database)
    mp = d / "suite.json"
    if not mp.is_file():
        raise UsageError(
            f"{database.name}: no test suite beside it ({d.name}/); build it with "
            f"`assay sql suite {database}`"
        )
    st = database.stat()
    key = (str(mp), mp.stat().st_mtime_ns, st.st_mtime_ns, st.st_size)
    if key in _SUITES:
        return _SUITES[key]
    manifest = json_loads(mp.read_text(encoding="utf-8"), mp)
    if manifest.get("source_sha256") != sha256_file(database):
        raise UsageError(
            f"{d}: built from another version of {database.name}; rebuild it with "
            f"`assay sql suite {database}`"
        )
    files = [d / v["file"] for v in manifest.get("variants", [])]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"{d}: variant files missing: {', '.join(missing)}")
    suite = Suite(database, files, manifest)
    _SUITES[key] = suite
    return suite


def describe(changes: Iterable[dict[str, Any]]) -> str:
    return "; ".join(
        f"{c['file']}: {c['clones']} clones, {len(c['shifted'])} shifted, "
        f"{len(c['scaled'])} scaled, {c['resampled']} resampled, {c['deleted']} deleted"
        for c in changes
    )
