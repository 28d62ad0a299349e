"""A bookshelf: Lab 09's example server, each piece of the toolkit once. Not a starter: read it, run it.

    python build/bookshelf.py                       # stdio (from labs/)
    python build/bookshelf.py --store books.json    # the books in a file that every copy shares
    python build/bookshelf.py --http --port 0       # Streamable HTTP (Lab 05)

Lab 09 reads it beside mcplab/server/: Server(...) (§1), @server.tool with and without arguments (§2),
what a tool returns and how it fails (§3), a resource and a template (§4), two prompts (§5), run() with
a flag of its own (§7), the caching hints it leaves at their defaults (§8), where the books live (§9).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Literal

from mcplab.server import Server, ToolError, arguments, assistant, run, user

server = Server("bookshelf", "0.1.0", title="A bookshelf",
                instructions="Books on three shelves. add_book puts one there, find_book looks one up, "
                             "shelf://books lists them all.")

Shelf = Literal["fiction", "science", "poetry"]


class Books:
    """Where the books live: in this process, or in a JSON file that every copy of the server shares."""

    def __init__(self, path: str | None = None) -> None:
        self.path = Path(path) if path else None
        self.here: dict[str, dict] = {}

    def all(self) -> dict[str, dict]:
        if self.path is None:
            return dict(self.here)
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def put(self, key: str, book: dict) -> None:
        if self.path is None:
            self.here[key] = book
            return
        with open(self.path.with_suffix(".lock"), "a") as lock:
            if hasattr(fcntl, "flock"):  # the browser edition has none: there the copies are tasks of one
                # page, and put() never awaits, so no other copy can run in the middle of it
                fcntl.flock(lock, fcntl.LOCK_EX)  # one writer at a time, whichever copy of the server it is
            books = {**self.all(), key: book}
            fd, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(books, file)
            os.replace(temporary, self.path)  # atomic: a reader sees the old file or the new, never half


BOOKS = Books()  # in this process, unless --store names a file (see the end of the file)


# --- tools (§2, §3) ------------------------------------------------------------------------------------

@server.tool
def add_book(title: str, author: str, shelf: Shelf = "fiction", year: int | None = None) -> str:
    """Put a book on a shelf.

    Args:
        title: The book's title, e.g. "Dune".
        author: Who wrote it.
        shelf: "fiction", "science" or "poetry".
        year: The year it came out, if known.
    """
    print(f"adding {title!r}")  # stdout belongs to the protocol: run() sends this line to stderr
    BOOKS.put(title.lower(), {"title": title, "author": author, "shelf": shelf, "year": year})
    return f"{title} by {author} is on the {shelf} shelf"


FIND_INPUT = {
    "type": "object",
    "properties": {"title": {"type": "string", "minLength": 1, "examples": ["Dune"],
                             "description": "The title, in any case."}},
    "required": ["title"],
}


@server.tool(name="find_book", title="Find a book", schema=FIND_INPUT, annotations={"readOnlyHint": True})
def find(title: str) -> dict:
    """Look a book up by its title: its author, shelf and year."""
    book = BOOKS.all().get(title.lower())
    if book is None:
        raise ToolError(f"no book called {title!r} on the shelves ({len(BOOKS.all())} books); add it first")
    return book


@server.tool
def average_year() -> str:
    """The average publication year of the books whose year is known."""
    years = [book["year"] for book in BOOKS.all().values() if book["year"]]
    return f"{sum(years) / len(years):.0f}"  # a bug on purpose (§3): no years yet divides by zero


# --- resources (§4) ------------------------------------------------------------------------------------

@server.resource("shelf://books", mime_type="application/json")
def all_books() -> list:
    """Every book on the shelves, as JSON."""
    return list(BOOKS.all().values())


def titles(prefix: str) -> list[str]:
    return [b["title"] for b in BOOKS.all().values() if b["title"].lower().startswith(prefix.lower())]


@server.resource("shelf://books/{title}", name="book", mime_type="application/json", complete={"title": titles})
def one_book(title: str) -> dict:
    """One book, by its title."""
    book = BOOKS.all().get(title.lower())
    if book is None:
        raise LookupError(title)  # the toolkit answers "Resource not found"
    return book


# --- prompts (§5) --------------------------------------------------------------------------------------

@server.prompt
def recommend(mood: Literal["cheerful", "thoughtful"] = "thoughtful") -> str:
    """Ask the model which book to read next."""
    shelf = ", ".join(f"{b['title']} ({b['author']})" for b in BOOKS.all().values()) or "nothing yet"
    return f"On my shelves: {shelf}. Which one should I read next, in a {mood} mood? One sentence."


@server.prompt(name="discuss", description="Start a conversation about one book.")
def discuss_book(title: str) -> list:
    return [user(f"Let us talk about {title}."), assistant(f"Gladly. What stayed with you from {title}?")]


if __name__ == "__main__":
    parser = arguments("A bookshelf, Lab 09's example server.")
    parser.add_argument("--store", metavar="FILE", help="keep the books in this JSON file (every copy shares it)")
    options = parser.parse_args()
    if options.store:
        BOOKS = Books(options.store)
    run(server, options)
