"""The playground: an Inspector inside the notebook, over one :class:`~mcplab.client.Client`.

Theory of operation
-------------------
An ipywidgets panel: pick a server (a bundled one, any stdio command, or a URL), the transport and
the era; connect; see the tools, resources and prompts; fill a form generated from the selected
item's JSON Schema (:func:`form_for`); send; watch the result and the trace grow. Every button has
a method twin (``connect``, ``select_tool``, ``send``, ``close``) so a notebook cell or a test
drives exactly what a click drives. ipywidgets is imported on first use.

What a server sends is shown bounded: an item's description in the "about" line up to
:data:`MAX_ABOUT` characters, a result (its typed form and its JSON) and an error in the result box
up to :data:`MAX_RESULT` each, then "… (N more characters)". A widget's value travels to the
browser whole and a page slows down with every megabyte, so the panel shows what a student reads;
the whole value stays in ``last_result``, the catalogue and the trace.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Awaitable, Callable, Literal, Sequence
from urllib.parse import quote

from mcplab.trace import views as trace_views
from mcplab.wire.errors import MCPLabError, RequestTimeout
from mcplab.i18n import N_, _, ngettext
from mcplab.notebook.schema_check import PRE
from mcplab.transports.background import Background, Job

# --- the playground -------------------------------------------------------------------------------
#
# An ipywidgets panel over one Client: pick a server, transport and era, connect, see the tools,
# resources and prompts, fill a form generated from the selected item's schema, send, and watch
# the result and the trace. Every button has a method twin (connect, select_tool, send, close) so
# a notebook cell or a test drives exactly what a click drives.

BUNDLED = ("weather", "files")
MAX_ABOUT = 2_000    # characters of an item's name or description in the about line
MAX_RESULT = 20_000  # characters of a result's repr, of its JSON, of an error, in the result box
KINDS = ("tools", "resources", "prompts")
SINGULAR = {"tools": N_("tool"), "resources": N_("resource"), "prompts": N_("prompt")}  # shown through _()
TEMPLATE_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")  # RFC 6570 level 1 and {+reserved}


def form_for(schema: dict) -> dict[str, Any]:
    """One input widget per property of an object schema, required ones first (ipywidgets).

    Strings, numbers and JSON values are text boxes, so that an empty box means "leave it out";
    an ``enum`` is a dropdown and a boolean a checkbox.
    """
    import ipywidgets as widgets

    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required", []) if name in properties]
    form = {}
    for name in required + [name for name in properties if name not in required]:
        spec = properties[name] if isinstance(properties[name], dict) else {}
        label = name + ("*" if name in required else "")
        default = spec.get("default")
        hint = " · ".join(str(part) for part in (spec.get("type"), spec.get("description")) if part)
        common = dict(description=label, tooltip=hint, style={"description_width": "120px"},
                      layout={"width": "460px"})
        if spec.get("enum"):
            options = ([] if name in required else [""]) + [json.dumps(v) if not isinstance(v, str) else v
                                                             for v in spec["enum"]]
            widget = widgets.Dropdown(options=options, value=default if default in options else options[0], **common)
        elif spec.get("type") == "boolean":
            widget = widgets.Checkbox(value=bool(default), indent=False, **common)
        else:
            shown = "" if default is None else default if isinstance(default, str) else json.dumps(default)
            widget = widgets.Text(value=shown, placeholder=hint, **common)
        widget.add_class(f"mcplab-arg-{name}")
        form[name] = widget
    return form


def arguments_from(form: dict[str, Any], schema: dict) -> dict[str, Any]:
    """The form's values as tool arguments: empty boxes are left out, numbers and JSON parsed."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name, widget in form.items():
        spec = properties.get(name) if isinstance(properties.get(name), dict) else {}
        kind, value = spec.get("type"), widget.value
        if kind == "boolean":
            if value != spec.get("default", False) or name in schema.get("required", []):
                arguments[name] = value
            continue
        if not str(value).strip():
            continue  # left out: if it was required, the server will say so, which is the lesson
        try:
            if kind == "integer":
                arguments[name] = int(value)
            elif kind == "number":
                arguments[name] = float(value)
            elif kind in ("array", "object") or (spec.get("enum") and not isinstance(spec["enum"][0], str)):
                arguments[name] = json.loads(value)
            else:
                arguments[name] = value
        except ValueError:
            raise ValueError(_("{name}: {value!r} is not a valid {kind}", name=name, value=value,
                               kind=kind or _("JSON value"))) from None
    return arguments


