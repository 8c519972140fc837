"""A database's schema as systems and the test suite see it: tables, columns, keys, the roles
that say how a column may be perturbed, views, and the versioned business glossary.

`DatabaseSchema` is written beside a warehouse as ``<stem>.schema.json``. A text-to-SQL system is
handed it (as an object, as JSON over HTTP, or as the text of `to_prompt()` for a model); the test
suite (`assay.sql.suite`) reads the column roles to build database variants that keep the
schema and the meaning of every gold query:

``key``       the table's primary key (new values for cloned rows)
``ref``       a foreign key (``references`` = "table.column"), remapped inside a cloned entity
``measure``   a number that may be scaled
``category``  a code from `domain` (which may list values the data never holds) that may be
              resampled
``date``      a date that may be shifted with its entity (month ends stay month ends)
``month``     a month number (1-12) that moves with the entity's dates
``label``     a name that must stay unique (clones get a suffix)
``attribute`` anything else: copied as is

A table's `entity` names the root table whose rows own it (``companies``): cloning a company
clones every row that hangs off it through foreign keys. A table without an entity (a shared
dimension such as ``line_items``) is never perturbed. `deletable` tables may lose rows (their
dependants go with them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import json_loads
from assay.errors import DataError
from assay.sql.safety import transpile

__all__ = [
    "COLUMN_ROLES",
    "Column",
    "DatabaseSchema",
    "Glossary",
    "GlossaryTerm",
    "Table",
    "View",
    "schema_path_for",
]

COLUMN_ROLES = ("key", "ref", "measure", "category", "date", "month", "label", "attribute")
_TYPES = ("INTEGER", "BIGINT", "DOUBLE", "TEXT", "DATE", "BOOLEAN")


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str = ""
    role: str = "attribute"
    references: str | None = None
    nullable: bool = True
    domain: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"column {self.name}: type {self.type!r} is not one of {_TYPES}")
        if self.role not in COLUMN_ROLES:
            raise ValueError(f"column {self.name}: role {self.role!r} is not one of {COLUMN_ROLES}")
        if (self.role == "ref") != (self.references is not None):
            raise ValueError(f"column {self.name}: a ref column names what it references")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "role": self.role}
        if self.description:
            out["description"] = self.description
        if self.references:
            out["references"] = self.references
        if not self.nullable:
            out["nullable"] = False
        if self.domain:
            out["domain"] = list(self.domain)
        return out


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    description: str = ""
    entity: str | None = None
    deletable: bool = False

    @property
    def key(self) -> Column | None:
        return next((c for c in self.columns if c.role == "key"), None)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name}.{name}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "columns": [c.to_dict() for c in self.columns],
        }
        if self.entity:
            out["entity"] = self.entity
        if self.deletable:
            out["deletable"] = True
        return out


@dataclass(frozen=True)
class View:
    """A view, defined by a query in the schema's dialect (transpiled for other engines)."""

    name: str
    query: str
    description: str = ""
    columns: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "columns": list(self.columns),
            "query": self.query,
        }


@dataclass(frozen=True)
class GlossaryTerm:
    """One business definition: what a term means, and how to write it in SQL."""

    term: str
    definition: str
    sql: str
    applies_to: str | None = None  # e.g. "Banking": the definition for that industry only
    since: str = "1"  # glossary version that introduced this definition

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "term": self.term,
            "definition": self.definition,
            "sql": self.sql,
            "since": self.since,
        }
        if self.applies_to:
            out["applies_to"] = self.applies_to
        return out


@dataclass(frozen=True)
class Glossary:
    """The business glossary at `version`; `history` keeps the definitions it replaced."""

    version: str
    terms: tuple[GlossaryTerm, ...]
    history: tuple[dict[str, Any], ...] = ()

    def lookup(self, term: str, applies_to: str | None = None) -> GlossaryTerm:
        for t in self.terms:
            if t.term == term and (t.applies_to is None or t.applies_to == applies_to):
                return t
        raise KeyError(term)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "terms": [t.to_dict() for t in self.terms],
            "history": list(self.history),
        }


