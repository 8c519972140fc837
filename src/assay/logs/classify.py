"""A transparent traffic classifier: which category of the golden set does a logged query fall in?

The golden set is trusted first (a golden match: same normalised text, or token-set Jaccard at
least `GOLDEN_MATCH`, method ``golden``); otherwise the wording `RULES` and the nearest labelled
entries vote by one formula (methods ``rule`` / ``nearest``; neither: ``other``, method
``none``). The steps, the formula, and which rules vote for a set with a taxonomy of its own
(`rules_apply`): docs/production.md ("The traffic classifier"). ``reason`` spells out the
evidence.

Not every placement is known. A query placed by the neighbours or a rule with a confidence below
a threshold is *uncertain* (`UNCERTAIN`): the report shows it as a bucket of its own and leaves
it out of the share-vs-golden gap. `choose_threshold` picks the threshold on the golden set by
held-out accuracy: its queries are classified in `FOLDS` folds, each by a classifier of the
other folds, and the threshold is the lowest confidence above which the held-out placements are
right at least `TARGET_ACCURACY` of the time, read in windows (golden matches always count as
known: the threshold applies to the neighbours' and rules' placements only).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl
from assay._stopwords import QUERY_STOPWORDS as _STOP
from assay.errors import DataError
from assay.logs.model import normalize_query

__all__ = [
    "CLASSIFIER_VERSION",
    "DEFAULT_MIN_CONFIDENCE",
    "GOLDEN_MATCH",
    "METHODS",
    "OTHER",
    "RULES",
    "TARGET_ACCURACY",
    "UNCERTAIN",
    "Classification",
    "Classifier",
    "Threshold",
    "check_golden_categories",
    "choose_threshold",
    "rules_apply",
    "tokens",
]

CLASSIFIER_VERSION = "golden+rules+nn/2"
# how a query got its category: a golden entry's, the rule's, the neighbours' vote, or none
METHODS = ("golden", "nearest", "rule", "none")
GOLDEN_MATCH = 0.8  # token-set Jaccard from which a golden query is the same question
UNCERTAIN = "uncertain"  # the bucket of placements below the confidence threshold
OTHER = "other"  # the category of a query with no evidence (method none)
TARGET_ACCURACY = 0.8  # held-out accuracy the confident placements must reach
DEFAULT_MIN_CONFIDENCE = 0.3  # without a golden set to choose on (a rule alone is 0.5)
FOLDS = 5
_MIN_SUPPORT = 5  # held-out placements a threshold must keep to be judged on

RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (cat, name, re.compile(rx, re.IGNORECASE))
    for cat, name, rx in (
        (
            "amendment_restatement",
            "restatement",
            r"\brestat\w*|\bamend\w*|10-k/a|10-q/a|\boriginally reported\b|\bfirst report\w*|"
            r"\bas (?:first |originally )?filed\b|\brevised\b",
        ),
        (
            "exact_identifier",
            "identifier",
            r"\bein\b|\bcik\b|\bcusip\b|\bisin\b|\blei\b|\bticker\b|\bfile (?:number|no)\b|"
            r"\bcommission file\b|\baccession\b|\bemployer identification\b|\b\d{10}-\d{2}-\d{6}\b|"
            r"\b\d{3}-\d{5}\b|\b\d{2}-\d{7}\b",
        ),
        (
            "comparison",
            "comparison",
            r"\bgrowth\b|\bgrew\b|\by/y\b|\byoy\b|\bq/q\b|\bqoq\b|\bvs\.?\b|\bversus\b|"
            r"\bcompared?\b|\bchange[ds]?\b|\bincrease[ds]?\b|\bdecrease[ds]?\b|\bdelta\b|"
            r"\bhigher\b|\blower\b|\bdifference\b",
        ),
        (
            "temporal",
            "temporal",
            r"\blatest\b|\bmost recent\b|\bjust report\w*|\blast (?:fye|quarter|qtr|year|fy|q)\b|"
            r"\bthis (?:year|quarter|qtr)\b|\bcurrent\b|\bytd\b|\btrailing\b|\bttm\b|\bas of now\b|"
            r"\brecent\w*\b",
        ),
        (
            "narrative",
            "narrative",
            r"\brisks?\b|\bwhy\b|\bhow (?:does|do|did|is)\b|\bdescribe\b|\bexplain\b|\bwho\b|"
            r"\bstrategy\b|\bsegment the\b|\breportable segments\b|\bcompetition\b|\boutlook\b",
        ),
        (
            "numeric_lookup",
            "figure for a period",
            r"\bfy ?'?\d{2,4}\b|\bfiscal (?:'?\d{2,4}|year)\b|\bq[1-4]\b|\b(?:19|20)\d{2}\b|"
            r"\brev(?:enue)?\b|\bincome\b|\beps\b|\bmargin\b|\bdeposits\b|\bloans\b|\brpo\b|"
            r"\bnii\b|\bcapex\b|\bcash\b|\bdebt\b|\bheadcount\b|\bemployees\b",
        ),
    )
)

# abbreviation -> expansion (one token each way), so "sub rev" meets "subscription revenue"
_ABBREV = {
    "rev": "revenue",
    "revs": "revenue",
    "sub": "subscription",
    "subs": "subscription",
    "yoy": "y/y",
    "qoq": "q/q",
    "ni": "net income",
    "opex": "operating expenses",
    "qtr": "quarter",
    "fye": "fiscal year end",
    "perf": "performance",
    "rpo": "remaining performance obligations",
    "nii": "net interest income",
    "nco": "net charge-offs",
    "eps": "earnings per share",
    "yr": "year",
    "biz": "business",
    "no.": "number",
    "no": "number",
}
_TOKEN = re.compile(r"[\w$%/'-]+")


@lru_cache(maxsize=200_000)
def tokens(text: str) -> frozenset[str]:
    """Normalised content tokens of a query, abbreviations expanded, stop words dropped."""
    out: list[str] = []
    for t in _TOKEN.findall(normalize_query(text)):
        t = t.strip("'-")
        if not t or t in _STOP:
            continue
        exp = _ABBREV.get(t)
        out.extend(exp.split() if exp else [t])
    return frozenset(x for x in out if x not in _STOP)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


@dataclass(frozen=True, slots=True)
class Classification:
    category: str
    confidence: float
    reason: str
    method: str = "rule"  # one of METHODS


class Classifier:
    """A golden match first, then rules plus nearest labelled golden queries. `labelled` is
    ``(query, category)`` pairs; `rules` None uses the wording rules only when every labelled
    category is a built-in one (True / False force them on / off)."""

    def __init__(
        self,
        labelled: Iterable[tuple[str, str]] = (),
        *,
        neighbours: int = 5,
        rules: bool | None = None,
        golden_match: float = GOLDEN_MATCH,
    ):
        self.neighbours = neighbours
        self.golden_match = golden_match
        self._toks: list[frozenset[str]] = []
        self._cats: list[str] = []
        self._queries: list[str] = []
        post: dict[str, list[int]] = defaultdict(list)
        exact: dict[str, Counter[str]] = defaultdict(Counter)
        for q, c in labelled:
            i = len(self._toks)
            tk = tokens(q)
            self._toks.append(tk)
            self._cats.append(c)
            self._queries.append(q)
            exact[normalize_query(q)][c] += 1
            for t in tk:
                post[t].append(i)
        self._post = dict(post)
        # a text labelled twice: its most frequent category (ties: the first in sort order)
        self._exact = {
            n: min(cnt.items(), key=lambda kv: (-kv[1], kv[0]))[0] for n, cnt in exact.items()
        }
        self.rule_categories = rules_apply(self._cats, rules)
        self.rules_on = bool(self.rule_categories)
        self._memo: dict[str, Classification] = {}

    @property
    def n_labelled(self) -> int:
        return len(self._toks)

    def rule(self, query: str) -> tuple[str, str, str] | None:
        """(category, rule name, the matched words) of the first rule in use that matches (see
        `rules_apply`), or None."""
        for cat, name, rx in RULES:
            if cat not in self.rule_categories:
                continue
            m = rx.search(query)
            if m:
                return cat, name, m.group(0)
        return None

    def nearest(self, query: str) -> list[tuple[float, int]]:
        """(similarity, labelled index) of the top neighbours with similarity > 0, best first."""
        tk = tokens(query)
        shared: Counter[int] = Counter()
        for t in tk:
            for i in self._post.get(t, ()):
                shared[i] += 1
        sims = [(inter / (len(tk) + len(self._toks[i]) - inter), i) for i, inter in shared.items()]
        sims.sort(key=lambda x: (-x[0], x[1]))
        return sims[: self.neighbours]

    def classify(self, query: str, *, norm: str | None = None) -> Classification:
        """The category of `query` (`norm`: its `normalize_query`, when the caller has it)."""
        key = norm if norm is not None else normalize_query(query)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        res = self._classify(query, key)
        if len(self._memo) < 500_000:
            self._memo[key] = res
        return res

    def _golden(self, query: str, norm: str, nn: list[tuple[float, int]]) -> Classification | None:
        """The category of the golden entry this query is (exactly or nearly), or None."""
        cat = self._exact.get(norm)
        if cat is not None:
            return Classification(cat, 1.0, f"golden match (same text) -> {cat}", "golden")
        if nn and nn[0][0] >= self.golden_match:
            sim, i = nn[0]
            return Classification(
                self._cats[i],
                round(sim, 6),
                f"golden near match {self._queries[i]!r} (sim {sim:.2f}) -> {self._cats[i]}",
                "golden",
            )
        return None

    def _classify(self, query: str, norm: str) -> Classification:
        nn = self.nearest(query) if self._toks else []
        golden = self._golden(query, norm, nn)
        if golden is not None:
            return golden
        score: dict[str, float] = defaultdict(float)
        parts: list[str] = []
        r = self.rule(query)
        if r is not None:
            score[r[0]] += 0.5
            parts.append(f"rule {r[1]} ({r[2]!r}) -> {r[0]}")
        if nn:
            total = sum(s for s, _ in nn)
            top = nn[0][0]
            votes: dict[str, float] = defaultdict(float)
            for s, i in nn:
                votes[self._cats[i]] += s
            for c, v in votes.items():
                score[c] += 0.5 * top * v / total
            best_nn = max(votes.items(), key=lambda kv: (kv[1], kv[0]))[0]
            parts.append(
                f"nearest {self._queries[nn[0][1]]!r} (sim {top:.2f}); "
                f"{len(nn)} neighbours vote {best_nn}"
            )
        if not score:
            why = "no rule matched and" if self.rules_on else "no rule in use (own taxonomy);"
            return Classification(OTHER, 0.0, f"{why} no labelled neighbour", "none")
        rule_cat = r[0] if r else None
        cat = max(score.items(), key=lambda kv: (kv[1], kv[0] == rule_cat, kv[0]))[0]
        method = "rule" if cat == rule_cat else "nearest"
        return Classification(cat, round(min(1.0, score[cat]), 6), "; ".join(parts), method)


def rules_apply(categories: Iterable[str], rules: bool | None = None) -> frozenset[str]:
    """The categories whose wording rules classify: all of them (True), none (False), or (None)
    those the labelled set has (all when there is no labelled set): a golden set with a taxonomy
    of its own, such as a FinanceBench import, has none of them, so no rule votes."""
    every = frozenset(cat for cat, _, _ in RULES)
    if rules is not None:
        return every if rules else frozenset()
    have = set(categories)
    return every & have if have else every


_RESERVED = {
    UNCERTAIN: (
        "the traffic report's bucket of placements below the confidence threshold",
        "uncertain_topic",
    ),
    OTHER: (
        "the classifier's bucket of queries with no evidence (method none), which no threshold "
        "or golden share applies to",
        "other_topic",
    ),
}


def check_golden_categories(entries: Sequence[object], source: str | Path | None) -> None:
    """Refuse a golden set with a category named `UNCERTAIN` or `OTHER`: the traffic report's
    bucket of placements below the confidence threshold and the classifier's bucket of queries
    with no evidence have those names, so a placement in such a category would be counted in
    the bucket (a confident one as uncertain; one with no evidence as a firm placement in the
    golden's category) and the gap table would compare the bucket with the category. A
    DataError names the golden file, the line of the first such entry and ``category``."""
    name = next((c for e in entries if (c := getattr(e, "category", None)) in _RESERVED), None)
    if name is None:
        return
    line = None
    path = Path(source) if isinstance(source, str | Path) else None
    if path is not None and path.is_file() and path.suffix in (".jsonl", ".ndjson"):
        line = next(
            (
                n
                for n, row in iter_jsonl(path)
                if isinstance(row, dict) and row.get("category") in _RESERVED
            ),
            None,
        )
    what, instead = _RESERVED[name]
    raise DataError(
        f"{name!r} is {what}; rename this category (e.g. {instead!r})",
        file=str(source) if source is not None else "golden set",
        line=line,
        field="category",
    )


def golden_pairs(entries: Sequence[object]) -> list[tuple[str, str]]:
    """``(query, category)`` of golden entries (any objects with those attributes)."""
    return [(str(getattr(e, "query")), str(getattr(e, "category"))) for e in entries]  # noqa: B009


@dataclass(frozen=True)
class Threshold:
    """The confidence below which a neighbour's or a rule's placement is uncertain, and how it
    was set: ``held-out`` (chosen on a golden set: `choose_threshold`), ``option`` or
    ``default`` (no golden set to choose on). `held_out` holds what the choice saw."""

    value: float
    how: str
    target: float | None = None
    held_out: dict[str, Any] | None = None

    def uncertain(self, method: str, confidence: float) -> bool:
        return method in ("nearest", "rule") and confidence < self.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_confidence": self.value,
            "how": self.how,
            "target_accuracy": self.target,
            "held_out": self.held_out,
        }

    def describe(self) -> str:
        if self.how == "option":
            return f"confidence < {self.value:.2f} (--min-confidence)"
        if self.how == "default" or self.held_out is None:
            return f"confidence < {self.value:.2f} (the default: no golden set to choose on)"
        h = self.held_out

        def acc(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.0f}%"

        return (
            f"confidence < {self.value:.2f}, chosen on the golden set by held-out accuracy "
            f"({h['folds']} folds; of {h['placed']} held-out placements by neighbours or "
            f"rules, {acc(h['accuracy_confident'])} of the {h['confident']} at or above it "
            f"right, {acc(h['accuracy_uncertain'])} of the {h['uncertain']} below; target "
            f"{acc(self.target)} in the {h['window']} just above it and over all above it)"
        )


def choose_threshold(
    labelled: Sequence[tuple[str, str]],
    *,
    target: float = TARGET_ACCURACY,
    rules: bool | None = None,
    folds: int = FOLDS,
) -> Threshold:
    """The confidence below which a neighbour's or a rule's placement is uncertain, chosen on
    the golden queries held out (`folds` folds, each classified by the other folds): sorted by
    confidence, the held-out placements of the neighbours and rules are read in windows of a
    fifth of them (at least 5); the threshold is the confidence where the first window whose
    accuracy reaches `target` starts, the placements from there on being right at least
    `target` of the time too. So a placement just above it is as trustworthy as asked, whatever
    the overall accuracy. None such: 1.0 (every such placement uncertain). A golden set with
    fewer than 5 such held-out placements gives the default."""
    if not 0 < target <= 1:
        raise ValueError(f"target accuracy is in (0, 1], not {target}")
    got: list[tuple[float, bool]] = []  # (confidence, right) of the neighbours' and rules'
    n = 0
    if len(labelled) >= 2 * folds:
        for f in range(folds):
            clf = Classifier([p for i, p in enumerate(labelled) if i % folds != f], rules=rules)
            for i in range(f, len(labelled), folds):
                q, cat = labelled[i]
                c = clf.classify(q)
                n += 1
                if c.method in ("nearest", "rule"):
                    got.append((c.confidence, c.category == cat))
    if len(got) < _MIN_SUPPORT:
        return Threshold(DEFAULT_MIN_CONFIDENCE, "default")
    got.sort(key=lambda g: g[0])
    ok = [int(r) for _, r in got]
    w = max(_MIN_SUPPORT, -(-len(got) // 5))
    value = 1.0
    for j in range(len(got)):
        if j and got[j][0] == got[j - 1][0]:
            continue  # a threshold keeps every placement of its confidence
        win = ok[j : j + w]
        if len(win) < min(w, len(got)):
            break
        if sum(win) >= target * len(win) and sum(ok[j:]) >= target * (len(ok) - j):
            value = got[j][0]
            break
    kept = [r for c, r in got if c >= value]
    below = [r for c, r in got if c < value]
    return Threshold(
        value,
        "held-out",
        target,
        {
            "folds": folds,
            "n": n,
            "placed": len(got),
            "window": w,
            "confident": len(kept),
            "accuracy_confident": sum(kept) / len(kept) if kept else None,
            "uncertain": len(below),
            "accuracy_uncertain": sum(below) / len(below) if below else None,
        },
    )
