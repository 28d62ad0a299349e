"""The goals of the speed issue, checked against one run's results, and the table bench/run.py prints.

Every ratio is this project / the official SDK from the same run (contenders alternated round by
round), except two. The floor ratio is against a raw JSON-lines echo driven by a raw asyncio client
(bench/floor.py and driver.py's ``raw`` client): the most an async Python client and server can do
over a pipe, given as information and not as a goal (what a student reads comes first). The
TypeScript ratios set the weather server beside the TypeScript SDK's reference server
(server-everything), both driven by that same raw client, so only the servers differ. The
floor ratio is given again with the CPUs fixed, each pair on one CPU and each on two (client on
one, server on the other): left free, the system places the two processes as it likes, run by run,
so the free ratio swings with where they land as much as with what they do (run.py, PLACED_PAIRS).
The TypeScript server's cold start is given twice: started by npx, as its README and most MCP host
configurations start it (npx resolves the package before Node starts), and by node directly, the
least it can take. A goal whose numbers are missing is shown as "–" with the reason, never as met.
"""

from __future__ import annotations

import math
from typing import Any

from harness import ratio

OURS, SDK, FLOOR = "mcplab → mcplab", "sdk → sdk", "raw → floor"
RAW_OURS, RAW_TS = "raw → mcplab", "raw → ts"  # the same client against each server
PLACEMENTS = ("one CPU", "two CPUs")  # the floor comparison again, CPUs fixed (run.py PLACED_PAIRS)
COLD_LABELS = {"mcplab": "mcplab servers/weather.py", "sdk": "SDK servers/weather_sdk.py",
               "ts": "TypeScript server-everything (Node)", "ts-npx": "  the same, started by npx",
               "floor": "floor bench/floor.py (JSON-lines echo)",
               "floor-asyncio": "  the same in an asyncio loop (--loop)", "floor-anyio": "  the same in anyio's loop"}
MIB = 1024


IMPORT_LABELS = {"mcplab": "mcplab client: from mcplab import Client, stdio",
                 "sdk": "SDK client: from mcp import ClientSession, ... stdio_client",
                 "import mcplab": "import mcplab", "import mcp": "import mcp"}


def _group(results: dict, group: str) -> dict:
    return results.get("round_trips", {}).get("groups", {}).get(group, {})


def _pair(results: dict, group: str, key: str) -> dict:
    return _group(results, group).get("pairs", {}).get(key, {})


def _status(section: dict) -> str:
    return section.get("status", "not run")


