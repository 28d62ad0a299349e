"""The browser edition for a class: how big the site is, how soon a page can run a cell, and how long one
2-core host takes to serve the first load of N students at once.

    python bench/site_load.py [--site site] [--students 200] [--per-student 6] [--servers nginx,python]

1. **Size**: the site on disk, and as one tar.gz (what a static host stores and sends, roughly).
2. **A first load**, in Debian's Chromium with every request to another host refused: the time from
   opening ``lab/index.html`` with Lab 00 to the Pyodide kernel answering a first cell, and every
   file the page fetched on the way (the list step 4 replays).
3. **Run All per lab**: each lab (``--labs``, default every one, English; ``--zh`` adds the Chinese
   edition) opened in a new browser context, as a student opens the link, and run top to bottom: the
   seconds from opening the link to the last cell's end, Pyodide's boot included.
4. **A class**: N students fetch that list at once over loopback, each with up to ``--per-student``
   requests in flight (a browser's connections per host; each student a ``curl`` process), from
   nginx (Debian's, unprivileged, in a folder of its own) and from ``python -m http.server``. The time until the last student has every
   byte. The clients run on the same two cores as the server, so the figure is an upper bound for
   the server alone.

Needs ``make site`` first (or ``--site`` pointing at a built site), Chromium for step 2 and nginx for
its row of step 3; a row that cannot run says why. Not a test: it prints a table and writes
``bench/results/site_load.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CHROMIUM = "/usr/bin/chromium"
NGINX = "/usr/sbin/nginx"
FIRST_CELL = "import sys, mcplab; print(sys.platform, mcplab.__version__)"
APP_READY = "() => !!(window.jupyterapp && window.jupyterapp.shell)"
RUN_A_CELL = """async code => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = await app.commands.execute('docmanager:open', {path: 'labs/00_start_here.ipynb', factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  panel.content.activeCellIndex = 0;
  await app.commands.execute('notebook:insert-cell-above');
  panel.content.activeCell.model.sharedModel.setSource(code);
  await app.commands.execute('notebook:run-cell');
  return panel.content.activeCell.model.outputs.toJSON().map(o => [].concat(o.text || '').join('')).join('');
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def size(site: Path) -> dict:
    files = [path for path in site.rglob("*") if path.is_file()]
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as archive:
        archive.add(site, arcname="site")
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files), "tar_gz_bytes": packed.tell()}


class Static:
    """A static server for ``site`` on 127.0.0.1: ``kind`` nginx or python."""

    def __init__(self, kind: str, site: Path) -> None:
        self.port, self.folder = free_port(), Path(tempfile.mkdtemp(prefix=f"site-{kind}-"))
        if kind == "nginx":
            (self.folder / "logs").mkdir()
            (self.folder / "nginx.conf").write_text(
                "daemon off; worker_processes auto; pid nginx.pid; error_log logs/error.log;\n"
                "events { worker_connections 4096; }\n"
                "http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 10000;\n"
                "  types { text/html html; application/javascript js mjs; application/wasm wasm;\n"
                "          application/json json; application/zip zip whl; text/css css; }\n"
                f"  client_body_temp_path {self.folder}/body; proxy_temp_path {self.folder}/proxy;\n"
                f"  fastcgi_temp_path {self.folder}/fcgi; uwsgi_temp_path {self.folder}/uwsgi;\n"
                f"  scgi_temp_path {self.folder}/scgi;\n"
                f"  server {{ listen 127.0.0.1:{self.port}; root {site}; }} }}\n")
            argv = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")]
        else:
            argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(site),
                    str(self.port)]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(300):  # it answers, or it died
            if self.process.poll() is not None:
                raise RuntimeError(f"{kind} exited with code {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{kind} did not listen within 30 s")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)


def first_load(site: Path) -> dict:
    """Chromium opens Lab 00 and runs a cell: seconds to its answer, and the paths the page fetched."""
    from playwright.sync_api import sync_playwright

    server = Static("python", site)
    paths, refused = [], []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith(server.url + "/"):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            context = browser.new_context()
            context.route("**/*", route)
            page = context.new_page()
            page.on("requestfinished", lambda request: paths.append(urlparse(request.url).path))
            started = time.monotonic()
            page.goto(f"{server.url}/lab/index.html")
            page.wait_for_function(APP_READY, timeout=120_000)
            printed = page.evaluate(RUN_A_CELL, FIRST_CELL)
            seconds = time.monotonic() - started
            browser.close()
    finally:
        server.stop()
    files = sorted({path for path in paths if (site / path.lstrip("/")).is_file()})
    return {"seconds_to_first_cell": round(seconds, 1), "printed": printed.strip(), "refused": refused,
            "paths": files, "bytes": sum((site / p.lstrip("/")).stat().st_size for p in files)}


