"""The adaptation-cost economics of a shared protocol: N×M versus N+M.

Without a standard, each of N applications writes its own adapter for each of
M tools: N×M adapters. With a protocol, each application implements a client
once and each tool implements a server once: N+M implementations. The seeds'
two worked examples, 3 apps × 4 tools (12 against 7) and 100 × 10,000
(1,000,000 against 10,100), are ``compare(3, 4)`` and ``compare(100, 10_000)``.

That count assumes every pair is wanted and a protocol implementation costs as
much as one adapter. The richer model drops both assumptions so the argument
can be tested rather than believed:

- ``density``: the share of app-tool pairs actually wanted. Point-to-point
  builds ``density·N·M`` adapters; the protocol still builds ``N+M``.
- ``Costs``: effort to build, maintain per year, and touch for one interface
  revision, separately for an adapter and a protocol implementation, in one
  unit (building one adapter = 1).
- Break-even: the density, or the number of apps for given M, where the two
  regimes cost the same; ``cumulative_cost`` follows both as N and M grow.

Left out: who pays (the protocol spreads work over many parties), the value of
pairs nobody has wired yet, and tools that no app wants (we charge the
protocol for every tool). Counts are expected values, so they can be fractional.

This module is pure arithmetic. The pictures and the live explorer live in
``mcplab/economics/plots.py``; the package (``from mcplab import economics``) hands
on both, the plots only when first asked for, so importing the model never imports
matplotlib or ipywidgets.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from mcplab.i18n import N_, _

Regime = Literal["point-to-point", "protocol"]
POINT_TO_POINT: Regime = "point-to-point"
PROTOCOL: Regime = "protocol"
N_("point-to-point"), N_("protocol")  # the regimes' names as tables and plots show them
REGIMES: tuple[Regime, ...] = (POINT_TO_POINT, PROTOCOL)

# The seeds' two worked examples, as (apps, tools).
SEED_EXAMPLES: tuple[tuple[int, int], ...] = ((3, 4), (100, 10_000))


@dataclass(frozen=True)
class Comparison:
    """Both counts for N apps and M tools, what the protocol saves, and the ratio."""

    n: int
    m: int
    point_to_point: int
    protocol: int
    saving: int
    ratio: float  # point_to_point / protocol; above 1 the protocol needs fewer pieces

    def __str__(self) -> str:
        return _("{n:,} apps × {m:,} tools: {point_to_point:,} adapters vs {protocol:,} implementations "
                 "(saves {saving:,}, ratio {ratio:,.2f})", n=self.n, m=self.m, point_to_point=self.point_to_point,
                 protocol=self.protocol, saving=self.saving, ratio=self.ratio)


@dataclass(frozen=True)
class Costs:
    """Effort per piece, in adapter-builds (building one adapter costs 1 by default).

    The defaults are the seeds' assumption: an implementation costs what an adapter
    costs, and nothing is spent after the build.
    """

    adapter_build: float = 1.0
    implementation_build: float = 1.0
    adapter_upkeep: float = 0.0  # per adapter per year
    implementation_upkeep: float = 0.0  # per implementation per year
    adapter_revision: float = 0.0  # to touch one adapter for one interface revision
    implementation_revision: float = 0.0  # to touch one implementation for one revision

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"Costs.{name} must be a finite number >= 0, got {value!r}")
        if self.adapter_build == 0 or self.implementation_build == 0:
            raise ValueError("build costs must be > 0: a piece that costs nothing is not a piece")

    def rates(self, regime: Regime) -> tuple[float, float, float]:
        """(build, upkeep per year, one revision) for one piece of ``regime``."""
        if _check_regime(regime) == POINT_TO_POINT:
            return self.adapter_build, self.adapter_upkeep, self.adapter_revision
        return self.implementation_build, self.implementation_upkeep, self.implementation_revision

    def per_piece(self, regime: Regime, years: float = 0, revisions: float = 0) -> float:
        """Lifetime effort of one piece: build, plus upkeep each year, plus each revision."""
        build, upkeep, revision = self.rates(regime)
        return build + years * upkeep + revisions * revision


SEED_COSTS = Costs()
# A guess to argue with: an implementation is three adapters' work (it must handle the
# whole protocol, not one pairing) but cheaper to keep alive for its size, since one SDK
# upgrade covers it while a bespoke adapter breaks whenever either side changes.
ILLUSTRATIVE_COSTS = Costs(implementation_build=3.0, adapter_upkeep=0.25,
                           implementation_upkeep=0.5, adapter_revision=0.5,
                           implementation_revision=1.5)


@dataclass(frozen=True)
class RegimeCost:
    """One regime's bill: how many pieces, and what they cost to build, keep, revise."""

    regime: Regime
    pieces: float
    build: float
    upkeep_per_year: float
    per_revision: float
    total: float  # build + years of upkeep + revisions


