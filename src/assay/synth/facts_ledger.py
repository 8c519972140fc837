"""The ledger: seeded fictional companies and every fact the synthetic filings will state.

The ledger is built before any document is written. Documents only *show* ledger facts (through
`Ledger.value_as_of`, which applies restatements known at a filing's acceptance date), so a
numeric gold answer can always be checked against the ledger, and a restatement can never be
contradicted by a filing that was written from a different number.

Half of the companies are technology companies (some with fiscal years ending in June or
September; subscription revenue, two segments, remaining performance obligations), half are
banks (net interest income and margin, provision for credit losses, deposits, CET1, charge-offs).
Every random draw comes from one `numpy.random.Generator` seeded by the caller, in a fixed order.

The filing schedule lives here too (`doc_id_for`, `accepted_date`): which document a company files
for a period and when it becomes public is a deterministic function of (company, form, period),
consistent with the period (an earnings release 3-4 weeks after the quarter, the 10-Q a little
later, the 10-K 7-10 weeks after the fiscal year end, a Part III 10-K/A within 120 days of the year
end). A restatement takes effect on a filing's acceptance date, so the ledger needs the schedule;
`filings` lays documents out on it. Dependencies go one way: layout <- ledger <- filings.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

__all__ = [
    "CONCEPTS",
    "Company",
    "Concept",
    "Fact",
    "FiscalCalendar",
    "Ledger",
    "Restatement",
    "accepted_date",
    "build_ledger",
    "doc_id_for",
    "fact_id",
    "jitter",
]

Kind = Literal["tech", "bank"]


# The room keeps its own fiscal calendar on purpose, apart from the pipeline's
# (`assay.corpus.fiscal.FiscalCalendar`): the room writes the truth that the pipeline is
# measured against, so the two must not share the code that decides which dates a fiscal quarter
# covers -- a shared bug would be written into the gold and then "confirmed" by the system under
# test. tests/synth/test_fiscal_calendars_agree.py checks that the two agree on every month-end
# calendar instead.
@dataclass(frozen=True, slots=True)
class FiscalCalendar:
    """A fiscal year named by the calendar year in which it ends, ending on the last day of a month."""

    fye_month: int

    def quarter_end(self, fy: int, q: int) -> dt.date:
        """Last day of fiscal quarter `q` (1..4) of fiscal year `fy`."""
        months_back = 3 * (4 - q)
        month = self.fye_month - months_back
        year = fy
        while month <= 0:
            month += 12
            year -= 1
        return dt.date(year, month, calendar.monthrange(year, month)[1])

    def quarter_start(self, fy: int, q: int) -> dt.date:
        prev = self.quarter_end(fy, q - 1) if q > 1 else self.year_end(fy - 1)
        return prev + dt.timedelta(days=1)

    def year_end(self, fy: int) -> dt.date:
        return self.quarter_end(fy, 4)

    def year_start(self, fy: int) -> dt.date:
        return self.year_end(fy - 1) + dt.timedelta(days=1)

    @property
    def fye(self) -> str:
        """Month-day of the fiscal year end, e.g. "06-30"."""
        d = self.year_end(2023)
        return f"{d.month:02d}-{d.day:02d}"


@dataclass(frozen=True, slots=True)
class Concept:
    """One kind of fact: how it is named in tables, in prose and (if tagged) in XBRL."""

    key: str
    label: str  # table row label
    phrase: str  # how prose names it
    unit: Literal["USD", "percent", "USD/share", "count"]
    period_type: Literal["duration", "instant"]
    xbrl: str | None  # "taxonomy:Name" or None for text-only metrics
    kinds: tuple[Kind, ...]
    quarterly: bool = True  # also disclosed for fiscal quarters


CONCEPTS: dict[str, Concept] = {
    c.key: c
    for c in [
        # technology companies
        Concept(
            "sub_rev",
            "Subscription and support",
            "subscription and support revenue",
            "USD",
            "duration",
            "us-gaap:RevenueFromContractWithCustomerSubscriptionAndSupport",
            ("tech",),
        ),
        Concept(
            "svc_rev",
            "Professional services and other",
            "professional services revenue",
            "USD",
            "duration",
            "us-gaap:RevenueFromContractWithCustomerProfessionalServices",
            ("tech",),
        ),
        Concept(
            "revenue",
            "Total revenues",
            "total revenues",
            "USD",
            "duration",
            "us-gaap:Revenues",
            ("tech",),
        ),
        Concept(
            "seg_rev",
            "Segment revenue",
            "segment revenue",
            "USD",
            "duration",
            "us-gaap:Revenues",
            ("tech",),
        ),
        Concept(
            "op_income",
            "Income from operations",
            "income from operations",
            "USD",
            "duration",
            "us-gaap:OperatingIncomeLoss",
            ("tech",),
        ),
        Concept(
            "rpo",
            "Remaining performance obligations",
            "remaining performance obligations",
            "USD",
            "instant",
            "us-gaap:RevenueRemainingPerformanceObligation",
            ("tech",),
        ),
        Concept(
            "nrr",
            "Dollar-based net revenue retention rate",
            "dollar-based net revenue retention rate",
            "percent",
            "instant",
            None,
            ("tech",),
            quarterly=False,
        ),
        Concept(
            "large_cust",
            "Customers with annual recurring revenue over $100,000",
            "customers with annual recurring revenue over $100,000",
            "count",
            "instant",
            None,
            ("tech",),
            quarterly=False,
        ),
        Concept(
            "employees",
            "Full-time employees",
            "full-time employees",
            "count",
            "instant",
            None,
            ("tech", "bank"),
            quarterly=False,
        ),
        # banks
        Concept(
            "nii",
            "Net interest income",
            "net interest income",
            "USD",
            "duration",
            "us-gaap:InterestIncomeExpenseNet",
            ("bank",),
        ),
        Concept(
            "nim",
            "Net interest margin",
            "net interest margin",
            "percent",
            "duration",
            None,
            ("bank",),
        ),
        Concept(
            "provision",
            "Provision for credit losses",
            "provision for credit losses",
            "USD",
            "duration",
            "us-gaap:ProvisionForLoanLeaseAndOtherLosses",
            ("bank",),
        ),
        Concept(
            "nco",
            "Net charge-offs",
            "net charge-offs",
            "USD",
            "duration",
            "us-gaap:FinancingReceivableAllowanceForCreditLossesWriteOffsNetOfRecoveries",
            ("bank",),
        ),
        Concept(
            "nonint_inc",
            "Noninterest income",
            "noninterest income",
            "USD",
            "duration",
            "us-gaap:NoninterestIncome",
            ("bank",),
        ),
        Concept(
            "deposits",
            "Total deposits",
            "total deposits",
            "USD",
            "instant",
            "us-gaap:Deposits",
            ("bank",),
        ),
        Concept(
            "loans",
            "Loans held for investment",
            "loans held for investment",
            "USD",
            "instant",
            "us-gaap:LoansAndLeasesReceivableNetReportedAmount",
            ("bank",),
        ),
        Concept(
            "cet1",
            "Common equity tier 1 capital ratio",
            "Common Equity Tier 1 capital ratio",
            "percent",
            "instant",
            None,
            ("bank",),
        ),
        Concept(
            "criticized",
            "Criticized loans",
            "criticized loans",
            "USD",
            "instant",
            None,
            ("bank",),
            quarterly=False,
        ),
        # both
        Concept(
            "net_income",
            "Net income",
            "net income",
            "USD",
            "duration",
            "us-gaap:NetIncomeLoss",
            ("tech", "bank"),
        ),
        Concept(
            "eps",
            "Diluted earnings per share",
            "diluted earnings per share",
            "USD/share",
            "duration",
            "us-gaap:EarningsPerShareDiluted",
            ("tech", "bank"),
        ),
    ]
}


@dataclass(frozen=True, slots=True)
class Company:
    cid: str  # slug used in doc ids (lower-case ticker)
    name: str
    ticker: str
    aliases: tuple[str, ...]
    kind: Kind
    calendar: FiscalCalendar
    unit: Literal["thousands", "millions"]
    cik: str
    ein: str
    file_number: str
    state: str
    hq_city: str
    exchange: str
    segments: tuple[str, ...]  # tech: two operating segments; banks: ()
    ceo: str
    cfo: str
    new_cfo: str  # who replaces the CFO when an officer change is filed
    directors: tuple[str, ...]
    risk: str  # a company-specific risk sentence (narrative fact)
    product: str  # flagship product (tech) or lending focus (bank)
    part3_by_amendment: bool  # files Part III by 10-K/A instead of the proxy

    @property
    def sector(self) -> str:
        return "Information Technology" if self.kind == "tech" else "Financials"

    @property
    def restatement_cause(self) -> str:
        """The error the company's restatements correct (a 10-K/A's explanatory note)."""
        if self.kind == "tech":
            return "the capitalization of sales commissions"
        return "the measurement of the allowance for credit losses"

    @property
    def scale(self) -> int:
        return 1_000 if self.unit == "thousands" else 1_000_000


@dataclass(frozen=True, slots=True)
class Fact:
    """One number a filing states. Money is in whole USD; display divides by the company scale."""

    fact_id: str
    cid: str
    concept: str
    fy: int
    fq: int | None  # None for a fiscal year (or fiscal-year-end instant)
    start: dt.date | None  # None for instants
    end: dt.date
    value: float | int
    segment: str | None = None


@dataclass(frozen=True, slots=True)
class Restatement:
    """A figure that changes after it was first reported.

    `via` is the doc id of the 10-K/A that restates it (explicit restatement) or, for a quiet
    restatement, the doc id of the first later filing whose comparative column shows the new value.
    """

    fact_id: str
    old: float | int
    new: float | int
    effective: dt.date
    via: str
    quiet: bool


@dataclass
class Ledger:
    seed: int
    first_fy: int
    last_fy: int
    companies: list[Company]
    facts: dict[str, Fact] = field(default_factory=dict)
    restatements: dict[str, Restatement] = field(default_factory=dict)
    # text-only events keyed by company id
    guidance: dict[str, tuple[int, int]] = field(default_factory=dict)  # FY last+1 revenue range
    officer_change: dict[str, tuple[int, dt.date]] = field(
        default_factory=dict
    )  # cid -> (fy, date)
    dividend: dict[tuple[str, int], float] = field(default_factory=dict)  # bank quarterly dividend
    buyback: dict[tuple[str, int], int] = field(default_factory=dict)  # tech authorization (USD)
    ceo_pay: dict[tuple[str, int], int] = field(default_factory=dict)  # Part III CEO total comp

    def company(self, cid: str) -> Company:
        for c in self.companies:
            if c.cid == cid:
                return c
        raise KeyError(cid)

    def get(
        self, cid: str, concept: str, fy: int, fq: int | None = None, segment: str | None = None
    ) -> Fact:
        return self.facts[fact_id(cid, concept, fy, fq, segment)]

    def has(
        self, cid: str, concept: str, fy: int, fq: int | None = None, segment: str | None = None
    ) -> bool:
        return fact_id(cid, concept, fy, fq, segment) in self.facts

    def value_as_of(self, fid: str, when: dt.date) -> float | int:
        """The value a filing accepted on `when` shows: restated from the restatement's date on."""
        r = self.restatements.get(fid)
        if r is not None and when >= r.effective:
            return r.new
        return self.facts[fid].value

    def current_value(self, fid: str) -> float | int:
        r = self.restatements.get(fid)
        return r.new if r is not None else self.facts[fid].value


