"""Checks for Lab 08, the adaptation-cost economics (N×M versus N+M).

Each exercise's numbers are constants here and stated in the lab, so a check needs
only the student's answer. Wrong answers are matched against the usual slips
(multiplying where the protocol adds, forgetting the density, a percentage where a
share was asked) and get feedback that names the slip.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from mcplab import economics
from mcplab.economics import POINT_TO_POINT, PROTOCOL, Costs
from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, _

__all__ = [
    "check_adapter_counts",
    "check_when_protocol_wins",
    "check_break_even_density",
    "check_break_even_n",
    "check_revision_cost",
]

# Exercise 1: a company with 5 assistants (apps) and 8 internal tools.
COUNT_APPS, COUNT_TOOLS = 5, 8
# Exercise 2: the predicate is compared with the model on this grid.
GRID = range(1, 31)
BEYOND_GRID = [(100, 10_000), (1, 1_000_000), (2, 2), (10_000, 1), (3, 1_000)]  # a rule, not a table
# Exercise 3: the seeds' large example, every cost equal.
DENSITY_APPS, DENSITY_TOOLS = 100, 10_000
# Exercise 4: 10 tools, every pair wanted, one protocol implementation = 4 adapters of work.
BREAK_EVEN_TOOLS, BREAK_EVEN_COSTS = 10, Costs(implementation_build=4.0)
# Exercise 5: the 2026-07-28 revision lands on 20 apps, 500 tools, 10 % of pairs wired.
REVISION_APPS, REVISION_TOOLS, REVISION_DENSITY = 20, 500, 0.1
REVISION_COSTS = Costs(adapter_revision=0.5, implementation_revision=2.0)

SWAPPED = N_("Both numbers are right but swapped: the first is point-to-point, the second the protocol.")


@check(N_("a pair (point_to_point, protocol)"), (tuple, list))
def check_adapter_counts(answer: Any) -> Feedback:
    """Exercise 1: ``(point_to_point, protocol)`` for 5 apps and 8 tools."""
    n, m = COUNT_APPS, COUNT_TOOLS
    hint = _("Without a standard every app-tool pair needs its own adapter; "
             "with one, each side implements it once.")
    pair = _numbers(answer, 2)
    if pair is None:
        return failed(_("Expected a pair (point_to_point, protocol) of whole numbers, got {answer!r}.",
                        answer=answer), hint)
    p2p, protocol = pair
    want_p2p, want_protocol = economics.adapters(n, m, POINT_TO_POINT), economics.adapters(n, m, PROTOCOL)
    if (p2p, protocol) == (want_p2p, want_protocol):
        return passed(_("{n} × {m} = {p2p} adapters against {n} + {m} = {protocol} implementations: the protocol "
                        "saves {saved}.", n=n, m=m, p2p=want_p2p, protocol=want_protocol,
                        saved=want_p2p - want_protocol))
    if (p2p, protocol) == (want_protocol, want_p2p):
        return failed(_(SWAPPED), _("Answer (point_to_point, protocol)."))
    slips = []
    if p2p == want_p2p:
        slips.append(_("Point-to-point is right ({value}).", value=want_p2p))
    elif p2p == n + m:
        slips.append(_("Point-to-point: you added ({n} + {m}) where point-to-point multiplies.", n=n, m=m))
    else:
        slips.append(_("Point-to-point: {value} is not one adapter per app-tool pair.", value=p2p))
    if protocol == want_protocol:
        slips.append(_("The protocol count is right ({value}).", value=want_protocol))
    elif protocol == n * m:
        slips.append(_("Protocol: you multiplied ({n} × {m}) where the protocol adds.", n=n, m=m))
    else:
        slips.append(_("Protocol: {value} is not one implementation per app plus one per tool.", value=protocol))
    return failed(_(" ").join(slips), hint)


@check(N_("a function of (n, m) that returns True or False"), function=True)
def check_when_protocol_wins(answer: Any) -> Feedback:
    """Exercise 2: a function ``(n, m) -> bool``, True when N + M < N × M (every pair wanted)."""
    hint = _("Try small cases by hand: 1 app and 5 tools, 2 apps and 2 tools, 3 apps and 4 tools.")
    cases = [(n, m) for n in GRID for m in GRID] + BEYOND_GRID
    for n, m in cases:
        truth = economics.adapters(n, m, PROTOCOL) < economics.adapters(n, m, POINT_TO_POINT)
        try:
            said = answer(n, m)
            if inspect.iscoroutine(said):
                said.close()
                return failed(_("Your function returned a coroutine: write it with def, not async def."), hint)
            said = bool(said)
        except Exception as error:  # the student's code: report, do not crash the lab
            return failed(_("Your function raised {error} for n={n}, m={m}.", error=type(error).__name__,
                            n=n, m=m), hint)
        if said != truth:
            return failed(_counterexample(n, m, said),
                          _("Count both regimes at that N and M; 'wins' means strictly fewer pieces."))
    return passed(_("Right on every N, M from 1 to 30: the protocol needs fewer pieces exactly when "
                    "both sides have at least 2 members and not both exactly 2, i.e. (N-1)(M-1) > 1."))


@check(N_("a number between 0 and 1"), (int, float))
def check_break_even_density(answer: Any) -> Feedback:
    """Exercise 3: the density at which 100 apps × 10,000 tools cost the same both ways."""
    n, m = DENSITY_APPS, DENSITY_TOOLS
    want = economics.break_even_density(n, m)
    hint = _("Point-to-point builds density·N·M adapters, the protocol N + M: set them equal and solve.")
    value = _number(answer)
    if value is None:
        return failed(_("Expected a number between 0 and 1, got {answer!r}.", answer=answer), hint)
    if math.isclose(value, want, rel_tol=1e-3):
        return passed(_("Break-even at {want:.4f} ({want:.2%} of pairs), about {tools:.0f} of the {m:,} tools per "
                        "app: below that, point-to-point builds less.", want=want, tools=want * m, m=m))
    slips: list[tuple[float, str]] = [
        (want * 100, _("That looks like a percentage; give the share as a fraction between 0 and 1.")),
        (1 / want, _("That is the saving ratio at full density; the break-even density is its reciprocal.")),
        (1 / n, _("That is 1/N only: (N + M)/(N·M) = 1/N + 1/M, so add 1/{m:,}.", m=m)),
        (1 / m, _("That is 1/M only: (N + M)/(N·M) = 1/N + 1/M, so add 1/{n}.", n=n)),
        (want * m, _("That is how many tools each app would use (density × M); "
                     "the question asks for the density.")),
        (1 - want, _("That is the share of pairs left unwired at break-even, not the share wanted.")),
    ]
    for slip_value, message in slips:
        if math.isclose(value, slip_value, rel_tol=1e-3):
            return failed(message, hint)
    side = _("point-to-point is still cheaper") if value < want else _("the protocol is already cheaper")
    return failed(_("At density {value:g} {side}, so that is not where the costs meet.", value=value, side=side),
                  hint)


@check(N_("a whole number of apps"), (int, float))
def check_break_even_n(answer: Any) -> Feedback:
    """Exercise 4: the fewest apps for which 10 tools are cheaper through the protocol."""
    m, costs = BREAK_EVEN_TOOLS, BREAK_EVEN_COSTS
    exact = economics.break_even_n(m, costs=costs)
    want = math.floor(exact) + 1  # strictly cheaper, and apps come whole
    hint = _("Point-to-point costs {m}·N; the protocol costs {price:g}·(N + {m}). Find the first whole N where "
             "the protocol is lower.", m=m, price=costs.implementation_build)
    value = _number(answer)
    if value is None:
        return failed(_("Expected a whole number of apps, got {answer!r}.", answer=answer), hint)

    def bill(apps: float) -> str:
        p2p = economics.cost(int(apps), m, POINT_TO_POINT, costs=costs)
        protocol = economics.cost(int(apps), m, PROTOCOL, costs=costs)
        return _("point-to-point {p2p:g}, protocol {protocol:g}", p2p=p2p, protocol=protocol)

    if value == want:
        return passed(_("At {want} apps: {bill}. One app fewer: {fewer}.", want=want, bill=bill(want),
                        fewer=bill(want - 1)))
    if math.isclose(value, exact, rel_tol=1e-3):
        return failed(_("{value:g} is where the two lines cross, but apps come whole.", value=value),
                      _("Round up to the first whole N where the protocol is strictly cheaper."))
    unit = economics.break_even_n(m)
    if math.isclose(value, unit, rel_tol=1e-3) or value == math.floor(unit) + 1:
        return failed(_("You priced an implementation like one adapter; here it is 4 adapters of work."), hint)
    if value < 1:
        return failed(_("{value:g} apps is not a scenario: there is at least one app.", value=value), hint)
    if value != int(value):
        return failed(_("{value:g} is not a whole number of apps.", value=value), hint)
    if value < want:
        return failed(_("At {apps} apps: {bill}, so point-to-point is still cheaper.", apps=int(value),
                        bill=bill(value)), hint)
    return failed(_("At {apps} apps the protocol is cheaper, but it already is at fewer: the question asks for the "
                    "smallest.", apps=int(value)), hint)


@check(N_("a pair (point_to_point, protocol)"), (tuple, list))
def check_revision_cost(answer: Any) -> Feedback:
    """Exercise 5: ``(point_to_point, protocol)`` cost of one revision, 20 apps × 500 tools at 10 %."""
    n, m, density, costs = REVISION_APPS, REVISION_TOOLS, REVISION_DENSITY, REVISION_COSTS
    want = tuple(economics.revision_cost(n, m, regime, density=density, costs=costs)
                 for regime in (POINT_TO_POINT, PROTOCOL))
    hint = _("A revision touches every adapter that exists (density·N·M of them) or every "
             "implementation (N + M), each at its own price.")
    pair = _numbers(answer, 2, whole=False)
    if pair is None:
        return failed(_("Expected a pair (point_to_point, protocol) of numbers, got {answer!r}.", answer=answer),
                      hint)
    p2p, protocol = pair
    if _close(pair, want):
        return passed(_("{adapters:,.0f} adapters × {adapter_price:g} = {p2p:,.0f} against {pieces} implementations "
                        "× {price:g} = {protocol:,.0f}: at this density the revision is cheaper without a standard.",
                        adapters=density * n * m, adapter_price=costs.adapter_revision, p2p=want[0], pieces=n + m,
                        price=costs.implementation_revision, protocol=want[1]))
    if _close(pair, want[::-1]):
        return failed(_(SWAPPED), _("Answer (point_to_point, protocol)."))
    slips = []
    if math.isclose(p2p, want[0]):
        slips.append(_("Point-to-point is right ({value:g}).", value=want[0]))
    elif math.isclose(p2p, n * m * costs.adapter_revision):
        slips.append(_("Point-to-point: you touched every pair, but only 10 % of the pairs have an adapter."))
    elif math.isclose(p2p, density * n * m):
        slips.append(_("Point-to-point: that counts the adapters touched, and each costs 0.5 to touch."))
    else:
        slips.append(_("Point-to-point: {value:g} is not (adapters that exist) × 0.5.", value=p2p))
    if math.isclose(protocol, want[1]):
        slips.append(_("The protocol cost is right ({value:g}).", value=want[1]))
    elif math.isclose(protocol, n + m):
        slips.append(_("Protocol: that counts the implementations, and each costs 2 to touch."))
    elif math.isclose(protocol, (n + m) * costs.adapter_revision):
        slips.append(_("Protocol: you priced an implementation at an adapter's 0.5; it costs 2."))
    elif math.isclose(protocol, density * (n + m) * costs.implementation_revision):
        slips.append(_("Protocol: density does not shrink the protocol side; "
                       "every app and tool implements it."))
    else:
        slips.append(_("Protocol: {value:g} is not (N + M) × 2.", value=protocol))
    return failed(_(" ").join(slips), hint)


def _number(answer: Any) -> float | None:
    if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer):
        return None
    return float(answer)


def _numbers(answer: Any, count: int, whole: bool = True) -> tuple[Any, ...] | None:
    if not isinstance(answer, (tuple, list)) or len(answer) != count:
        return None
    values = [_number(item) for item in answer]
    if any(value is None for value in values):
        return None
    if whole:
        if any(value != int(value) for value in values):  # type: ignore[arg-type]
            return None
        return tuple(int(value) for value in values)  # type: ignore[arg-type]
    return tuple(values)


def _close(pair: tuple[float, ...], want: tuple[float, ...]) -> bool:
    return all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(pair, want))


def _counterexample(n: int, m: int, said: bool) -> str:
    p2p = economics.adapters(n, m, POINT_TO_POINT)
    protocol = economics.adapters(n, m, PROTOCOL)
    verdict = _("wins") if said else _("does not win")
    return _("For N={n}, M={m} your function says the protocol {verdict}, but point-to-point needs {p2p} and the "
             "protocol {protocol}.", n=n, m=m, verdict=verdict, p2p=p2p, protocol=protocol)