def run_all(site: Path, labs: list[str]) -> dict:
    """Each lab run top to bottom in a page of its own: seconds from opening the link to the last cell's end."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from site_helpers import RUN_ALL  # the site test's Run All, so both measure the same thing

    server, seconds = Static("python", site), {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            for lab in labs:
                context = browser.new_context()
                context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server.url)
                              else route.abort())
                page = context.new_page()
                started = time.monotonic()
                page.goto(f"{server.url}/lab/index.html")
                page.wait_for_function(APP_READY, timeout=120_000)
                ran = page.evaluate(RUN_ALL, [lab, 600])
                errors = sum(kind == "error" for cell in ran for kind, _ in cell)
                seconds[lab] = {"seconds": round(time.monotonic() - started, 1), "cells": len(ran), "errors": errors}
                context.close()
            browser.close()
    finally:
        server.stop()
    return seconds


def a_class(url: str, paths: list[str], students: int, per_student: int) -> dict:
    """``students`` fetching ``paths`` at once, each ``per_student`` at a time: seconds and bytes.

    Each student is a ``curl --parallel`` process of its own, as each browser is: a client in C costs the
    shared cores little, where one Python process for the whole class measured its own speed (81 s for
    200 students, where curl processes had every byte from the same nginx in 5 s)."""
    with tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False) as listing:
        listing.writelines(f'url = "{url}{path}"\noutput = "/dev/null"\n' for path in paths)
    argv = ["curl", "--silent", "--show-error", "--fail", "--no-progress-meter", "--parallel",
            "--parallel-max", str(per_student), "--config", listing.name, "--write-out", "%{size_download}\n"]

    def one_student() -> tuple[float, int, str]:
        began = time.monotonic()
        done = subprocess.run(argv, capture_output=True)
        failed = "" if done.returncode == 0 else f"curl exit {done.returncode}: {done.stderr.decode(errors='replace')[:200]}"
        return time.monotonic() - began, sum(int(size) for size in done.stdout.split()), failed
    try:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=students) as pool:  # a thread only waits for its student's curl
            results = list(pool.map(lambda _: one_student(), range(students)))
        seconds = time.monotonic() - started
    finally:
        os.unlink(listing.name)
    took, got = [r[0] for r in results], sum(r[1] for r in results)
    failed = [r[2] for r in results if r[2]]
    if failed:
        raise RuntimeError(f"{len(failed)} of {students} students did not get every file; first: {failed[0]}")
    return {"students": students, "seconds": round(seconds, 1), "bytes": got,
            "slowest_student_seconds": round(max(took), 1),
            "median_student_seconds": round(sorted(took)[len(took) // 2], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site")
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--per-student", type=int, default=6)
    parser.add_argument("--servers", default="nginx,python")
    parser.add_argument("--labs", default="all", help="comma-separated lab numbers (00,05) for step 3, or none")
    parser.add_argument("--zh", action="store_true", help="step 3 runs the Chinese edition of each lab too")
    args = parser.parse_args()
    site = args.site.resolve()
    if not (site / "lab" / "index.html").is_file():
        raise SystemExit(f"{site} is not a built site: run `make site` first (or give --site)")
    out: dict = {"load_start": os.getloadavg(), "site": size(site)}
    print(f"site: {out['site']['files']} files, {out['site']['bytes'] / 1e6:.1f} MB on disk, "
          f"{out['site']['tar_gz_bytes'] / 1e6:.1f} MB as tar.gz")
    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"{CHROMIUM} is missing: the first load is recorded in it (make chromium)")
    load = out["first_load"] = first_load(site)
    print(f"first load: a cell answered after {load['seconds_to_first_cell']} s ({load['printed']!r}); "
          f"{len(load['paths'])} files, {load['bytes'] / 1e6:.1f} MB; requests to other hosts refused: "
          f"{len(load['refused'])}")
    numbers = [] if args.labs == "none" else None if args.labs == "all" else args.labs.split(",")
    labs = [f"labs/{edition}{path.name}" for path in sorted((site / "files" / "labs").glob("[0-9][0-9]_*.ipynb"))
            if numbers is None or path.name[:2] in numbers for edition in ("", "zh-CN/")[:2 if args.zh else 1]]
    out["run_all"] = run_all(site, labs) if labs else {}
    for lab, row in out["run_all"].items():
        print(f"Run All {lab}: {row['seconds']} s from the link to the last cell ({row['cells']} code cells, "
              f"{row['errors']} errors)")
    out["class"] = {}
    for kind in args.servers.split(","):
        if shutil.which("curl") is None:
            out["class"][kind] = {"unavailable": "curl is missing: each student is a curl process"}
            print(f"{kind}: not available: curl is missing (apt install curl)")
            continue
        if kind == "nginx" and not Path(NGINX).is_file():
            out["class"][kind] = {"unavailable": f"{NGINX} is missing (make nginx)"}
            print(f"{kind}: not available: {NGINX} is missing")
            continue
        server = Static(kind, site)
        try:
            row = a_class(server.url, load["paths"], args.students, args.per_student)
        except Exception as exc:  # a server that drops connections under the class: its row says so
            out["class"][kind] = {"failed": f"{type(exc).__name__}: {exc}"}
            print(f"{kind}: failed with {args.students} students at once: {type(exc).__name__}: {exc}")
            continue
        finally:
            server.stop()
        out["class"][kind] = row
        print(f"{kind}: {row['students']} students' first loads ({row['bytes'] / 1e9:.2f} GB) in {row['seconds']} s; "
              f"median student {row['median_student_seconds']} s, slowest {row['slowest_student_seconds']} s")
    out["load_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "site_load.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