def goals(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each goal: what, the measured value, the target, met (True/False/None) and why when None."""
    found: list[dict[str, Any]] = []

    def goal(what: str, value: float | None, op: str, target: float, unit: str, why: str) -> None:
        met = None if value is None else (value >= target if op == "≥" else value <= target if op == "≤"
                                          else value < target)
        found.append({"goal": what, "value": value, "target": f"{op} {target:g}{unit}", "met": met,
                      **({"why": why} if value is None else {})})

    def information(what: str, value: float | None, why: str) -> None:
        found.append({"goal": what, "value": value, "target": "information", "met": None,
                      "why": why if value is None else "information, not a goal"})

    def rate_ratio(group: str, a: str, b: str) -> tuple[float | None, str]:
        first, second = _pair(results, group, a), _pair(results, group, b)
        for key, pair in ((a, first), (b, second)):
            if pair.get("status") != "ok":
                trips = results.get("round_trips", {})
                if trips.get("status") != "ok":
                    return None, _status(trips)
                why = pair.get("status") or _group(results, group).get("status") or "not measured in this run"
                return None, f"{key} over {group}: {why}"
        return ratio(first.get("per_s"), second.get("per_s")), ""

    for transport, target in (("stdio", 5.0), ("http", 1.5)):
        for era in ("legacy", "modern"):
            value, why = rate_ratio(f"{transport}/{era}", OURS, SDK)
            goal(f"{transport} round trips/s, {era}: mcplab pair / SDK pair", value, "≥", target, "×", why)
    # The raw echo is what an async Python pair could do if it did nothing: information, not a goal.
    value, why = rate_ratio("stdio/legacy", OURS, FLOOR)
    information("stdio round trips/s, legacy: mcplab pair / raw JSON-lines echo", value, why)
    # Over HTTP the same echo, httpx against one bare Starlette endpoint, beside the SDK's pair: the most any
    # pair on those libraries could be ahead of the SDK's, the ceiling over the 1.5x goal above.
    for era in ("legacy", "modern"):
        value, why = rate_ratio(f"http/{era}", FLOOR, SDK)
        information(f"http round trips/s, {era}: raw echo pair / SDK pair", value, why)
    for placement in PLACEMENTS:
        value, why = rate_ratio("stdio/legacy", f"{OURS}, {placement}", f"{FLOOR}, {placement}")
        information(f"stdio legacy, mcplab pair / raw echo, each pair on {placement}", value, why)
    for transport in ("stdio", "http"):
        value, why = rate_ratio(f"{transport}/legacy", RAW_OURS, RAW_TS)
        goal(f"{transport} calls/s, raw client: weather server / TypeScript server", value, "≥", 1.2, "×", why)
    # What any Python server could reach there: the echo with no event loop at all, in anyio's loop, and
    # a task per message in anyio's loop (as the stdio runner answers requests).
    for server, what in (("floor", "echo, no event loop / TypeScript server"),
                         ("floor-anyio", "echo in anyio / TypeScript server"),
                         ("floor-anyio-tasks", "anyio, a task each / TypeScript server")):
        value, why = rate_ratio("stdio/legacy", f"raw → {server}", RAW_TS)
        information(f"stdio calls/s, raw client: {what}", value, why)

    for key, what, theirs, target in (
            ("cold_start", "cold start (spawn → first tools/list): mcplab / SDK", "sdk", 0.2),
            ("cold_start", "cold start: weather server / TypeScript server, npx", "ts-npx", 0.25),
            ("cold_start", "cold start: weather server / TypeScript server, node", "ts", 0.25),
            ("import", "import of the client (less interpreter start): mcplab / SDK", "sdk", 0.1)):
        section = results.get(key, {})
        values = {name: v["median"] if isinstance(v, dict) else v
                  for name, v in section.get("ms" if key == "cold_start" else "net_ms", {}).items()}
        why = "; ".join(f"{n}: {r}" for n, r in section.get("unavailable", {}).items()) or _status(section)
        goal(what, ratio(values.get("mcplab"), values.get(theirs)), "≤", target, "×", why)

    ours, sdk = _pair(results, "stdio/legacy", OURS), _pair(results, "stdio/legacy", SDK)
    value = ratio(ours.get("server_peak_kib"), sdk.get("server_peak_kib"))
    goal("server peak memory (stdio, after the rounds): mcplab / SDK", value, "≤", 0.5, "×",
         ours.get("status") or sdk.get("status") or "not run")

    notebooks = results.get("notebooks", {})
    value = notebooks.get("seconds") if notebooks.get("exit_code") == 0 else None
    why = _status(notebooks) if "seconds" not in notebooks else f"pytest failed: {notebooks.get('summary')}"
    goal("notebook suite under nbval (seconds)", value, "<", 60, " s", why)
    return found


# --- the table -----------------------------------------------------------------------------------------

def _num(value: float | None, digits: int = 0, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}{unit}"


def _mib(kib: float | None) -> str:
    return _num(kib / MIB, 1) if kib else "–"


def _times(value: float | None) -> str:
    return _num(value, 2, "×") if value is not None else "–"


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    out = [f"mcplab bench · {meta['date']} · mcplab {meta['mcplab']} · official SDK mcp {meta['sdk']} · "
           f"Python {meta['python']} · {meta['cpus']} CPUs",
           f"load average {' '.join(map(str, meta['load_start']))} at start, "
           f"{' '.join(map(str, meta.get('load_end', [])))} at end; {meta.get('seconds', 0):.0f} s in all", ""]

    imports = results.get("import", {})
    out.append(f"Import time: wall time of `python -c ...` less a bare interpreter start "
               f"({_num(imports.get('baseline_ms'), 0, ' ms')}), median of {imports.get('wall_ms', {}).get('mcplab', {}).get('n', '–')}")
    if "net_ms" in imports:
        out.append(f"  {'':60s} {'import':>8s} {'wall':>7s} {'p10':>7s} {'p90':>7s}  vs SDK")
        sdk = imports["net_ms"].get("sdk")
        for name, label in IMPORT_LABELS.items():
            if name not in imports["statements"]:
                continue
            if name not in imports["net_ms"]:
                out.append(f"  {label:60s} not available: {imports['unavailable'].get(name, '?')[:80]}")
                continue
            wall = imports["wall_ms"][name]
            vs = _times(ratio(imports["net_ms"][name], sdk)) if name in ("mcplab", "sdk") else ""
            out.append(f"  {label:60s} {_num(imports['net_ms'][name], 0, ' ms'):>8s} {_num(wall['median'], 0):>7s} "
                       f"{_num(wall['p10'], 0):>7s} {_num(wall['p90'], 0):>7s}  {vs}")
    else:
        out.append(f"  {_status(imports)}")
    out.append("")

    cold = results.get("cold_start", {})
    out.append("Cold start: spawn the server → first tools/list answered (legacy handshake, raw client)")
    if "ms" in cold:
        out.append(f"  {'server':40s} {'median':>8s} {'p10':>7s} {'p90':>7s} {'peak RSS':>10s}  vs SDK")
        sdk = cold["ms"].get("sdk", {}).get("median")
        for name, label in COLD_LABELS.items():
            if name not in cold["ms"]:
                out.append(f"  {label:40s} not available: {cold['unavailable'].get(name, '?')[:80]}")
                continue
            ms = cold["ms"][name]
            out.append(f"  {label:40s} {_num(ms['median'], 0, ' ms'):>8s} {_num(ms['p10'], 0):>7s} "
                       f"{_num(ms['p90'], 0):>7s} {_mib(cold['server_peak_kib'].get(name)) + ' MiB':>10s}  "
                       f"{_times(ratio(ms['median'], sdk))}")
    else:
        out.append(f"  {_status(cold)}")
    out.append("")

    trips = results.get("round_trips", {})
    if "groups" not in trips:
        out += ["Round trips", f"  {_status(trips)}", ""]
    for name, group in trips.get("groups", {}).items():
        transport, era = name.split("/")
        if "pairs" not in group:
            out += [f"Round trips over {transport}, {era} era", f"  {_status(group)}", ""]
            continue
        out.append(f"Round trips over {transport}, {era} era: sequential tools/call get_weather, "
                   f"{group['rounds']} rounds × {group['calls_per_round']} calls, median round "
                   f"(load {group['load_before'][0]} → {group['load_after'][0]})")
        out.append(f"  {'client → server':26s} {'calls/s':>9s} {'p50 µs':>8s} {'p99 µs':>8s} "
                   f"{'client MiB':>11s} {'server MiB':>11s}  vs SDK pair")
        sdk_rate = group["pairs"].get(SDK, {}).get("per_s")
        for key, pair in group["pairs"].items():
            if pair["status"] != "ok":
                out.append(f"  {key:26s} {pair['status']}")
                continue
            out.append(f"  {key:26s} {_num(pair['per_s']):>9s} {_num(pair['p50_us']):>8s} {_num(pair['p99_us']):>8s} "
                       f"{_mib(pair['client_peak_kib']):>11s} {_mib(pair['server_peak_kib']):>11s}  "
                       f"{_times(ratio(pair['per_s'], sdk_rate))}")
        out.append("")

    notebooks = results.get("notebooks", {})
    if "seconds" in notebooks:
        out.append(f"Notebook suite: {notebooks['seconds']:.1f} s  (`{notebooks['command']}`: {notebooks['summary']})")
    else:
        out.append(f"Notebook suite: {_status(notebooks)}")
    out.append("")

    out.append("Goals (ratios are this project / official SDK, from this run)")
    for g in results.get("goals", []):
        mark = "·" if g["target"] == "information" else {True: "✓", False: "✗", None: "–"}[g["met"]]
        unit = " s" if g["target"].endswith(" s") else "×"
        target = g["target"] if g["target"] == "information" else f"goal {g['target']}"
        out.append(f"  {mark} {g['goal']:65s} {_num(g['value'], 1 if unit == ' s' else 2, unit):>8s}  {target}")
        if g["value"] is None:
            out.append(f"      {g.get('why', '')[:150]}")
    return "\n".join(out)
