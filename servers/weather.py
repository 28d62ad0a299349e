"""Weather: a small MCP server with all three primitives, offline and deterministic.

    python servers/weather.py            # stdio; try it with `mcplab inspect --stdio "python servers/weather.py"`

What it offers, and who decides to use each (MCP "server features"):

    tools      get_weather(city, units)   the model calls it          → "Beijing: sunny (晴), 12 °C, ..."
               get_forecast(city, days)   days 1–7; structured output → {"city": ..., "days": [...]}
    resources  weather://cities           the application reads it    → the list of cities, as JSON
               weather://city/{name}      a template: one URI per city
    prompts    weather_report(city, style) the user picks it           → messages asking for a report

The weather is a fixed table, so every run (and every notebook output) is the same. An unknown city
is a business error (``isError: true``) that suggests the closest names, not a protocol error: the
model asked for something reasonable and can correct itself.

Two things show the 2026-07-28 revision (``--era modern``, or ``dual``, the default):

* ``get_forecast("China")`` is ambiguous; if the client can ask its user (it declared elicitation),
  the tool asks which city. The same body sends ``elicitation/create`` to a legacy client and
  answers a modern one with ``input_required``, then runs again when the client retries.
* ``get_forecast``'s ``city`` carries ``"x-mcp-header": "City"``: over HTTP a modern client copies it
  into an ``Mcp-Param-City`` header, so a gateway can route by city without reading the body.
"""

from __future__ import annotations

import json
from typing import Literal, NamedTuple

from mcplab.auth.scopes import ScopePolicy
from mcplab.wire.errors import InvalidParams
from mcplab.server import Context, Server, ToolError, embedded, run, user


class City(NamedTuple):
    zh: str               # the city's Chinese name; get_weather accepts either name
    country: str
    condition: str        # a key of CONDITIONS
    celsius: int
    humidity: int         # percent
    wind_kmh: int
    week: tuple[str, ...]  # the conditions of the next 7 days


CONDITIONS = {"sunny": "晴", "cloudy": "多云", "overcast": "阴", "light rain": "小雨", "rain": "中雨",
              "thunderstorm": "雷阵雨", "snow": "雪", "fog": "雾", "windy": "大风"}

# Short names for the week columns below.
_S, _C, _O, _L, _R = "sunny", "cloudy", "overcast", "light rain", "rain"
_T, _N, _F, _W = "thunderstorm", "snow", "fog", "windy"

CITIES = {
    "Beijing":   City("北京", "China", "sunny", 12, 30, 9, (_S, _S, _C, _W, _S, _O, _S)),
    "Shanghai":  City("上海", "China", "cloudy", 18, 65, 14, (_C, _L, _R, _C, _S, _S, _C)),
    "Guangzhou": City("广州", "China", "thunderstorm", 27, 82, 11, (_T, _R, _C, _T, _C, _S, _R)),
    "Chengdu":   City("成都", "China", "overcast", 15, 78, 5, (_O, _F, _L, _O, _C, _O, _L)),
    "Tokyo":     City("东京", "Japan", "light rain", 16, 70, 12, (_L, _C, _S, _S, _C, _R, _C)),
    "Seoul":     City("首尔", "South Korea", "cloudy", 9, 55, 16, (_C, _S, _S, _N, _C, _S, _W)),
    "Singapore": City("新加坡", "Singapore", "thunderstorm", 31, 84, 10, (_T, _T, _C, _R, _T, _C, _T)),
    "Sydney":    City("悉尼", "Australia", "sunny", 24, 60, 20, (_S, _C, _S, _S, _W, _R, _S)),
    "Seattle":   City("西雅图", "United States", "rain", 10, 88, 13, (_R, _L, _O, _R, _C, _L, _R)),
    "New York":  City("纽约", "United States", "windy", 7, 48, 32, (_W, _S, _C, _N, _N, _C, _S)),
    "London":    City("伦敦", "United Kingdom", "fog", 11, 90, 8, (_F, _L, _O, _L, _C, _R, _O)),
    "Paris":     City("巴黎", "France", "overcast", 13, 72, 11, (_O, _C, _S, _L, _C, _S, _C)),
    "Berlin":    City("柏林", "Germany", "cloudy", 8, 68, 18, (_C, _O, _L, _N, _C, _S, _C)),
    "Reykjavik": City("雷克雅未克", "Iceland", "snow", -2, 80, 28, (_N, _W, _N, _C, _S, _N, _O)),
    "Cairo":     City("开罗", "Egypt", "sunny", 29, 25, 15, (_S, _S, _S, _W, _S, _S, _C)),
}

server = Server("weather", "1.0.0", title="Weather (offline)",
                instructions="Current weather and 7-day forecasts for a fixed set of cities. "
                             "Read weather://cities for the list.")