def fact_id(
    cid: str, concept: str, fy: int, fq: int | None = None, segment: str | None = None
) -> str:
    period = f"FY{fy}" if fq is None else f"FY{fy}Q{fq}"
    seg = f":{segment}" if segment else ""
    return f"{cid}:{concept}:{period}{seg}"


# ---------------------------------------------------------------------------------------------
# the filing schedule: which document a company files for a period, and when it becomes public


def jitter(key: str, lo: int, hi: int) -> int:
    """A deterministic integer in [lo, hi] from `key` (hash-based: no draw from the seeded rng)."""
    h = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")
    return lo + h % (hi - lo + 1)


def doc_id_for(
    c: Company, form: str, fy: int, fq: int | None, *, n: int = 1, kind: str = ""
) -> str:
    if form == "10-K":
        return f"{c.cid}-{fy}-10k"
    if form == "10-K/A":
        return f"{c.cid}-{fy}-10ka{n}"
    if form == "10-Q":
        return f"{c.cid}-{fy}-q{fq}-10q"
    if form == "EARNINGS":
        return f"{c.cid}-{fy}-q{fq}-ex99"
    if form == "8-K":
        return f"{c.cid}-{fy}-q{fq}-8k" if kind == "earnings" else f"{c.cid}-{fy}-8k-{kind}"
    raise ValueError(f"unknown form {form}")


