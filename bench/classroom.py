"""A classroom on JupyterHub, for real and measured: students log in, get the course, run a lab at once.

    python bench/classroom.py                      # 5, 10, 20, 30 students, Lab 02; a table and JSON
    python bench/classroom.py --students 3,8 --lab labs/00_start_here.ipynb
    python bench/classroom.py --students 25 --check    # Lab 06 and both graders: the same verdicts for all

Theory of operation
-------------------
``classroom_hub.py`` starts JupyterHub with the shipped configuration on 127.0.0.1. For each student,
:func:`start_student` creates the user and starts their server through the REST API (the shipped
start command copies the course into their home first); :func:`run_lab` opens the
lab as JupyterLab does (a session, so the kernel's working folder is the notebook's), runs every
code cell in order through the kernel's websocket, timing each, then stops the kernel. All students
run at once, while ``hub.by_student`` weighs each student's processes (peak resident memory).

``tests/test_jupyterhub.py`` uses the same pieces with 3 students; this script finds how far one
machine goes: the largest class with no cell over :data:`CELL_BUDGET` seconds, and what stopped it.

``--check`` asks what matters to a teacher on a busy machine: are the verdicts still right? Every
student runs Lab 06, then both graders on the lab solutions (:data:`GRADE_CELLS`, cells of their own
after the lab's); :func:`check_run` reads each student's outputs: both matrix summaries must say 7 of 7
as the spec says, and both cards must be full (no line failed or skipped). The report names the students
whose verdicts differ, and the slowest cell: its lab, its index in the notebook, its seconds, its student.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from classroom_hub import ROOT, Hub, by_student, proxy_command  # noqa: E402  (beside this file)

CELL_BUDGET = 15.0  # seconds: no student waits longer for one cell
OPEN_TIMEOUT = 180.0  # seconds to open a notebook's kernel before the student counts as failed
CELL_TIMEOUT = 120.0  # seconds before a cell counts as hung
CHECK_LAB = "labs/06_stateless.ipynb"
# Run in the student's kernel after the lab, from labs/ (the course copy has the solutions). The schemas
# folder the bench found is passed on, so the schema line is judged rather than skipped for want of data.
GRADE_CELLS = (
    "import os\nfrom mcplab import grade\nif {spec!r}: os.environ['MCPLAB_SPEC_DIR'] = {spec!r}\n"
    "print(grade.server('solutions/build/my_server.py'))",
    "print(grade.client('solutions/build/my_client.py'))",
)
SUMMARY = re.compile(r"^(\d+) rows over (\w+): (\d+) as the spec says(.*)$", re.M)
CARD = re.compile(r"^Report card · (server|client) .*?^(PASS|FAIL)[^\n]*$", re.M | re.S)


# --- one student -------------------------------------------------------------------------------

async def start_student(client, name: str) -> float:
    """Create the user and start their server; return the seconds until it answered."""
    began = time.monotonic()
    reply = await client.post(f"/hub/api/users/{name}")
    if reply.status_code not in (201, 409):
        raise RuntimeError(f"creating {name}: HTTP {reply.status_code} {reply.text}")
    reply = await client.post(f"/hub/api/users/{name}/server")
    if reply.status_code not in (201, 202):
        raise RuntimeError(f"starting {name}'s server: HTTP {reply.status_code} {reply.text}")
    while True:
        model = (await client.get(f"/hub/api/users/{name}")).json()
        server = model.get("servers", {}).get("")
        if server and server.get("ready"):
            return time.monotonic() - began
        if not model.get("pending") and not server:
            raise RuntimeError(f"{name}'s server did not start: {model}")
        await asyncio.sleep(0.25)


@dataclass
class LabRun:
    student: str
    open_seconds: float = 0.0  # from asking for the notebook's kernel to its first cell being sendable
    cell_seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # the text each cell printed or returned
    cells: list[str] = field(default_factory=list)  # each cell's place: "cell 31" in the notebook, or "extra 1"


async def run_lab(hub: Hub, client, name: str, lab: str, extra: tuple[str, ...] = (), stop: bool = True) -> LabRun:
    """Open ``lab`` (a path under the course) in a new kernel of ``name``'s, run its code cells and ``extra``."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    began = time.monotonic()
    notebook = (await client.get(f"/user/{name}/api/contents/{lab}")).json()
    cells = {f"cell {i}": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for i, c in enumerate(notebook["content"]["cells"]) if c["cell_type"] == "code"}
    cells |= {f"extra {i + 1}": code for i, code in enumerate(extra)}
    reply = await client.post(f"/user/{name}/api/sessions", json={
        "path": lab, "type": "notebook", "name": Path(lab).name, "kernel": {"name": "python3"}})
    if reply.status_code != 201:
        raise RuntimeError(f"{name}: opening {lab}: HTTP {reply.status_code} {reply.text}")
    session = reply.json()
    run = LabRun(name)
    session_id = uuid.uuid4().hex
    url = f"ws://127.0.0.1:{hub.port}/user/{name}/api/kernels/{session['kernel']['id']}/channels?session_id={session_id}"
    socket_ = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {hub.token}"},
                                                  connect_timeout=OPEN_TIMEOUT, request_timeout=OPEN_TIMEOUT))
    run.open_seconds = time.monotonic() - began
    try:
        for place, code in cells.items():
            began = time.monotonic()
            try:
                text, error = await asyncio.wait_for(_execute(socket_, session_id, code), CELL_TIMEOUT)
            except asyncio.TimeoutError:
                text, error = "", f"no answer within {CELL_TIMEOUT:g} s"
            run.cell_seconds.append(time.monotonic() - began)
            run.outputs.append(text)
            run.cells.append(place)
            if error:
                run.errors.append(error)
            if error in (f"no answer within {CELL_TIMEOUT:g} s", "the kernel's websocket closed"):
                break  # a kernel gone or stuck answers no later cell either: do not wait for each
    finally:
        socket_.close()
        if stop:
            await client.delete(f"/user/{name}/api/sessions/{session['id']}")
            await client.delete(f"/user/{name}/api/kernels/{session['kernel']['id']}")
    return run