def shortened(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, then how many more there were: ``dddd… (3898000 more characters)``."""
    if len(text) <= limit:
        return text
    return text[:limit] + _("… ({count} more characters)", count=len(text) - limit)


def _expand(template: str, values: dict[str, Any]) -> str:
    """``weather://city/{name}`` with name=Beijing → ``weather://city/Beijing`` ({+x} keeps slashes)."""
    return TEMPLATE_VARIABLE.sub(
        lambda m: quote(str(values.get(m.group(2), "")), safe="/" if m.group(1) else ""), template)


class Playground:
    """The panel (``.widget``) and its state: ``client``, the catalogue, the selected item's ``form``."""

    def __init__(self, server: str | Sequence[str], transport: str, era: str, version: str | None,
                 timeout: float) -> None:
        import ipywidgets as widgets

        self.version, self.timeout = version, timeout
        self.client: Any = None
        self._server: Any = None  # the HTTP server process we launched, if any
        self.task: Job | None = None  # the work a button started, if any
        self._working = False
        self.catalogue: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}  # kind → name → item
        self.form: dict[str, Any] = {}
        self.last_result: Any = None
        command = server if isinstance(server, str) else " ".join(server)
        self._argv = None if isinstance(server, str) else list(server)
        self.server_box = widgets.Combobox(value=command, options=list(BUNDLED), description=_("server"),
                                           placeholder=_("weather, files, a command or a URL"),
                                           layout={"width": "360px"})
        if command.startswith(("http://", "https://")):
            transport = "http"
        self.transport_buttons = widgets.ToggleButtons(options=["stdio", "http"], value=transport,
                                                       style={"button_width": "60px"})
        # 80 px: a button's 10 px paddings and "modern" in the widgets' 13 px font (70 px read "mode…").
        self.era_buttons = widgets.ToggleButtons(options=["legacy", "modern", "auto"], value=era,
                                                 style={"button_width": "80px"})
        # The buttons keep their width when a long status line shares their row (at 1024 px they shrank
        # to "Con…"); the status wraps instead.
        self.connect_button = widgets.Button(description=_("Connect"), button_style="primary",
                                             layout={"flex": "0 0 auto"})
        self.close_button = widgets.Button(description=_("Disconnect"), layout={"flex": "0 0 auto"})
        self.status = widgets.HTML(html.escape(_("not connected")))
        self.kind_buttons = widgets.ToggleButtons(options=list(KINDS), style={"button_width": "90px"})
        self.items = widgets.Select(options=[], rows=6, layout={"width": "320px"})
        self.about = widgets.HTML()
        self.form_box = widgets.VBox()
        self.send_button = widgets.Button(description=_("Send"), button_style="success", disabled=True)
        self.result = widgets.HTML()
        self.trace_count = widgets.HTML()
        self.trace_html = widgets.HTML()
        for widget, name in ((self.send_button, "send"), (self.connect_button, "connect"),
                             (self.trace_html, "trace"), (self.trace_count, "trace-count"),
                             (self.result, "result"), (self.status, "status")):
            widget.add_class(f"mcplab-{name}")
        self.connect_button.on_click(lambda _: self._start(self.connect))
        self.close_button.on_click(lambda _: self._start(self.close))
        self.send_button.on_click(lambda _: self._start(self.send))
        self.kind_buttons.observe(lambda _: self._list_items(), names="value")
        self.items.observe(lambda _: self._select(), names="value")
        # Rows wrap: in a narrow output (1024 px with the file browser open) the form goes below the list
        # instead of running past the output's edge.
        wrap = {"flex_flow": "row wrap"}
        self.widget = widgets.VBox([
            widgets.HBox([self.server_box, self.transport_buttons, self.era_buttons], layout=wrap),
            widgets.HBox([self.connect_button, self.close_button, self.status]),
            widgets.HBox([widgets.VBox([self.kind_buttons, self.items]),
                          widgets.VBox([self.about, self.form_box, self.send_button])], layout=wrap),
            self.result, self.trace_count, self.trace_html])
        self.widget.add_class("mcplab-playground")

    # --- what the buttons do ----------------------------------------------------------------------
    def _start(self, work: Callable[[], Awaitable[Any]]) -> None:
        # ipywidgets calls a click handler synchronously while the kernel handles the comm message,
        # on the kernel's own asyncio event loop, the loop the server's pipes are registered with.
        # The handler may not block that loop (the answer we would wait for is read by it), so the
        # work runs in a task group of its own (Background), which ends when the work does. The job is
        # kept in self.task (tests wait for it) and its failure is shown in the panel; the buttons stay
        # disabled until it ends, so two clicks never interleave.
        if self.busy:
            return
        owner = Background()
        self._working = True
        self.task = owner.start_soon(lambda: self._run(work, owner))
        self._refresh_buttons()

    async def _run(self, work: Callable[[], Awaitable[Any]], owner: Background) -> None:
        try:
            await work()
        except Exception as exc:  # nobody awaits a click: the panel is where a failure is seen
            self._error(exc)      # send() showed it already; connect() and close() did not
        finally:
            self._working = False
            self._refresh_buttons()
            owner.close_soon()    # the click's work is all its task group held

    @property
    def busy(self) -> bool:
        return self._working

    def _refresh_buttons(self) -> None:
        self.connect_button.disabled = self.close_button.disabled = self.busy
        self.send_button.disabled = self.busy or self.client is None or self.items.value is None

    async def connect(self) -> Playground:
        """Start (or reach) the server, run the handshake, and list what it offers."""
        from mcplab.client import Client

        await self.close()
        self._status(_("connecting …"))
        try:
            transport = await self._transport()
            client = Client(transport, era=self.era_buttons.value, version=self.version, timeout=self.timeout)
        except (ValueError, MCPLabError, ImportError) as exc:
            await self._stop_server()
            self._status(_("cannot connect: {exc}", exc=exc), error=True)
            raise
        try:
            await client.connect()
            offered = client.server_capabilities
            listed = {"tools": client.list_tools if "tools" in offered else None,
                      "resources": client.list_resources if "resources" in offered else None,
                      "prompts": client.list_prompts if "prompts" in offered else None}
            catalogue = {kind: {} for kind in KINDS}
            for kind, lister in listed.items():
                for item in (await lister()) if lister else []:
                    catalogue[kind][getattr(item, "name" if kind != "resources" else "uri")] = item
            if "resources" in offered:
                for template in await client.list_resource_templates():
                    catalogue["resources"][template.uri_template] = template
        except MCPLabError as exc:
            self.client = client  # so that the trace shows how far it got, and close() reaps it
            self._show_trace()
            await self.close()
            if isinstance(exc, RequestTimeout):  # the clock ran out, not the spec: say so, and what to do
                self._status(_("connection failed: the server did not answer within {seconds:g} s on this machine; "
                               "this says nothing about the spec or the server; click Connect again (or close "
                               "other work, or pass timeout=N)", seconds=self.timeout), error=True)
            else:
                self._status(_("connection failed: {error}: {exc}", error=type(exc).__name__, exc=exc), error=True)
            raise
        self.client, self.catalogue = client, catalogue
        info = client.server_info
        from mcplab.wire.versions import capabilities_text  # marks Roots, Sampling, Logging: deprecated in 2026-07-28

        self._status(_("connected to {name} {version} over {channel}, protocol {protocol}: {counts}; capabilities: "
                       "{capabilities}", name=info.get('name', '?'), version=info.get('version', ''),
                       channel=getattr(transport, 'channel', self.transport_buttons.value),
                       protocol=client.protocol_version, counts=self._counts(),
                       capabilities=capabilities_text(client.server_capabilities)))
        self.kind_buttons.value = next((k for k in KINDS if catalogue[k]), "tools")
        self._list_items()
        self._show_trace()
        return self

    async def _transport(self) -> Any:
        """stdio: spawn the command. http: a URL as given, or a command started with ``--http --port 0``."""
        target = self.server_box.value.strip()
        if target.startswith(("http://", "https://")):
            self.transport_buttons.value = "http"
            from mcplab.transports.http import http
            return http(target)
        if target in BUNDLED:
            from mcplab.course import server_command
            argv: str | list[str] = server_command(target)
        else:
            argv = self._argv if self._argv and " ".join(self._argv) == target else target
        if self.transport_buttons.value == "stdio":  # a child process; in the browser edition, the page's own
            from mcplab.place import local
            return local(argv)
        import anyio

        from mcplab.server.streamable_http import launch
        from mcplab.transports.http import http
        # launch() waits for the child to print its URL, sleeping between looks; in a worker
        # thread, so that the kernel's loop (and every widget on the page) stays responsive.
        self._server = await anyio.to_thread.run_sync(launch, argv)
        return http(self._server.url)

    async def close(self) -> None:
        """Close the connection (a stdio server exits when its stdin closes) and stop a launched server."""
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()
            self._status(_("disconnected"))
            self._show_trace(client)
        await self._stop_server()
        self._refresh_buttons()

    async def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            import anyio
            await anyio.to_thread.run_sync(server.stop)  # closes its stdin, then waits: not on the loop

    # --- choosing what to send --------------------------------------------------------------------
    def select_tool(self, name: str) -> dict[str, Any]:
        return self._choose("tools", name)

    def select_resource(self, uri: str) -> dict[str, Any]:
        return self._choose("resources", uri)

    def select_prompt(self, name: str) -> dict[str, Any]:
        return self._choose("prompts", name)

    def _choose(self, kind: str, name: str) -> dict[str, Any]:
        """Select one item (as a click would) and return its form: ``{argument: widget}``."""
        if name not in self.catalogue[kind]:
            known = ", ".join(self.catalogue[kind]) or _("none (connect first)")
            raise ValueError(_("no {kind} {name!r}; this server has: {known}", kind=_(SINGULAR[kind]), name=name,
                               known=known))
        self.kind_buttons.value = kind
        self.items.value = name
        return self.form

    def _list_items(self) -> None:
        names = list(self.catalogue[self.kind_buttons.value])
        self.items.options = names
        self.items.value = names[0] if names else None
        self._select()

    def _select(self) -> None:
        kind, name = self.kind_buttons.value, self.items.value
        item = self.catalogue[kind].get(name) if name is not None else None
        self.form = form_for(self._schema(kind, item)) if item is not None else {}
        self.form_box.children = list(self.form.values())
        about = getattr(item, "description", "") or ""
        self.about.value = (f"<b>{html.escape(shortened(str(name or ''), MAX_ABOUT))}</b> "
                            f"{html.escape(shortened(str(about), MAX_ABOUT))}") if item else ""
        self._refresh_buttons()

    def _schema(self, kind: str, item: Any) -> dict:
        """The object schema the form is built from: a tool's inputSchema, or strings for the others."""
        if kind == "tools":
            return item.input_schema
        if kind == "prompts":
            return {"type": "object",
                    "properties": {a["name"]: {"type": "string", "description": a.get("description", "")}
                                   for a in item.arguments},
                    "required": [a["name"] for a in item.arguments if a.get("required")]}
        variables = TEMPLATE_VARIABLE.findall(getattr(item, "uri_template", ""))
        return {"type": "object", "properties": {v: {"type": "string"} for _, v in variables},
                "required": [v for _, v in variables]}

    def arguments(self) -> dict[str, Any]:
        kind, item = self.kind_buttons.value, self.catalogue[self.kind_buttons.value].get(self.items.value)
        return arguments_from(self.form, self._schema(kind, item)) if item is not None else {}

    async def send(self) -> Any:
        """Send the selected item with the form's values; return (and show) the typed result."""
        if self.client is None:
            raise MCPLabError(_("not connected: await pg.connect() (or click Connect) first"))
        kind, name = self.kind_buttons.value, self.items.value
        if name is None:
            raise ValueError(_("this server lists no {kind}", kind=kind))
        try:
            arguments = self.arguments()
            if kind == "tools":
                result = await self.client.call_tool(name, arguments)
            elif kind == "prompts":
                result = await self.client.get_prompt(name, arguments)
            else:
                item = self.catalogue[kind][name]
                uri = _expand(item.uri_template, arguments) if hasattr(item, "uri_template") else name
                result = await self.client.read_resource(uri)
        except (ValueError, MCPLabError) as exc:
            self._error(exc)
            raise
        finally:
            self._show_trace()
        self.last_result = result
        typed, raw = repr(result), json.dumps(result.raw, indent=2, ensure_ascii=False)
        self.result.value = (f'<pre style="{PRE}">{html.escape(shortened(typed, MAX_RESULT))}\n\n'
                             f'{html.escape(shortened(raw, MAX_RESULT))}</pre>')
        return result

    # --- showing ----------------------------------------------------------------------------------
    @property
    def trace(self) -> Any:
        return self.client.trace if self.client is not None else None

    def _show_trace(self, client: Any = None) -> None:
        client = client or self.client
        if client is not None:
            from mcplab.notebook.viewer import show  # the viewer loads jsonschema: only when shown

            view = show(client.trace)
            self.trace_count.value = f"<b>{html.escape(_('trace'))}</b>: {html.escape(trace_views.summary(list(view.frames)))}"
            self.trace_html.value = view.diagram_html()

    def _status(self, text: str, error: bool = False) -> None:
        colour = trace_views.ERROR_COLOUR if error else "#333"
        self.status.value = f'<span style="color:{colour}">{html.escape(text)}</span>'

    def _error(self, exc: BaseException) -> None:
        self.result.value = (f'<pre style="{PRE};color:{trace_views.ERROR_COLOUR}">'
                             f'{html.escape(type(exc).__name__)}: {html.escape(shortened(str(exc), MAX_RESULT))}</pre>')

    def __repr__(self) -> str:
        where = _("{server} over {transport}, era {era}", server=self.server_box.value,
                  transport=self.transport_buttons.value, era=self.era_buttons.value)
        if self.client is None:
            return _("Playground ({where}): not connected", where=where)
        selected = (_("; selected {kind} {name}", kind=_(SINGULAR[self.kind_buttons.value]), name=self.items.value)
                    if self.items.value else "")
        return _("Playground ({where}): connected, {counts}{selected}", where=where, counts=self._counts(),
                 selected=selected)

    def _counts(self) -> str:
        """``2 tools, 2 resources, 1 prompt``"""
        forms = {"tools": (N_("{n} tool"), N_("{n} tools")), "resources": (N_("{n} resource"), N_("{n} resources")),
                 "prompts": (N_("{n} prompt"), N_("{n} prompts"))}
        return _(", ").join(ngettext(*forms[kind], len(items)) for kind, items in self.catalogue.items())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The widget's own text/plain names its model id; ours is the same on every run (nbval).
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle


def playground(server: str | Sequence[str] = "weather", transport: Literal["stdio", "http"] = "stdio",
               era: Literal["legacy", "modern", "auto"] = "legacy", *, version: str | None = None,
               timeout: float = 30.0) -> Playground:
    """The playground panel, not yet connected: click Connect, or ``await pg.connect()``.

    ``server`` is a bundled server ("weather", "files"), a command (a string or an argv list) or a
    Streamable HTTP URL.

    >>> pg = playground("weather"); await pg.connect()          # doctest: +SKIP
    >>> pg.select_tool("get_weather")["city"].value = "Beijing"; await pg.send()
    ToolResult(text='Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h', is_error=False)
    """
    return Playground(server, transport, era, version, timeout)