def accepted_date(c: Company, form: str, fy: int, fq: int | None, *, kind: str = "") -> dt.date:
    cal = c.calendar
    key = f"{c.cid}|{form}|{fy}|{fq}|{kind}"
    if form == "10-K":
        return cal.year_end(fy) + dt.timedelta(days=jitter(key, 52, 70))
    if form == "10-Q":
        assert fq is not None
        return cal.quarter_end(fy, fq) + dt.timedelta(days=jitter(key, 36, 44))
    if form in ("EARNINGS", "8-K") and kind in ("", "earnings"):
        assert fq is not None
        lo, hi = (22, 30) if fq < 4 else (30, 40)
        return cal.quarter_end(fy, fq) + dt.timedelta(days=jitter(f"{c.cid}|er|{fy}|{fq}", lo, hi))
    if form == "10-K/A" and kind == "part3":
        return cal.year_end(fy) + dt.timedelta(days=jitter(key, 112, 119))
    if form == "8-K" and kind == "meeting":
        return cal.year_end(fy) + dt.timedelta(days=jitter(key, 130, 150))
    if form == "8-K" and kind in ("dividend", "buyback"):
        return cal.quarter_end(fy, 2) + dt.timedelta(days=jitter(key, 8, 18))
    raise ValueError(f"no acceptance rule for {form} {kind}")


