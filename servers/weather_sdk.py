"""Weather, written a second time on the official Python SDK (``mcp``, its high-level ``MCPServer``).

    python servers/weather_sdk.py                     # stdio, served by the SDK itself
    python servers/weather_sdk.py --http [--port 0]   # Streamable HTTP at /mcp, the SDK's own app

The same tools, resources and prompts as ``servers/weather.py``, with the same names, the same
table of cities and the same results, so that a client cannot tell the two apart by what they
*do*. It can by how they say it: read the two files side by side, and Lab 15 lines their wire
traces up. What the SDK does for the author here, and our toolkit spells out:

* the input schema comes from the type hints through pydantic (``Annotated[..., Field(...)]`` for a
  description or a range), the output schema from the return type (a pydantic model: structured
  output with ``$defs`` and titles, where ours writes the schema by hand);
* asking the user ("China" → which city?) is a *resolver*: ``Elicit`` sends ``elicitation/create``
  to a legacy client and answers a 2026-07-28 client with ``input_required``, then injects the
  answer on the retry: one body for both eras, as ours does with ``ctx.elicit``;
* a ``ToolError`` becomes ``isError: true`` with "Error executing tool NAME: " before its message, and
  so do an unknown tool and arguments that fail the schema (ours answers an unknown tool with the
  protocol error -32602); an unknown resource is -32602 (ours: -32002 before 2026-07-28);
* what the SDK leaves to the author: elicitation exists from 2025-06-18 on, so ``which_city`` checks
  the session's revision as well as the client's capabilities before it asks.

The tools, resources and prompts import nothing from mcplab: the file runs wherever the SDK is installed
(``pip install mcp``). Over HTTP, where mcplab is there too, the SDK's app is served by mcplab's
``serve_app``, so that ``mcplab.server.streamable_http.launch`` can start it like the bundled servers:
it binds 127.0.0.1 (``--port 0`` picks a free port), prints ``mcplab: serving weather-sdk at URL`` on
stderr once it accepts connections, and exits when a piped stdin reaches end of file.
"""

# No `from __future__ import annotations`: the SDK reads the type hints, so they stay real objects.
import difflib
import json
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Completion, EmbeddedResource, TextResourceContents, ToolAnnotations
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, create_model

# --- the same table as servers/weather.py (a test checks they stay equal) ----------------------------

CONDITIONS = {"sunny": "晴", "cloudy": "多云", "overcast": "阴", "light rain": "小雨", "rain": "中雨",
              "thunderstorm": "雷阵雨", "snow": "雪", "fog": "雾", "windy": "大风"}
_S, _C, _O, _L, _R = "sunny", "cloudy", "overcast", "light rain", "rain"
_T, _N, _F, _W = "thunderstorm", "snow", "fog", "windy"
# name: (Chinese name, country, condition, °C, humidity %, wind km/h, the next 7 days)
CITIES = {
    "Beijing":   ("北京", "China", "sunny", 12, 30, 9, (_S, _S, _C, _W, _S, _O, _S)),
    "Shanghai":  ("上海", "China", "cloudy", 18, 65, 14, (_C, _L, _R, _C, _S, _S, _C)),
    "Guangzhou": ("广州", "China", "thunderstorm", 27, 82, 11, (_T, _R, _C, _T, _C, _S, _R)),
    "Chengdu":   ("成都", "China", "overcast", 15, 78, 5, (_O, _F, _L, _O, _C, _O, _L)),
    "Tokyo":     ("东京", "Japan", "light rain", 16, 70, 12, (_L, _C, _S, _S, _C, _R, _C)),
    "Seoul":     ("首尔", "South Korea", "cloudy", 9, 55, 16, (_C, _S, _S, _N, _C, _S, _W)),
    "Singapore": ("新加坡", "Singapore", "thunderstorm", 31, 84, 10, (_T, _T, _C, _R, _T, _C, _T)),
    "Sydney":    ("悉尼", "Australia", "sunny", 24, 60, 20, (_S, _C, _S, _S, _W, _R, _S)),
    "Seattle":   ("西雅图", "United States", "rain", 10, 88, 13, (_R, _L, _O, _R, _C, _L, _R)),
    "New York":  ("纽约", "United States", "windy", 7, 48, 32, (_W, _S, _C, _N, _N, _C, _S)),
    "London":    ("伦敦", "United Kingdom", "fog", 11, 90, 8, (_F, _L, _O, _L, _C, _R, _O)),
    "Paris":     ("巴黎", "France", "overcast", 13, 72, 11, (_O, _C, _S, _L, _C, _S, _C)),
    "Berlin":    ("柏林", "Germany", "cloudy", 8, 68, 18, (_C, _O, _L, _N, _C, _S, _C)),
    "Reykjavik": ("雷克雅未克", "Iceland", "snow", -2, 80, 28, (_N, _W, _N, _C, _S, _N, _O)),
    "Cairo":     ("开罗", "Egypt", "sunny", 29, 25, 15, (_S, _S, _S, _W, _S, _S, _C)),
}

