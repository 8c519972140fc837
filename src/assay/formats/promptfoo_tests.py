"""promptfoo test cases: a YAML list (``tests:`` of a promptfooconfig, or a tests file) where
each case has ``description`` (the entry's id), ``vars`` (``query``, and ``as_of`` when the
entry has one), ``assert`` (the reference answer as a ``factuality`` assertion, each key fact as
an ``llm-rubric`` with ``metric: key_fact``) and ``metadata`` (category and, unless
``--plain``, the whole entry as ``assay_entry``). Other assertions and vars are kept under the
entry's ``metadata`` on import. Needs PyYAML (the ``yaml`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import DataError, MissingExtraError
from assay.formats._base import ExportOptions, FormatSpec, RawImport, Record

_FLAT_META = ("id", "category", "answerable", "label_tier", "gold_chunk_ids", "assay_entry")


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:
        raise MissingExtraError("yaml", "promptfoo test files", "PyYAML") from exc
    return yaml


def _cases(path: Path) -> list[tuple[int, Any]]:
    yaml = _yaml()
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        raise DataError(f"bad YAML: {exc}", file=path, line=line) from None
    if isinstance(data, dict) and "tests" in data:
        items = next(v for k, v in node.value if k.value == "tests").value
        data = data["tests"]
    elif isinstance(data, list):
        items = node.value
    else:
        raise DataError("expected a list of test cases or 'tests:'", file=path, line=1)
    return [(n.start_mark.line + 1, case) for n, case in zip(items, data, strict=True)]


def _read(path: Path) -> RawImport:
    records: list[Record] = []
    for line, case in _cases(path):
        if not isinstance(case, dict):
            raise DataError("a test case must be a mapping", file=path, line=line)
        rec: dict[str, Any] = {}
        variables = case.get("vars") or {}
        meta = case.get("metadata") or {}
        if not isinstance(variables, dict) or not isinstance(meta, dict):
            raise DataError("vars and metadata are mappings", file=path, line=line, field="vars")
        rec.update(meta)
        for k, v in variables.items():
            rec["query" if k in ("query", "question", "input") else k] = v
        if case.get("description") and "id" not in rec:
            rec["id"] = case["description"]
        facts: list[str] = []
        other: list[Any] = []
        for a in case.get("assert") or []:
            if isinstance(a, dict) and a.get("type") == "factuality":
                rec["reference_answer"] = a.get("value")
            elif isinstance(a, dict) and a.get("metric") == "key_fact":
                facts.append(str(a.get("value")))
            else:
                other.append(a)
        if facts:
            rec["key_facts"] = facts
        if other:
            rec["promptfoo_asserts"] = other
        records.append((line, rec))
    return RawImport(records)


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    from assay._io import atomic_writer

    yaml = _yaml()
    cases: list[dict[str, Any]] = []
    for r in records:
        variables: dict[str, Any] = {"query": r["query"]}
        if r.get("as_of"):
            variables["as_of"] = r["as_of"]
        asserts: list[dict[str, Any]] = []
        if r.get("reference_answer") is not None:
            asserts.append({"type": "factuality", "value": r["reference_answer"]})
        asserts += [
            {"type": "llm-rubric", "value": f, "metric": "key_fact"} for f in r["key_facts"]
        ]
        case: dict[str, Any] = {"description": r["id"], "vars": variables}
        if asserts:
            case["assert"] = asserts
        meta = {k: r[k] for k in _FLAT_META if k in r and not (opts.plain and k == "assay_entry")}
        case["metadata"] = meta
        cases.append(case)
    with atomic_writer(path) as fh:
        yaml.safe_dump(cases, fh, sort_keys=False, allow_unicode=True, width=100)
    return []


FORMAT = FormatSpec(
    name="promptfoo",
    summary="promptfoo test cases (YAML; reference answer and key facts as assertions)",
    suffixes=(".yaml", ".yml"),
    read=_read,
    write=_write,
)