# ---------------------------------------------------------------------------------------------
# names

_TECH_STEMS = [
    "Corvane",
    "Lumetra",
    "Quillon",
    "Averix",
    "Nimbra",
    "Solvent",
    "Tessaly",
    "Orbyn",
    "Kestrel",
    "Veridia",
    "Halcyon",
    "Brightwell",
    "Zephyra",
    "Cobalt",
    "Meridian",
    "Parallax",
    "Stratus",
    "Axiom",
    "Fernleaf",
    "Glasswing",
]
_TECH_SUFFIX = ["Systems", "Software", "Data", "Cloud", "Networks", "Technologies"]
_BANK_STEMS = [
    "Harbor Ridge",
    "Stonebridge",
    "Pine Valley",
    "Northgate",
    "Copper Creek",
    "Lakeshore",
    "Granite State",
    "Red Mesa",
    "Bluewater",
    "Old Mill",
    "Prairie Wind",
    "Cedar Point",
    "Ironwood",
    "Silver Lake",
    "Highland",
    "Tidewater",
    "Summit Trail",
    "Riverbend",
    "Westfield",
    "Golden Plains",
]
_BANK_SUFFIX = ["Bancorp", "Financial Corporation", "Bancshares", "Financial Group"]
_FIRST = [
    "Maria",
    "James",
    "Priya",
    "Daniel",
    "Elena",
    "Robert",
    "Aisha",
    "Thomas",
    "Grace",
    "Victor",
    "Hannah",
    "Samuel",
    "Lucia",
    "Marcus",
    "Nina",
    "Oliver",
    "Ruth",
    "Kenji",
    "Fatima",
    "Paul",
    "Irene",
    "Diego",
    "Clara",
    "Henry",
]
_LAST = [
    "Okafor",
    "Lindqvist",
    "Castellano",
    "Whitfield",
    "Nakamura",
    "Brennan",
    "Adeyemi",
    "Sorensen",
    "Delacroix",
    "Hargrove",
    "Petrova",
    "Quintero",
    "Ashworth",
    "Mbeki",
    "Fairbanks",
    "Rosales",
    "Kowalski",
    "Thorne",
    "Valdez",
    "Ellison",
    "Moreau",
    "Haddad",
]
_CITIES = [
    ("Austin", "Texas"),
    ("Denver", "Colorado"),
    ("Raleigh", "North Carolina"),
    ("Columbus", "Ohio"),
    ("Portland", "Oregon"),
    ("Nashville", "Tennessee"),
    ("Minneapolis", "Minnesota"),
    ("Boise", "Idaho"),
    ("Richmond", "Virginia"),
    ("Omaha", "Nebraska"),
    ("Tucson", "Arizona"),
    ("Madison", "Wisconsin"),
]
_SEGMENTS = [
    ("Cloud Platform", "Data Services"),
    ("Enterprise Applications", "Security"),
    ("Analytics", "Infrastructure"),
    ("Commerce Cloud", "Payments"),
    ("Developer Tools", "Observability"),
]
_TECH_RISKS = [
    "a significant portion of our revenue depends on renewals of subscriptions with a term of one year",
    "we rely on a single third-party cloud provider to host our platform",
    "our largest channel partner accounted for a material share of new bookings",
    "changes in data privacy regulation in the European Union could limit how customers use our products",
    "a security breach of our platform could expose customer data and harm our reputation",
]
_BANK_RISKS = [
    "our loan portfolio is concentrated in commercial real estate in our home state",
    "a rapid decline in deposit balances could require us to rely on higher-cost wholesale funding",
    "a large share of our deposits exceeds the FDIC insurance limit",
    "our agricultural lending exposes us to commodity price and weather risk",
    "rising interest rates have reduced the fair value of our available-for-sale securities",
]
_TECH_PRODUCTS = ["Helix", "Atlas", "Beacon", "Prism", "Keystone", "Vantage", "Cascade", "Relay"]
_BANK_FOCUS = [
    "commercial real estate lending",
    "small business lending",
    "agricultural lending",
    "residential mortgage lending",
    "commercial and industrial lending",
]


