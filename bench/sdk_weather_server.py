"""The comparison server: servers/weather.py's two tools, written with the official SDK's MCPServer
(FastMCP in SDK 1.x). Only for measuring (bench/run.py starts it beside ours): not part of the course.

    python bench/sdk_weather_server.py                          # stdio, as MCPServer.run() serves it
    python bench/sdk_weather_server.py --http [--port 0]        # Streamable HTTP at /mcp, the SDK's defaults

Over HTTP it behaves like mcplab's servers where bench/ relies on it: it binds 127.0.0.1 itself
(port 0 picks a free one), prints ``mcplab: serving weather-sdk at URL`` on stderr once uvicorn
accepts connections, and exits when a piped stdin reaches end of file. Everything else (SSE replies,
sessions, DNS-rebinding protection) is the SDK's default ``streamable_http_app()``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

CONDITIONS = {"sunny": "晴", "cloudy": "多云", "rain": "中雨", "fog": "雾"}
CITIES = {  # city → (condition, °C, humidity %, wind km/h, next 7 days)
    "Beijing": ("sunny", 12, 30, 9, ("sunny", "sunny", "cloudy", "sunny", "sunny", "cloudy", "sunny")),
    "Seattle": ("rain", 10, 88, 13, ("rain", "rain", "cloudy", "rain", "cloudy", "rain", "rain")),
    "London": ("fog", 11, 90, 8, ("fog", "rain", "cloudy", "rain", "cloudy", "rain", "cloudy")),
}

mcp = MCPServer("weather-sdk")


@mcp.tool()
def get_weather(city: str, units: Literal["metric", "imperial"] = "metric") -> str:
    """查询指定城市的当前天气"""
    if city not in CITIES:
        raise ValueError(f"Unknown city {city!r}")
    condition, celsius, humidity, wind, _ = CITIES[city]
    shown = f"{celsius} °C" if units == "metric" else f"{celsius * 9 / 5 + 32:.0f} °F"
    return f"{city}: {condition} ({CONDITIONS[condition]}), {shown}, humidity {humidity}%, wind {wind} km/h"


@mcp.tool()
def get_forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 3) -> dict:
    """Forecast for the next 1–7 days: condition plus daily high and low in °C."""
    if city not in CITIES:
        raise ValueError(f"Unknown city {city!r}")
    _, celsius, _, _, week = CITIES[city]
    swing = (1, 2, 0, -1, 1, 3, 0)
    return {"city": city, "days": [{"day": d + 1, "condition": week[d], "high_c": celsius + swing[d],
                                    "low_c": celsius + swing[d] - 6} for d in range(days)]}


if __name__ == "__main__":
    import sys

    if "--http" in sys.argv:  # no argparse: the stdio start-up measured is the SDK's own, nothing added
        from harness import flag, serve_uvicorn  # bench/harness.py, beside this file

        host = flag("--host", "127.0.0.1")
        serve_uvicorn(mcp.streamable_http_app(host=host), "weather-sdk", host, int(flag("--port", "0")))
    else:
        mcp.run()
