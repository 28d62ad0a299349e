"""The comparison server: servers/weather.py's two tools, written with the official SDK's MCPServer
(FastMCP in SDK 1.x), served over stdio. bench/cold_start.py and bench/throughput.py start it beside
ours. Only for measuring: it is not part of the course."""

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
    mcp.run()