def _person(rng: np.random.Generator, used: set[str]) -> str:
    while True:
        name = f"{_FIRST[int(rng.integers(len(_FIRST)))]} {_LAST[int(rng.integers(len(_LAST)))]}"
        if name not in used:
            used.add(name)
            return name


def _ticker(name: str, used: set[str], rng: np.random.Generator) -> str:
    letters = [ch for ch in name.upper() if ch.isalpha()]
    cand = "".join(letters[:4])
    while cand in used:
        picks = sorted(rng.choice(len(letters), size=3, replace=False).tolist())
        cand = letters[0] + "".join(letters[i] for i in picks)
        cand = cand[:4]
    used.add(cand)
    return cand


def _make_companies(rng: np.random.Generator, n: int) -> list[Company]:
    n_tech = (n + 1) // 2
    tech_order = rng.permutation(len(_TECH_STEMS)).tolist()
    bank_order = rng.permutation(len(_BANK_STEMS)).tolist()
    tickers: set[str] = set()
    people: set[str] = set()
    out: list[Company] = []
    # Two companies (one tech, one bank) share a short alias on purpose ("ambiguous" questions).
    for i in range(n):
        kind: Kind = "tech" if i < n_tech else "bank"
        j = i if kind == "tech" else i - n_tech
        if kind == "tech":
            stem = _TECH_STEMS[tech_order[j % len(tech_order)]]
            round_ = j // len(tech_order)
            suffix = _TECH_SUFFIX[int(rng.integers(len(_TECH_SUFFIX)))]
            name = f"{stem} {suffix}" + (f" {round_ + 1}" if round_ else "")
            name += ", Inc."
            fye = [12, 6, 9][j % 3]
            segments: tuple[str, ...] = _SEGMENTS[int(rng.integers(len(_SEGMENTS)))]
            risk = _TECH_RISKS[int(rng.integers(len(_TECH_RISKS)))]
            product = _TECH_PRODUCTS[int(rng.integers(len(_TECH_PRODUCTS)))]
            exchange = "The Nasdaq Stock Market LLC"
        else:
            stem = _BANK_STEMS[bank_order[j % len(bank_order)]]
            round_ = j // len(bank_order)
            if j == 0:  # shares its short name with the first technology company (ambiguity)
                stem = out[0].aliases[0]
            suffix = _BANK_SUFFIX[int(rng.integers(len(_BANK_SUFFIX)))]
            name = f"{stem} {suffix}" + (f" {round_ + 1}" if round_ else "")
            fye = 12
            segments = ()
            risk = _BANK_RISKS[int(rng.integers(len(_BANK_RISKS)))]
            product = _BANK_FOCUS[int(rng.integers(len(_BANK_FOCUS)))]
            exchange = "New York Stock Exchange"
        ticker = _ticker(stem + suffix, tickers, rng)
        short = stem if not round_ else f"{stem} {round_ + 1}"
        aliases = [short, ticker]
        city, state = _CITIES[int(rng.integers(len(_CITIES)))]
        # alternate units within each sector so every room mixes "in thousands" and "in millions"
        unit: Literal["thousands", "millions"] = (
            "millions" if (j % 2 == 0) == (kind == "tech") else "thousands"
        )
        ceo, cfo, new_cfo = _person(rng, people), _person(rng, people), _person(rng, people)
        directors = tuple([ceo] + [_person(rng, people) for _ in range(4)])
        out.append(
            Company(
                cid=ticker.lower(),
                name=name,
                ticker=ticker,
                aliases=tuple(aliases),
                kind=kind,
                calendar=FiscalCalendar(fye),
                unit=unit,
                cik=f"{int(rng.integers(1_100_000, 1_990_000)):010d}",
                ein=f"{int(rng.integers(10, 99))}-{int(rng.integers(1_000_000, 9_999_999))}",
                file_number=f"001-{int(rng.integers(30_000, 41_999))}",
                state="Delaware" if kind == "tech" else state,
                hq_city=f"{city}, {state}",
                exchange=exchange,
                segments=segments,
                ceo=ceo,
                cfo=cfo,
                new_cfo=new_cfo,
                directors=directors,
                risk=risk,
                product=product,
                part3_by_amendment=bool(rng.random() < 0.5),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# numbers


def _split4(rng: np.random.Generator, total: int, *, weights: tuple[float, ...]) -> list[int]:
    w = np.asarray(weights) * rng.uniform(0.97, 1.03, size=4)
    parts = [round(total * x) for x in (w / w.sum())]
    parts[3] = total - sum(parts[:3])
    return parts


def build_ledger(
    seed: int = 7, *, companies: int = 6, years: int = 3, last_fy: int = 2024
) -> Ledger:
    """Draw the companies and every fact for fiscal years `last_fy - years + 1 .. last_fy`.

    The fiscal year before the first is drawn too (it appears as the comparative column of the
    first year's filings). Restatements are planted when there are at least two years.
    """
    if companies < 2:
        raise ValueError("companies must be >= 2 (half technology companies, half banks)")
    if years < 1:
        raise ValueError("years must be >= 1")
    rng = np.random.default_rng(seed)
    first_fy = last_fy - years + 1
    ledger = Ledger(
        seed=seed, first_fy=first_fy, last_fy=last_fy, companies=_make_companies(rng, companies)
    )
    for c in ledger.companies:
        if c.kind == "tech":
            _tech_facts(ledger, c, rng)
        else:
            _bank_facts(ledger, c, rng)
        _events(ledger, c, rng)
    _plant_restatements(ledger, rng)
    return ledger


def _add(
    ledger: Ledger,
    c: Company,
    concept: str,
    fy: int,
    fq: int | None,
    value: float | int,
    segment: str | None = None,
) -> None:
    cal = c.calendar
    con = CONCEPTS[concept]
    if fq is None:
        start, end = cal.year_start(fy), cal.year_end(fy)
    else:
        start, end = cal.quarter_start(fy, fq), cal.quarter_end(fy, fq)
    fid = fact_id(c.cid, concept, fy, fq, segment)
    ledger.facts[fid] = Fact(
        fid,
        c.cid,
        concept,
        fy,
        fq,
        None if con.period_type == "instant" else start,
        end,
        value,
        segment,
    )


def _money(units: int, c: Company) -> int:
    return int(units) * c.scale


def _tech_facts(ledger: Ledger, c: Company, rng: np.random.Generator) -> None:
    base = (
        int(rng.uniform(180_000, 900_000))
        if c.unit == "thousands"
        else int(rng.uniform(900, 6_000))
    )
    growth = rng.uniform(0.08, 0.26)
    sub_share = rng.uniform(0.78, 0.9)
    seg_share = rng.uniform(0.55, 0.7)
    shares = int(rng.uniform(60, 400)) * 1_000_000
    margin = rng.uniform(0.06, 0.2)
    headcount = int(rng.uniform(900, 9_000))
    rpo = base * rng.uniform(1.3, 1.9)
    nrr = rng.uniform(108, 124)
    large = int(rng.uniform(250, 1_600))
    for fy in range(ledger.first_fy - 1, ledger.last_fy + 1):
        total = int(base * (1 + growth) ** (fy - ledger.first_fy + 1))
        sub = int(total * sub_share)
        svc = total - sub
        subs_q = _split4(rng, sub, weights=(0.235, 0.245, 0.255, 0.265))
        svcs_q = _split4(rng, svc, weights=(0.24, 0.25, 0.25, 0.26))
        op_q: list[int] = []
        for q in range(4):
            rev_q = subs_q[q] + svcs_q[q]
            op = int(rev_q * (margin + rng.uniform(-0.03, 0.03)))
            op_q.append(op)
            seg_a = int(rev_q * (seg_share + rng.uniform(-0.01, 0.01)))
            _add(ledger, c, "sub_rev", fy, q + 1, _money(subs_q[q], c))
            _add(ledger, c, "svc_rev", fy, q + 1, _money(svcs_q[q], c))
            _add(ledger, c, "revenue", fy, q + 1, _money(rev_q, c))
            _add(ledger, c, "seg_rev", fy, q + 1, _money(seg_a, c), c.segments[0])
            _add(ledger, c, "seg_rev", fy, q + 1, _money(rev_q - seg_a, c), c.segments[1])
            ni = int(op * 0.79)
            _add(ledger, c, "op_income", fy, q + 1, _money(op, c))
            _add(ledger, c, "net_income", fy, q + 1, _money(ni, c))
            _add(ledger, c, "eps", fy, q + 1, round(_money(ni, c) / shares, 2))
            rpo *= 1 + growth / 4 + rng.uniform(-0.01, 0.01)
            _add(ledger, c, "rpo", fy, q + 1 if q < 3 else None, _money(int(rpo), c))
        for concept in ("sub_rev", "svc_rev", "revenue", "op_income", "net_income"):
            _annual(ledger, c, concept, fy)
        for seg in c.segments:
            _annual(ledger, c, "seg_rev", fy, seg)
        _annual_eps(ledger, c, fy, shares)
        _q4_alias(ledger, c, "rpo", fy)
        nrr += rng.uniform(-4, 2)
        _add(ledger, c, "nrr", fy, None, round(nrr, 0))
        headcount = int(headcount * (1 + growth * rng.uniform(0.3, 0.8)))
        _add(ledger, c, "employees", fy, None, headcount)
        # large customers are disclosed at the second quarter and at fiscal year end only
        large_q2 = int(large * (1 + growth * 0.5))
        large = int(large * (1 + growth))
        _add(ledger, c, "large_cust", fy, 2, large_q2)
        _add(ledger, c, "large_cust", fy, None, large)


def _annual(ledger: Ledger, c: Company, concept: str, fy: int, segment: str | None = None) -> None:
    """The fiscal year's figure of a flow: the sum of its four quarters."""
    total = sum(int(ledger.get(c.cid, concept, fy, q, segment).value) for q in (1, 2, 3, 4))
    _add(ledger, c, concept, fy, None, total, segment)


def _annual_eps(ledger: Ledger, c: Company, fy: int, shares: int) -> None:
    _add(
        ledger,
        c,
        "eps",
        fy,
        None,
        round(int(ledger.get(c.cid, "net_income", fy).value) / shares, 2),
    )


def _q4_alias(ledger: Ledger, c: Company, concept: str, fy: int) -> None:
    """The fourth quarter's figure of an instant is the fiscal-year-end one (one value per date)."""
    fid = fact_id(c.cid, concept, fy, 4)
    ledger.facts[fid] = replace(ledger.get(c.cid, concept, fy), fact_id=fid, fq=4)


def _bank_facts(ledger: Ledger, c: Company, rng: np.random.Generator) -> None:
    assets = (
        int(rng.uniform(4_000_000, 40_000_000))
        if c.unit == "thousands"
        else int(rng.uniform(8_000, 90_000))
    )
    nim = rng.uniform(2.6, 3.6)
    loan_ratio = rng.uniform(0.6, 0.72)
    deposit_ratio = rng.uniform(0.78, 0.88)
    cet1 = rng.uniform(9.8, 12.5)
    shares = int(rng.uniform(40, 300)) * 1_000_000
    headcount = int(rng.uniform(600, 7_000))
    for fy in range(ledger.first_fy - 1, ledger.last_fy + 1):
        nims: list[float] = []
        for q in range(1, 5):
            assets = int(assets * (1 + rng.uniform(0.0, 0.025)))
            nim = float(np.clip(nim + rng.uniform(-0.12, 0.1), 2.2, 4.2))
            q_nim = round(nim, 2)
            nims.append(q_nim)
            earning = assets * 0.93
            nii = int(earning * q_nim / 100 / 4)
            loans = int(assets * loan_ratio)
            nco = int(loans * rng.uniform(0.0008, 0.0016))
            prov = int(nco * rng.uniform(0.7, 1.6))
            nonint = int(nii * rng.uniform(0.18, 0.3))
            ni = int((nii + nonint - prov - (nii + nonint) * 0.58) * 0.79)
            deposits = int(assets * deposit_ratio)
            cet1 = float(np.clip(cet1 + rng.uniform(-0.2, 0.2), 9.0, 13.5))
            _add(ledger, c, "nii", fy, q, _money(nii, c))
            _add(ledger, c, "nim", fy, q, q_nim)
            _add(ledger, c, "provision", fy, q, _money(prov, c))
            _add(ledger, c, "nco", fy, q, _money(nco, c))
            _add(ledger, c, "nonint_inc", fy, q, _money(nonint, c))
            _add(ledger, c, "net_income", fy, q, _money(ni, c))
            _add(ledger, c, "eps", fy, q, round(_money(ni, c) / shares, 2))
            inst_q = q if q < 4 else None
            _add(ledger, c, "deposits", fy, inst_q, _money(deposits, c))
            _add(ledger, c, "loans", fy, inst_q, _money(loans, c))
            _add(ledger, c, "cet1", fy, inst_q, round(cet1, 1))
        for concept in ("nii", "provision", "nco", "nonint_inc", "net_income"):
            _annual(ledger, c, concept, fy)
        _add(ledger, c, "nim", fy, None, round(sum(nims) / 4, 2))
        _annual_eps(ledger, c, fy, shares)
        for concept in ("deposits", "loans", "cet1"):
            _q4_alias(ledger, c, concept, fy)
        loans_fy = int(ledger.get(c.cid, "loans", fy).value) // c.scale
        crit_q2 = int(
            int(ledger.get(c.cid, "loans", fy, 2).value) // c.scale * rng.uniform(0.015, 0.03)
        )
        _add(ledger, c, "criticized", fy, 2, _money(crit_q2, c))
        _add(ledger, c, "criticized", fy, None, _money(int(loans_fy * rng.uniform(0.015, 0.03)), c))
        headcount = int(headcount * rng.uniform(0.98, 1.05))
        _add(ledger, c, "employees", fy, None, headcount)


def _events(ledger: Ledger, c: Company, rng: np.random.Generator) -> None:
    last_rev = (
        ledger.get(c.cid, "revenue", ledger.last_fy)
        if c.kind == "tech"
        else ledger.get(c.cid, "nii", ledger.last_fy)
    )
    units = int(last_rev.value) // c.scale
    lo = int(units * rng.uniform(1.05, 1.1))
    ledger.guidance[c.cid] = (lo * c.scale, int(lo * rng.uniform(1.03, 1.05)) * c.scale)
    fy = int(rng.integers(ledger.first_fy, ledger.last_fy + 1))
    d = c.calendar.quarter_end(fy, 2) + dt.timedelta(days=int(rng.integers(10, 60)))
    ledger.officer_change[c.cid] = (fy, d)
    for y in range(ledger.first_fy, ledger.last_fy + 1):
        if c.kind == "bank":
            ledger.dividend[(c.cid, y)] = round(float(rng.uniform(0.2, 0.6)), 2)
        else:
            ledger.buyback[(c.cid, y)] = int(rng.integers(2, 20)) * 50_000_000
        ledger.ceo_pay[(c.cid, y)] = int(rng.integers(3_000, 14_000)) * 1_000


def _plant_restatements(ledger: Ledger, rng: np.random.Generator) -> None:
    """Two kinds: an explicit 10-K/A restatement of a year's figures, and a quiet change of a
    prior-year balance that first shows in the next 10-K's comparative column."""
    if ledger.last_fy == ledger.first_fy:
        return
    techs = [c for c in ledger.companies if c.kind == "tech"]
    banks = [c for c in ledger.companies if c.kind == "bank"]
    for group_i, group in enumerate((techs, banks)):
        for k, c in enumerate(group):
            if k % 3 == 0:  # explicit restatement via 10-K/A
                fy = ledger.first_fy + (k // 3 + group_i) % (ledger.last_fy - ledger.first_fy)
                base_10k = accepted_date(c, "10-K", fy, None)
                effective = base_10k + dt.timedelta(days=int(rng.integers(75, 95)))
                via = doc_id_for(c, "10-K/A", fy, None, n=2 if c.part3_by_amendment else 1)
                if c.kind == "tech":
                    delta_units = -int(
                        int(ledger.get(c.cid, "op_income", fy, 4).value)
                        // c.scale
                        * rng.uniform(0.12, 0.2)
                    )
                    items = [("op_income", delta_units), ("net_income", int(delta_units * 0.79))]
                else:
                    delta_units = int(
                        int(ledger.get(c.cid, "provision", fy, 4).value)
                        // c.scale
                        * rng.uniform(0.25, 0.4)
                    )
                    items = [("provision", delta_units), ("net_income", -int(delta_units * 0.79))]
                for concept, du in items:
                    for fq in (4, None):
                        f = ledger.get(c.cid, concept, fy, fq)
                        ledger.restatements[f.fact_id] = Restatement(
                            f.fact_id, f.value, int(f.value) + du * c.scale, effective, via, False
                        )
                for fq in (4, None):
                    eps = ledger.get(c.cid, "eps", fy, fq)
                    ni = ledger.get(c.cid, "net_income", fy, fq)
                    ratio = float(eps.value) / float(ni.value) if ni.value else 0.0
                    new_eps = round(ledger.restatements[ni.fact_id].new * ratio, 2)
                    if new_eps == eps.value:  # a change below a cent is not a restated EPS
                        continue
                    ledger.restatements[eps.fact_id] = Restatement(
                        eps.fact_id, eps.value, new_eps, effective, via, False
                    )
            elif k % 3 == 1:  # quiet restatement of a prior fiscal-year-end balance
                fy = ledger.last_fy - 1
                concept = "rpo" if c.kind == "tech" else "deposits"
                nxt = accepted_date(c, "10-K", fy + 1, None)
                via = doc_id_for(c, "10-K", fy + 1, None)
                for fq in (None, 4):
                    f = ledger.get(c.cid, concept, fy, fq)
                    bump = int(int(f.value) // c.scale * 0.013) or 1
                    ledger.restatements[f.fact_id] = Restatement(
                        f.fact_id, f.value, int(f.value) + bump * c.scale, nxt, via, True
                    )
