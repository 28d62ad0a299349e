"""``mcplab site lock|fetch|build``: each step run, its outcome printed, its exit status returned.

See :mod:`mcplab.site` for the whole theory of operation.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcplab.i18n import _
from mcplab.site import LOCK, MARKER, MIRROR_ENV, SiteError, cache_dir, read_lock
from mcplab.site.build import build, default_out
from mcplab.site.registry import fetch, lock


def command(step: str, *, out: Path | None = None, cache: Path | None = None, mirror: str | None = None) -> int:
    """``mcplab site lock|fetch|build``: the exit status; what went wrong is printed in full."""
    cache = cache or cache_dir()
    try:
        if step == "lock":
            import httpx
            try:
                entries = lock()
            except httpx.HTTPError as exc:
                raise SiteError(f"mcplab site lock: {type(exc).__name__}: {exc}") from None
            print(_("mcplab site: {lock} now holds {n} files", lock=LOCK.name, n=len(entries)))
            return 0
        if step == "fetch":
            missing, problems, summary = fetch(read_lock()[1], cache, mirror=mirror or os.environ.get(MIRROR_ENV))
            for problem in problems:  # stderr: `make test` shows only the summary, and pytest runs
                print(problem, file=sys.stderr)
            print(summary)
            return 1 if missing else 0
        built = build((out or default_out()).absolute(), cache)  # not resolve(): a link named as --out is not followed
        print(_("mcplab site: the course is in {built}; serve it with `python -m http.server -d {built}` "
                "and open http://127.0.0.1:8000/lab/index.html", built=built))
        if not json.loads((built / MARKER).read_text(encoding="utf-8"))["schemas"]:
            print(_("mcplab site: no official schema was found here (run `mcplab schemas` online, then build "
                    "again), so the page's trace views show no schema badges"), file=sys.stderr)
        return 0
    except SiteError as exc:
        print(exc, file=sys.stderr)
        return 1