@dataclass(frozen=True)
class DatabaseSchema:
    """Tables, views and the glossary of one database (see the module docs)."""

    name: str
    tables: tuple[Table, ...]
    views: tuple[View, ...] = ()
    glossary: Glossary | None = None
    dialect: str = "duckdb"
    notes: tuple[str, ...] = field(default_factory=tuple)

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    # ---------------------------------------------------------------- DDL

    def ddl(self, engine: str = "duckdb") -> list[str]:
        """CREATE TABLE statements (keys and references declared) then CREATE VIEW statements,
        for ``duckdb``, ``sqlite`` or ``postgres``."""
        out: list[str] = []
        for t in self.tables:
            cols: list[str] = []
            for c in t.columns:
                typ = c.type
                if engine == "sqlite" and typ in ("DATE", "BOOLEAN"):
                    typ = "TEXT" if typ == "DATE" else "INTEGER"
                if engine == "postgres" and typ == "DOUBLE":
                    typ = "DOUBLE PRECISION"
                spec = f"{c.name} {typ}"
                if c.role == "key":
                    spec += " PRIMARY KEY"
                elif not c.nullable:
                    spec += " NOT NULL"
                cols.append(spec)
            out.append(f"CREATE TABLE {t.name} ({', '.join(cols)})")
        for v in self.views:
            out.append(f"CREATE VIEW {v.name} AS {transpile(v.query, self.dialect, engine)}")
        return out

    # ---------------------------------------------------------------- what systems see

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dialect": self.dialect,
            "tables": [t.to_dict() for t in self.tables],
            "views": [v.to_dict() for v in self.views],
            "glossary": None if self.glossary is None else self.glossary.to_dict(),
            "notes": list(self.notes),
        }

    def to_prompt(self) -> str:
        """The schema as text for a model: tables with typed columns, views, glossary."""
        lines = [f"Database {self.name} ({self.dialect} SQL).", ""]
        for t in self.tables:
            lines.append(f"TABLE {t.name} -- {t.description}".rstrip(" -"))
            for c in t.columns:
                extra = f" REFERENCES {c.references}" if c.references else ""
                key = " PRIMARY KEY" if c.role == "key" else ""
                dom = f" (codes: {', '.join(map(str, c.domain))})" if c.domain else ""
                desc = f" -- {c.description}" if c.description else ""
                lines.append(f"  {c.name} {c.type}{key}{extra}{dom}{desc}")
        for v in self.views:
            lines.append(f"VIEW {v.name}({', '.join(v.columns)}) -- {v.description}")
        if self.glossary is not None:
            lines += ["", f"GLOSSARY version {self.glossary.version}:"]
            for g in self.glossary.terms:
                scope = f" [{g.applies_to}]" if g.applies_to else ""
                lines.append(f"  {g.term}{scope}: {g.definition} SQL: {g.sql}")
        lines += [f"NOTE: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DatabaseSchema:
        tables = tuple(
            Table(
                t["name"],
                tuple(
                    Column(
                        c["name"],
                        c["type"],
                        c.get("description", ""),
                        c.get("role", "attribute"),
                        c.get("references"),
                        c.get("nullable", True),
                        tuple(c.get("domain", ())),
                    )
                    for c in t["columns"]
                ),
                t.get("description", ""),
                t.get("entity"),
                bool(t.get("deletable", False)),
            )
            for t in d["tables"]
        )
        views = tuple(
            View(v["name"], v["query"], v.get("description", ""), tuple(v.get("columns", ())))
            for v in d.get("views", [])
        )
        g = d.get("glossary")
        glossary = (
            None
            if g is None
            else Glossary(
                str(g["version"]),
                tuple(
                    GlossaryTerm(
                        t["term"],
                        t["definition"],
                        t["sql"],
                        t.get("applies_to"),
                        str(t.get("since", "1")),
                    )
                    for t in g["terms"]
                ),
                tuple(g.get("history", ())),
            )
        )
        return cls(
            d["name"],
            tables,
            views,
            glossary,
            d.get("dialect", "duckdb"),
            tuple(d.get("notes", ())),
        )

    @classmethod
    def load(cls, path: str | Path) -> DatabaseSchema:
        """Read a ``.schema.json``; a `DataError` names the file when it is not one."""
        p = Path(path)
        try:
            data = json_loads(p.read_text(encoding="utf-8"), p)
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not a database schema: {exc}", file=p) from None


def schema_path_for(database: str | Path) -> Path:
    """Where a database's schema lives: ``warehouse.duckdb`` -> ``warehouse.schema.json``."""
    p = Path(database)
    return p.with_name(p.stem + ".schema.json")
