"""My MCP server: a to-do list (solved), built on mcplab's server toolkit.

    python my_server.py                        # stdio: it waits for JSON-RPC lines on stdin
    mcplab grade server build/my_server.py     # the report card (from labs/solutions/)

The brief, and where this file meets it:
  1. two tools or more, each argument with a type    add_task, complete_task, list_tasks
  2. a resource or a resource template               todo://tasks and todo://tasks/{task_id}
  3. a prompt                                        plan_my_day
  4. a tool error reported as isError                complete_task on a task that does not exist
"""

from __future__ import annotations

from typing import Literal

from mcplab.server import Server, ToolError, run

server = Server("my-todo", "0.1.0", title="My to-do list",
                instructions="A to-do list: add tasks, complete them, read them as todo://tasks.")

# The tasks live in this process (Lab 09 §9): every copy of the server has a list of its own, and the
# list is gone when the process ends. The resources below are therefore left with the toolkit's
# default caching hints, private and immediately stale (ttlMs 0): this data changes and is one user's.
TASKS: dict[int, dict] = {}


@server.tool
def add_task(title: str, priority: Literal["low", "normal", "high"] = "normal") -> str:
    """Add a task to the list; the answer gives its number.

    Args:
        title: What to do, e.g. "write the lab report".
        priority: "low", "normal" or "high".
    """
    task_id = max(TASKS, default=0) + 1
    TASKS[task_id] = {"id": task_id, "title": title, "priority": priority, "done": False}
    return f"added task {task_id}: {title} ({priority})"


@server.tool(annotations={"idempotentHint": True, "openWorldHint": False})
def complete_task(task_id: int) -> str:
    """Mark a task as done.

    Args:
        task_id: The number add_task gave the task.
    """
    if task_id not in TASKS:  # a business error: the model reads it and can ask for the list
        raise ToolError(f"there is no task {task_id}; the tasks are {sorted(TASKS) or 'none yet'}")
    TASKS[task_id]["done"] = True
    return f"task {task_id} done: {TASKS[task_id]['title']}"


@server.tool(name="list_tasks", annotations={"readOnlyHint": True, "openWorldHint": False})
def tasks(show_done: bool = False) -> list:
    """The tasks, open ones only unless show_done is true.

    Args:
        show_done: Include the tasks already done.
    """
    return [task for task in TASKS.values() if show_done or not task["done"]]


@server.resource("todo://tasks", name="tasks", mime_type="application/json")
def all_tasks() -> list:
    """Every task, done or not, as JSON."""
    return list(TASKS.values())


@server.resource("todo://tasks/{task_id}", name="task", mime_type="application/json",
                 complete={"task_id": lambda prefix: [str(n) for n in TASKS if str(n).startswith(prefix)]})
def one_task(task_id: str) -> dict:
    """One task, by its number."""
    if not task_id.isdigit() or int(task_id) not in TASKS:
        raise LookupError(task_id)  # the toolkit answers "Resource not found", in each revision's words
    return TASKS[int(task_id)]


@server.prompt
def plan_my_day(order: Literal["urgent first", "quick wins first"] = "urgent first") -> str:
    """Ask the model to plan the day from the open tasks.

    Args:
        order: "urgent first" or "quick wins first".
    """
    open_tasks = [f"- {t['title']} ({t['priority']})" for t in TASKS.values() if not t["done"]]
    return ("My open tasks:\n" + ("\n".join(open_tasks) or "- none") +
            f"\n\nPlan my day with them, {order}, in five lines at most.")


if __name__ == "__main__":
    run(server)