@dataclass(frozen=True)
class Summary:
    """Both bills for one scenario, their ratio, and the two break-even points."""

    n: int
    m: int
    density: float
    years: int
    revisions: int
    point_to_point: RegimeCost
    protocol: RegimeCost
    ratio: float  # point-to-point total / protocol total
    break_even_density: float
    break_even_n: float

    def table(self) -> str:
        """A plain-text table, stable enough to store in a notebook."""
        rows = [(_("pieces built"), self.point_to_point.pieces, self.protocol.pieces),
                (_("build"), self.point_to_point.build, self.protocol.build),
                (_("upkeep / year"), self.point_to_point.upkeep_per_year, self.protocol.upkeep_per_year),
                (_("one revision"), self.point_to_point.per_revision, self.protocol.per_revision),
                (_("total, {years} y + {revisions} rev", years=self.years, revisions=self.revisions),
                 self.point_to_point.total, self.protocol.total)]
        lines = [f"{'':<20}{_pad(_(POINT_TO_POINT), 16, right=True)}{_pad(_(PROTOCOL), 14, right=True)}"]
        lines += [f"{_pad(label, 20)}{_num(a):>16}{_num(b):>14}" for label, a, b in rows]
        cheaper = _(PROTOCOL) if self.ratio > 1 else _(POINT_TO_POINT) if self.ratio < 1 else _("neither")
        lines += [_("N = {n:,}, M = {m:,}, density = {density:.4g}: ratio {ratio:,.3g}, cheaper: {cheaper}",
                    n=self.n, m=self.m, density=self.density, ratio=self.ratio, cheaper=cheaper),
                  _("break-even density {density}, break-even N {n}", density=_num(self.break_even_density, 4),
                    n=_num(self.break_even_n, 4))]
        return "\n".join(lines)


@dataclass(frozen=True)
class YearCost:
    """Cumulative spend of both regimes at the end of one year."""

    year: int
    n: int
    m: int
    point_to_point: float
    protocol: float


def adapters(n: int, m: int, regime: Regime) -> int:
    """Pieces of integration work when every app uses every tool: ``adapters(3, 4, "protocol") == 7``."""
    _check_sizes(n, m)
    return n * m if _check_regime(regime) == POINT_TO_POINT else n + m


def compare(n: int, m: int) -> Comparison:
    """The seeds' argument in numbers: ``compare(3, 4)`` → 12 adapters vs 7, saving 5."""
    p2p, protocol = adapters(n, m, POINT_TO_POINT), adapters(n, m, PROTOCOL)
    ratio = p2p / protocol if protocol else math.nan
    return Comparison(n, m, p2p, protocol, p2p - protocol, ratio)


def pieces(n: int, m: int, regime: Regime, *, density: float = 1.0) -> float:
    """Expected pieces built when only ``density`` of the pairs are wanted: ``density·N·M`` or ``N+M``."""
    _check_density(density)
    count = adapters(n, m, regime)
    return density * count if regime == POINT_TO_POINT else float(count)


def cost(n: int, m: int, regime: Regime, *, density: float = 1.0, costs: Costs = SEED_COSTS,
         years: float = 0, revisions: float = 0) -> float:
    """Lifetime effort of one regime; with the defaults it equals ``adapters(n, m, regime)``."""
    return pieces(n, m, regime, density=density) * costs.per_piece(regime, years, revisions)


def revision_cost(n: int, m: int, regime: Regime, *, density: float = 1.0,
                  costs: Costs = SEED_COSTS) -> float:
    """Effort of one interface revision: every adapter, or every implementation, touched once."""
    return pieces(n, m, regime, density=density) * costs.rates(regime)[2]


def break_even_density(n: int, m: int, *, costs: Costs = SEED_COSTS, years: float = 0,
                       revisions: float = 0) -> float:
    """The density at which both regimes cost the same; above it the protocol is cheaper.

    ``break_even_density(3, 4) == 7/12``. A value above 1 means point-to-point wins even
    when every pair is wanted; ``inf`` when there are no pairs at all.
    """
    _check_sizes(n, m)
    if n * m == 0:
        return math.inf
    per_adapter = costs.per_piece(POINT_TO_POINT, years, revisions)
    per_implementation = costs.per_piece(PROTOCOL, years, revisions)
    return (n + m) * per_implementation / (n * m * per_adapter)