async def _execute(socket_, session_id: str, code: str) -> tuple[str, str]:
    """Send one execute_request; collect what it printed until the kernel is idle again."""
    msg_id = uuid.uuid4().hex
    await socket_.write_message(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": session_id, "username": "teacher",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    text, error, replied, idle = [], "", False, False
    while not (replied and idle):
        raw = await socket_.read_message()
        if raw is None:
            return "".join(text), "the kernel's websocket closed"
        message = json.loads(raw)
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            text.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            text.append(content.get("data", {}).get("text/plain", "") + "\n")
        elif kind == "error":
            error = f"{content['ename']}: {content['evalue']}"
        elif kind == "execute_reply":
            replied = True
            if content["status"] != "ok" and not error:
                error = content.get("ename", content["status"])
        elif kind == "status" and content["execution_state"] == "idle":
            idle = True
    return "".join(text), error


# --- the teacher's check -----------------------------------------------------------------------

def check_run(run: LabRun) -> list[str]:
    """Where this student's verdicts differ from the lab's: each matrix 7 of 7, each grader card full."""
    printed = "".join(run.outputs)
    problems = []
    summaries: dict[str, re.Match] = {}
    for found in SUMMARY.finditer(printed):
        summaries.setdefault(found[2], found)  # the lab's own matrix comes first, an exercise's later
    for transport in ("stdio", "http"):
        found = summaries.get(transport)
        if found is None:
            problems.append(f"no matrix summary over {transport}")
        elif not (found[1] == found[3] == "7" and not found[4]):
            problems.append(f"matrix: {found[0]}")
    cards = {found[1]: found[0].splitlines() for found in CARD.finditer(printed)}
    for role in ("server", "client"):
        card = cards.get(role)
        if card is None:
            problems.append(f"no {role} card")
            continue
        short = [line.strip() for line in card if line.startswith(("  ✗", "  –"))]  # failed, skipped
        if short or not card[-1].startswith("PASS"):
            problems.append(f"{role} card: " + "; ".join(short or card[-1:]))
    return problems


def slowest_cell(lab: str, runs: list[LabRun]) -> dict:
    """The one cell that kept a student waiting longest, and whose it was."""
    seconds, place, student = max(((s, c, r.student) for r in runs for s, c in zip(r.cell_seconds, r.cells)),
                                  default=(0.0, "", ""))
    return {"lab": lab, "cell": place, "seconds": round(seconds, 1), "student": student}


# --- the measurement ----------------------------------------------------------------------------

async def _class_of(hub: Hub, count: int, lab: str, offset: int, extra: tuple[str, ...] = ()) -> dict:
    names = [f"student{offset + i:03d}" for i in range(count)]
    peaks: dict[str, dict[str, int]] = {}
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            for student, row in by_student(hub.mark).items():
                peak = peaks.setdefault(student, dict(row))
                for key, value in row.items():
                    peak[key] = max(peak[key], value)
            await asyncio.sleep(0.25)

    async with hub.client() as client:
        sampler = asyncio.ensure_future(sample())
        try:
            began = time.monotonic()
            startup = await asyncio.gather(*(start_student(client, n) for n in names), return_exceptions=True)
            ready = time.monotonic() - began
            started = [n for n, r in zip(names, startup) if not isinstance(r, BaseException)]
            began = time.monotonic()
            outcomes = [r for r in startup if isinstance(r, BaseException)]
            outcomes += await asyncio.gather(*(run_lab(hub, client, n, lab, extra) for n in started), return_exceptions=True)
            lab_seconds = time.monotonic() - began
        finally:
            done.set()
            await sampler
        await asyncio.gather(*(client.delete(f"/hub/api/users/{n}/server") for n in names), return_exceptions=True)
    runs = [r for r in outcomes if isinstance(r, LabRun)]
    failed = [f"{type(r).__name__}: {r}".splitlines()[0] for r in outcomes if not isinstance(r, LabRun)]
    cells = [s for r in runs for s in r.cell_seconds] or [float("nan")]
    mine = [peaks.get(n, {}) for n in names]
    return {"students": count, "all_ready_s": round(ready, 1), "slowest_start_s": round(max([t for t in startup if isinstance(t, float)] or [0]), 1),
            "lab_wall_s": round(lab_seconds, 1), "slowest_open_s": round(max([r.open_seconds for r in runs] or [0]), 1),
            "slowest_cell_s": round(max(cells), 2), "cells_over_budget": sum(s > CELL_BUDGET for s in cells),
            "slowest_cells": sorted({i + 1 for r in runs for i, s in enumerate(r.cell_seconds) if s > CELL_BUDGET / 3}),
            "over_budget_at": dict(Counter(place for r in runs for place, s in zip(r.cells, r.cell_seconds)
                                           if s > CELL_BUDGET)),  # "cell 31" or "extra 2" → how many students
            "errors": sum(len(r.errors) for r in runs) + len(failed), "failures": sorted(set(failed))[:3],
            "error_samples": sorted({e for r in runs for e in r.errors})[:3],
            "server_mib": round(sum(p.get("server_rss", 0) for p in mine) / len(mine) / 2**20, 1),
            "kernel_and_mcp_peak_mib": round(sum(p.get("kernel_rss", 0) for p in mine) / len(mine) / 2**20, 1),
            "mcp_servers_peak": max(p.get("mcp_servers", 0) for p in mine),
            "slowest": slowest_cell(lab, runs),
            "verdicts": {r.student: check_run(r) for r in runs} if extra else None,
            # what the extra cells printed, for the students whose verdicts differ: the cards say why
            "differing": {r.student: r.outputs[len(r.outputs) - len(extra):] for r in runs
                          if extra and check_run(r)}}


def check_line(row: dict) -> str:
    """The teacher's line of the table: how many students saw the right verdicts, and the slowest cell."""
    verdicts = row["verdicts"]
    right = sum(not problems for problems in verdicts.values())
    slowest = row["slowest"]
    line = (f"{row['students']} students: {right} of {row['students']} with both matrices 7 of 7 and both "
            f"grader cards full; slowest cell: {slowest['lab']} {slowest['cell']}, {slowest['seconds']:.1f} s, "
            f"{slowest['student']}")
    wrong = [f"  {student}: {'; '.join(problems)}" for student, problems in sorted(verdicts.items()) if problems]
    return "\n".join([line, *wrong[:5]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", default="5,10,20,30", help="class sizes to try in turn (default 5,10,20,30)")
    parser.add_argument("--lab", help="the lab every student runs (default labs/02_handshake.ipynb; "
                        f"with --check, {CHECK_LAB})")
    parser.add_argument("--check", action="store_true",
                        help="then grade the lab solutions in each kernel; check every matrix and card")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "classroom.json")
    args = parser.parse_args(argv)
    args.lab = args.lab or (CHECK_LAB if args.check else "labs/02_handshake.ipynb")
    extra = ()
    if args.check:
        from mcplab import schemas

        spec = str(schemas.spec_dir()) if schemas.schema_file("2026-07-28") else ""
        extra = tuple(cell.format(spec=spec) for cell in GRADE_CELLS)
    proxy = proxy_command()
    if proxy is None:
        raise SystemExit("classroom: configurable-http-proxy is not installed (make test puts it in .node/)")
    import tempfile

    results = []
    with tempfile.TemporaryDirectory(prefix="mcplab-classroom-") as work, Hub(Path(work), proxy) as hub:
        offset = 0
        for count in [int(n) for n in args.students.split(",")]:
            row = asyncio.run(_class_of(hub, count, args.lab, offset, extra))
            offset += count
            results.append(row)
            print(json.dumps(row), flush=True)
            if args.check:
                print(check_line(row), flush=True)
            if row["cells_over_budget"] or row["errors"] or any((row["verdicts"] or {}).values()):
                break  # this size is past what the machine serves: larger ones only get worse
        left = hub.stop()
    report = {"cpus": os.cpu_count(), "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
                                                          / 2**30, 1), "lab": args.lab, "runs": results,
              "left_behind": len(left)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"classroom: wrote {args.out}")
    return 1 if args.check and any(any(r["verdicts"].values()) or r["errors"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