def find_city(name: str) -> str:
    """The table's name for ``name`` (English any case, or Chinese); a ToolError suggests close names."""
    for key, city in CITIES.items():
        if name.strip().lower() == key.lower() or name.strip() == city.zh:
            return key
    import difflib  # only an unknown city needs it; imported here to keep start-up quick

    close = difflib.get_close_matches(name.strip().title(), CITIES, n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise ToolError(f"Unknown city {name!r}.{hint} Known cities: {', '.join(CITIES)}.")


def cities_in(country: str) -> list[str]:
    """The cities of the table in ``country`` ("China" → four of them)."""
    return [name for name, city in CITIES.items() if city.country.lower() == country.strip().lower()]


async def which_city(ctx: Context, country: str, choices: list[str]) -> str:
    """Ask the user which of ``choices`` they meant (elicitation: a form with one enum field)."""
    form = {"type": "object", "properties": {"city": {"type": "string", "title": "City", "enum": choices}},
            "required": ["city"]}
    question = f"{country} has {len(choices)} cities here. Which one? 哪个城市？"
    answer = await ctx.elicit(question, form, key="which_city")
    if answer.get("action") != "accept":
        raise ToolError(f"No city chosen for {country!r}; ask again with one of: {', '.join(choices)}.")
    return str((answer.get("content") or {}).get("city", ""))


def temperature(celsius: float, units: str) -> str:
    return f"{celsius:.0f} °C" if units == "metric" else f"{celsius * 9 / 5 + 32:.0f} °F"


# The seed's description, word for word: "query the current weather of the given city".
@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def get_weather(city: str, units: Literal["metric", "imperial"] = "metric") -> str:
    """查询指定城市的当前天气

    Args:
        city: City name in English or Chinese, e.g. "Beijing" or "北京".
        units: "metric" for °C, "imperial" for °F.
    """
    name = find_city(city)
    now = CITIES[name]
    return (f"{name}: {now.condition} ({CONDITIONS[now.condition]}), {temperature(now.celsius, units)}, "
            f"humidity {now.humidity}%, wind {now.wind_kmh} km/h")


FORECAST_INPUT = {  # spelled out, because "between 1 and 7" is not a Python type
    "type": "object",
    "properties": {
        # x-mcp-header: a 2026-07-28 HTTP client also sends the city as "Mcp-Param-City: Paris" (legacy
        # clients never see the keyword: the toolkit drops it from their tools/list).
        "city": {"type": "string", "description": "City name in English or Chinese.", "x-mcp-header": "City"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3, "description": "How many days, 1–7."},
    },
    "required": ["city"],
}

FORECAST_OUTPUT = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "array", "items": {
            "type": "object",
            "properties": {"day": {"type": "integer"}, "condition": {"type": "string"},
                           "condition_zh": {"type": "string"}, "high_c": {"type": "integer"},
                           "low_c": {"type": "integer"}},
            "required": ["day", "condition", "high_c", "low_c"]}},
    },
    "required": ["city", "days"],
}


@server.tool(schema=FORECAST_INPUT, output_schema=FORECAST_OUTPUT,
             annotations={"readOnlyHint": True, "openWorldHint": False})
async def get_forecast(city: str, ctx: Context, days: int = 3) -> dict:
    """Forecast for the next 1–7 days: condition plus daily high and low in °C."""
    choices = cities_in(city)
    if len(choices) > 1 and ctx.can_ask("elicitation"):  # "China"? ask which city: the question comes first,
        city = await which_city(ctx, city, choices)       # because on a modern retry this body runs again
    name = find_city(city)
    today = CITIES[name]
    swing = (1, 2, 0, -1, 1, 3, 0)  # the same gentle pattern for every city keeps the table short
    forecast = []
    for day in range(days):
        high = today.celsius + swing[day]
        condition = today.week[day]
        forecast.append({"day": day + 1, "condition": condition, "condition_zh": CONDITIONS[condition],
                         "high_c": high, "low_c": high - 6})
    return {"city": name, "days": forecast}


@server.resource("weather://cities", name="cities", mime_type="application/json")
def cities() -> list:
    """Every city this server knows, with its Chinese name and country."""
    return [{"name": name, "zh": city.zh, "country": city.country} for name, city in CITIES.items()]


@server.resource("weather://city/{name}", name="city", mime_type="application/json",
                 complete={"name": list(CITIES)})
def city_weather(name: str) -> dict:
    """The current weather of one city, as JSON."""
    if name not in CITIES:
        raise LookupError(name)  # the toolkit answers "Resource not found"
    now = CITIES[name]
    return {"city": name, "zh": now.zh, "country": now.country, "condition": now.condition,
            "condition_zh": CONDITIONS[now.condition], "celsius": now.celsius,
            "humidity": now.humidity, "wind_kmh": now.wind_kmh}


@server.prompt(complete={"city": list(CITIES)})
def weather_report(city: str, style: Literal["brief", "detailed"] = "brief") -> list:
    """Ask the model for a weather report on one city, with the city's data attached.

    Args:
        city: City name, e.g. "Beijing".
        style: "brief" (two sentences) or "detailed" (a paragraph with advice on what to wear).
    """
    try:
        name = find_city(city)
    except ToolError as exc:
        raise InvalidParams(str(exc)) from None  # a prompt has no isError: a bad argument is a protocol error
    data = json.dumps(city_weather(name), ensure_ascii=False)
    ask = ("Write a two-sentence weather report" if style == "brief"
           else "Write a detailed weather report, with advice on what to wear,")
    return [user(embedded(f"weather://city/{name}", text=data, mime_type="application/json")),
            user(f"{ask} for {name} from the data above. 用中文和英文各写一遍。")]


# With --auth (an OAuth resource server, mcplab/auth/): every request needs the weather:read scope.
SCOPES = ScopePolicy(base=("weather:read",))

if __name__ == "__main__":
    run(server, scopes=SCOPES)