def break_even_n(m: int, *, density: float = 1.0, costs: Costs = SEED_COSTS, years: float = 0,
                 revisions: float = 0) -> float:
    """The number of apps at which both regimes cost the same for M tools (``inf`` if never).

    Solves ``density·N·M·a = (N+M)·p``; for more apps than this the protocol is cheaper.
    ``break_even_n(4) == 4/3``: from 2 apps on, 4 tools are cheaper through a protocol.
    """
    _check_sizes(1, m)
    _check_density(density)
    per_adapter = costs.per_piece(POINT_TO_POINT, years, revisions)
    per_implementation = costs.per_piece(PROTOCOL, years, revisions)
    # Each extra app costs density·M adapters but only one implementation: if that is
    # not a saving, no number of apps makes it one.
    margin = density * m * per_adapter - per_implementation
    return m * per_implementation / margin if margin > 0 else math.inf


def summarize(n: int, m: int, *, density: float = 1.0, costs: Costs = SEED_COSTS,
              years: int = 0, revisions: int = 0) -> Summary:
    """Everything the explorer's table shows, for one scenario."""
    bills = []
    for regime in REGIMES:
        count = pieces(n, m, regime, density=density)
        build, upkeep, revision = costs.rates(regime)
        bills.append(RegimeCost(regime, count, count * build, count * upkeep, count * revision,
                                count * costs.per_piece(regime, years, revisions)))
    p2p, protocol = bills
    ratio = p2p.total / protocol.total if protocol.total else math.nan
    return Summary(n, m, density, years, revisions, p2p, protocol, ratio,
                   break_even_density(n, m, costs=costs, years=years, revisions=revisions),
                   break_even_n(m, density=density, costs=costs, years=years, revisions=revisions))


def cumulative_cost(n: int, m: int, years: int, *, app_growth: float = 0.0,
                    tool_growth: float = 0.0, revision_years: Iterable[int] = (),
                    density: float = 1.0, costs: Costs = SEED_COSTS) -> tuple[YearCost, ...]:
    """Running totals, year 0 (the first build) to ``years``, as N and M grow each year.

    Each year builds the pieces for new apps and tools, pays upkeep on all pieces, and,
    in ``revision_years``, touches every piece once. Growth is a yearly rate (0.5 = +50 %).
    """
    _check_sizes(n, m)
    revised = set(revision_years)
    totals = {regime: cost(n, m, regime, density=density, costs=costs) for regime in REGIMES}
    rows = [YearCost(0, n, m, totals[POINT_TO_POINT], totals[PROTOCOL])]
    for year in range(1, years + 1):
        apps, tools = round(n * (1 + app_growth) ** year), round(m * (1 + tool_growth) ** year)
        for regime in REGIMES:
            build, upkeep, revision = costs.rates(regime)
            now = pieces(apps, tools, regime, density=density)
            new = max(now - pieces(rows[-1].n, rows[-1].m, regime, density=density), 0.0)
            totals[regime] += new * build + now * upkeep + (now * revision if year in revised else 0.0)
        rows.append(YearCost(year, apps, tools, totals[POINT_TO_POINT], totals[PROTOCOL]))
    return tuple(rows)


def _check_sizes(n: int, m: int) -> None:
    for name, value in (("n", n), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} counts apps or tools: a whole number >= 0, got {value!r}")


def _check_regime(regime: str) -> Regime:
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    return regime  # type: ignore[return-value]


def _check_density(density: float) -> None:
    if not 0 <= density <= 1:
        raise ValueError(f"density is a share of app-tool pairs, between 0 and 1; got {density!r}")


def _pad(text: str, columns: int, right: bool = False) -> str:
    """``text`` padded to ``columns`` terminal columns (a Chinese character takes two)."""
    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    space = " " * max(columns - width, 0)
    return space + text if right else text + space


def _num(value: float, digits: int = 0) -> str:
    if math.isinf(value):
        return _("never") if value > 0 else "-inf"
    if digits:
        return f"{value:,.{digits}g}"
    return f"{value:,.0f}" if value == round(value) or abs(value) >= 100 else f"{value:,.1f}"