mcp = MCPServer("weather-sdk", title="Weather (offline, official SDK)", version="1.0.0", log_level="WARNING",
                instructions="Current weather and 7-day forecasts for a fixed set of cities. "
                             "Read weather://cities for the list.")
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def find_city(name: str) -> str:
    """The table's name for ``name`` (English any case, or Chinese); a ToolError suggests close names."""
    for key, city in CITIES.items():
        if name.strip().lower() == key.lower() or name.strip() == city[0]:
            return key
    close = difflib.get_close_matches(name.strip().title(), CITIES, n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise ToolError(f"Unknown city {name!r}.{hint} Known cities: {', '.join(CITIES)}.")


def cities_in(country: str) -> list[str]:
    return [name for name, city in CITIES.items() if city[1].lower() == country.strip().lower()]


def temperature(celsius: float, units: str) -> str:
    return f"{celsius:.0f} °C" if units == "metric" else f"{celsius * 9 / 5 + 32:.0f} °F"


@mcp.tool(description="查询指定城市的当前天气", annotations=READ_ONLY, structured_output=False)  # text only, as ours
def get_weather(
    city: Annotated[str, Field(description='City name in English or Chinese, e.g. "Beijing" or "北京".')],
    units: Annotated[Literal["metric", "imperial"], Field(description='"metric" for °C, "imperial" for °F.')] = "metric",
) -> str:
    name = find_city(city)
    _, _, condition, celsius, humidity, wind, _ = CITIES[name]
    return (f"{name}: {condition} ({CONDITIONS[condition]}), {temperature(celsius, units)}, "
            f"humidity {humidity}%, wind {wind} km/h")


class Day(BaseModel):
    day: int
    condition: str
    condition_zh: str
    high_c: int
    low_c: int


class Forecast(BaseModel):  # the return type: the SDK derives outputSchema and structuredContent from it
    city: str
    days: list[Day]


def which_city(city: str, ctx: Context) -> str | Elicit[BaseModel]:
    """A resolver: the city itself, or (for a country with several, when the client can answer) a question."""
    choices = cities_in(city)
    caps = ctx.client_capabilities
    # Elicitation came with 2025-06-18: an older session has no such request, whatever the client declares.
    can_ask = caps is not None and caps.elicitation is not None and is_version_at_least(ctx.protocol_version or "",
                                                                                        "2025-06-18")
    if len(choices) < 2 or not can_ask:
        return city
    form = create_model("WhichCity", city=(Literal[tuple(choices)], Field(title="City")))
    return Elicit(f"{city.strip()} has {len(choices)} cities here. Which one? 哪个城市？", form)


@mcp.tool(description="Forecast for the next 1–7 days: condition plus daily high and low in °C.", annotations=READ_ONLY)
def get_forecast(
    city: Annotated[str, Field(description="City name in English or Chinese.", json_schema_extra={"x-mcp-header": "City"})],
    chosen: Annotated[BaseModel | str, Resolve(which_city)],
    days: Annotated[int, Field(ge=1, le=7, description="How many days, 1–7.")] = 3,
) -> Forecast:
    name = find_city(chosen if isinstance(chosen, str) else chosen.city)  # type: ignore[attr-defined]
    _, _, _, celsius, _, _, week = CITIES[name]
    swing = (1, 2, 0, -1, 1, 3, 0)
    return Forecast(city=name, days=[Day(day=d + 1, condition=week[d], condition_zh=CONDITIONS[week[d]],
                                         high_c=celsius + swing[d], low_c=celsius + swing[d] - 6)
                                     for d in range(days)])


@mcp.resource("weather://cities", name="cities", mime_type="application/json",
              description="Every city this server knows, with its Chinese name and country.")
def cities() -> str:
    return json.dumps([{"name": name, "zh": c[0], "country": c[1]} for name, c in CITIES.items()], ensure_ascii=False)


def city_data(name: str) -> dict:
    zh, country, condition, celsius, humidity, wind, _ = CITIES[name]
    return {"city": name, "zh": zh, "country": country, "condition": condition,
            "condition_zh": CONDITIONS[condition], "celsius": celsius, "humidity": humidity, "wind_kmh": wind}


@mcp.resource("weather://city/{name}", name="city", mime_type="application/json",
              description="The current weather of one city, as JSON.")
def city_weather(name: str) -> str:
    if name not in CITIES:
        raise ResourceNotFoundError(f"Resource not found: weather://city/{name}")
    return json.dumps(city_data(name), ensure_ascii=False)


@mcp.prompt(description="Ask the model for a weather report on one city, with the city's data attached.")
def weather_report(city: str, style: Literal["brief", "detailed"] = "brief") -> list:
    try:
        name = find_city(city)
    except ToolError as exc:  # a prompt has no isError: a bad argument is a protocol error
        raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
    data = TextResourceContents(uri=f"weather://city/{name}", mime_type="application/json",
                                text=json.dumps(city_data(name), ensure_ascii=False))
    ask = ("Write a two-sentence weather report" if style == "brief"
           else "Write a detailed weather report, with advice on what to wear,")
    return [UserMessage(content=EmbeddedResource(type="resource", resource=data)),
            UserMessage(f"{ask} for {name} from the data above. 用中文和英文各写一遍。")]


@mcp.completion()
async def complete(ref, argument, context) -> Completion | None:
    """City names for the prompt's ``city`` and the template's ``{name}``."""
    if argument.name not in ("city", "name"):
        return None
    values = [name for name in CITIES if name.lower().startswith(argument.value.lower())]
    return Completion(values=values, total=len(values), has_more=False)


def serve_http(host: str, port: int) -> None:
    """The SDK's own Streamable HTTP app, served the way mcplab's ``launch()`` expects when mcplab is
    installed (its ``serve_app``: the banner, ``--port 0``, the stdin watchdog); by the SDK alone if not."""
    app = mcp.streamable_http_app(host=host)
    try:
        from mcplab.server.streamable_http.process import BANNER, bind, endpoint_url, serve_app
    except ImportError:  # the SDK alone: its own uvicorn runner, without mcplab's conventions
        mcp.run("streamable-http", host=host, port=port)
        return
    import anyio

    sock = bind(host, port)
    anyio.run(serve_app, app, sock, BANNER.format(name="weather-sdk", url=endpoint_url(sock)))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.http:
        serve_http(args.host, args.port)
    else:
        mcp.run()
