"""我的 Streamable HTTP MCP 客户端，只用 httpx 和标准库：由你来写。

    python my_http_client.py URL [--era legacy|modern] [--call TOOL ARGUMENTS-JSON]
    python zh-CN/build/my_http_client.py http://127.0.0.1:8000/mcp --era modern

这是 labs/build/my_http_client.py 的简体中文版：代码相同，注释、说明和它打印的话经过翻译。

客户端发出的每条消息，都是把一条 JSON-RPC 消息 POST 到服务端唯一的 URL，并声明它接受服务端可能
选择的两种回复：一个 JSON 正文，或者一个事件流（先携带关于这个请求的通知，再携带它的响应）。
随代而变的部分：

    旧版（2025-11-25）   initialize；记住服务端分配的 Mcp-Session-Id，之后每个请求都把它和
                          MCP-Protocol-Version 一起带回去；notifications/initialized（202）；
                          tools/list；tools/call；用 DELETE 结束会话
    新版（2026-07-28）   没有握手，也没有会话：先 server/discover，之后每个请求都带 _meta
                          （协议版本、客户端信息和能力），以及复制了它的方法和名字的路由头
                          Mcp-Method 和 Mcp-Name；最后关闭连接

每次交换打印一行。填好六个 TODO（实验 10 第 10 部分逐一讲解）；用
`mcplab grade http-client labs/zh-CN/build/my_http_client.py` 给它评分，还留着 TODO 时，成绩单的
第一行会点出让客户端停下的那一个。labs/solutions/build/my_http_client.py 是一份答案。
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import sys

import httpx

LEGACY_VERSION = "2025-11-25"                 # 我们请求的旧版修订版
MODERN_VERSION = "2026-07-28"                 # 没有握手的修订版
CLIENT_INFO = {"name": "my-http-client", "version": "0.1.0"}
CAPABILITIES: dict = {}                       # 这个客户端不向服务端提供任何东西（没有根目录，没有采样）
ACCEPT = "application/json, text/event-stream"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # Mcp-Name 的来源


def header_value(text: str) -> str:
    """正文里的值在请求头里的样子：是纯可见 ASCII 就原样，否则用规范的 base64 形式。"""
    plain = all(" " <= ch <= "~" for ch in text) and text == text.strip(" ")
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


class ServerError(Exception):
    """服务端用 JSON-RPC 错误回答了请求，或者回来的东西根本不是回答。"""


class HttpClient:
    """一个 MCP 端点，一代；``request`` 和 ``notify`` 各是一个 POST。"""

    def __init__(self, url: str, era: str, timeout: float = 30.0) -> None:
        self.url, self.era = url, era
        self.http = httpx.Client(timeout=timeout)
        self.ids = itertools.count(1)
        self.session_id: str | None = None    # 旧版：服务端在 initialize 时分配的会话
        self.version = LEGACY_VERSION if era == "legacy" else MODERN_VERSION

    def headers(self, message: dict) -> dict[str, str]:
        """第 1 步：一个 POST 的请求头（总是有 Accept 和 Content-Type；其余的按代而定）。"""
        raise NotImplementedError("TODO 1：Accept 和 Content-Type；然后是这一代的请求头（实验 10 §10.1、§10.3）")

    def post(self, message: dict) -> httpx.Response:
        body = json.dumps(message).encode("utf-8")
        request = self.http.build_request("POST", self.url, content=body, headers=self.headers(message))
        return self.http.send(request, stream=True)  # stream：事件流随到随读

    def request(self, method: str, params: dict | None = None) -> tuple[dict, httpx.Response]:
        """第 2 步：一个请求，读它的回复直到响应；返回（结果，HTTP 回复）。"""
        if self.era == "modern":
            raise NotImplementedError("TODO 2：_meta：协议版本、clientInfo、clientCapabilities（实验 10 §10.3）")
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        try:
            reply = self.answer(response, message["id"])
        finally:
            response.close()  # 响应一到，这个流就用完了：关闭它
        if "error" in reply:
            error = reply["error"]
            raise ServerError(f"{method}: error {error.get('code')}: {error.get('message')}")
        return reply["result"], response

    def answer(self, response: httpx.Response, request_id: int) -> dict:
        """第 3 步：``request_id`` 的响应，来自 JSON 正文或事件流。"""
        raise NotImplementedError("TODO 3：JSON 正文，或者交给 read_stream 的事件流（实验 10 §10.1、§10.4）")

    def read_stream(self, response: httpx.Response, request_id: int) -> dict:
        """第 4 步：读取事件，直到装着我们的响应的那一个；跳过其他的。"""
        raise NotImplementedError("TODO 4：读取事件，直到 request_id 的响应（实验 10 §10.4）")

    def notify(self, method: str) -> httpx.Response:
        """一个通知：一个 POST，得到 202 Accepted，没有正文。"""
        response = self.post({"jsonrpc": "2.0", "method": method})
        response.close()
        if response.status_code != 202:
            raise ServerError(f"{method}：HTTP {response.status_code}，应为 202")
        return response

    def open(self) -> str:
        """第 5 步：每一代的开场；返回要打印的一行。"""
        raise NotImplementedError("TODO 5：initialize 和 initialized（旧版），或者 server/discover（实验 10 §10.1、§10.3）")

    def close(self) -> str:
        """第 6 步：结束。旧版：用 DELETE 结束会话（405 表示服务端不让结束）。新版：直接关闭。"""
        raise NotImplementedError("TODO 6：用 DELETE 结束旧版会话，然后关闭连接（实验 10 §10.2）")


def kind(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip()


def texts(result: dict) -> str:
    """工具结果里的文本块，一个接一个。"""
    return " ".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="一个手写的 Streamable HTTP MCP 客户端。")
    parser.add_argument("url", help="服务端的 MCP 端点，例如 http://127.0.0.1:8000/mcp")
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"),
                        default=("get_weather", '{"city": "Beijing"}'), help="要调用的工具，以及一个 JSON 对象形式的参数")
    args = parser.parse_args(argv)
    client = HttpClient(args.url, args.era)
    try:
        print(client.open())
        result, response = client.request("tools/list")
        print(f"tools/list → {response.status_code} {kind(response)}: "
              + ", ".join(tool["name"] for tool in result["tools"]))
        name, arguments = args.call[0], json.loads(args.call[1])
        result, response = client.request("tools/call", {"name": name, "arguments": arguments})
        print(f"tools/call {name} → {response.status_code} {kind(response)}: {texts(result)}")
        print(client.close())
    except (httpx.HTTPError, ServerError, KeyError, ValueError, NotImplementedError) as exc:
        print(f"my_http_client: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
