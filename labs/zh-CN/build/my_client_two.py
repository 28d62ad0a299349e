"""我的 MCP 客户端，第二部分：它回答服务端的请求，读完每一页，并且会说 2026-07-28。由你来写。

    python my_client_two.py [--era legacy|modern] [--answer FORM-JSON] [--call TOOL ARGUMENTS-JSON]
                            [--timeout SECONDS] -- SERVER COMMAND...
    python zh-CN/build/my_client_two.py --era modern --answer '{"name": "Ada", "seats": 2}' \\
        --call book_table '{"day": "Friday"}' -- python -m mcplab.grade.desk --era modern

这是 labs/build/my_client_two.py 的简体中文版：代码相同，注释、说明和它打印的话经过翻译。

第一部分已经是你的了：这个文件从旁边的 my_client.py（实验 10）导入 StdioClient，所以管道、带超时的
读取和关闭流程都是你自己写的那些。先给第一部分评分（`mcplab grade client labs/zh-CN/build/my_client.py`）：
第二部分建立在它之上。Client 新增六个步骤，每一步都先在实验 12 的一个单元格里搭好；底部的 main() 已经写好。
命令行没有对话框，所以用户对任何表单的回答都来自 --answer。
用 `mcplab grade client-two labs/zh-CN/build/my_client_two.py` 给它评分，或者在实验里：grade.client_two(...)。
"""

from __future__ import annotations

import argparse
import json
import sys

from my_client import CLIENT_INFO, PROTOCOL_VERSION, SPEAKS, ServerError, StdioClient, texts

MODERN_VERSION = "2026-07-28"
CAPABILITIES = {"elicitation": {"form": {}}}  # 这个客户端唯一能被问到的东西：给它的用户的一张表单
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
METHOD_NOT_FOUND = -32601
TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool}  # JSON Schema → Python 类型


def fits(schema: dict, content: object) -> str:
    """步骤 C（§3）：``content`` 为什么不符合 elicitation 的 ``requestedSchema``；符合则返回 ""。

    Elicitation 表单是扁平的：一个由字符串、数字、整数和布尔值组成的对象。
    """
    raise NotImplementedError("TODO C：说明 content 为什么不符合 schema，符合则返回 \"\"（实验 12 §3）")


class Client(StdioClient):
    """第一部分的客户端，学会了回答服务端、分页读取，并且会说 2026-07-28。"""

    def __init__(self, command: list[str], timeout: float = 10.0, era: str = "legacy",
                 answer: object = None) -> None:
        super().__init__(command, timeout)
        self.era = era
        self.answer = answer  # 用户在服务端给出的任何表单里填写的内容

    # --- 服务端也会提问 -----------------------------------------------------------------------
    def request(self, method: str, params: dict | None = None) -> dict:
        """步骤 A（§2）：第一部分的 request，等待期间回答服务端发来的每个请求。"""
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if self.era == "modern":
            params = self.stamp(params)
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            try:
                reply = self.receive()
            except TimeoutError:
                if method != "initialize":  # 永远不要取消 initialize（utilities "cancellation"）
                    self.notify("notifications/cancelled", {"requestId": request_id, "reason": "timed out"})
                raise
            if "method" in reply:
                if "id" in reply:
                    raise NotImplementedError("TODO A：服务端问了点什么：把 self.respond(reply) 发给它，"
                                              "然后继续等待（实验 12 §2）")
                continue  # 通知不需要回答
            if reply.get("id") != request_id:
                continue
            if "error" in reply:
                raise ServerError(reply["error"])
            return reply["result"]

    def respond(self, request: dict) -> dict:
        """步骤 B（§2）：对服务端一个请求的响应。"""
        raise NotImplementedError("TODO B：ping 回 {}，elicitation/create 回表单的答案，其余的回 "
                                  "-32601（实验 12 §2）")

    def elicit(self, params: dict) -> dict:
        """步骤 C（§3）：用户对表单的回答，前提是它符合表单的 schema；否则 cancel。"""
        raise NotImplementedError("TODO C：self.answer 符合表单就 accept 它，否则 cancel（实验 12 §3）")

    # --- 分页的列表 ------------------------------------------------------------------------------
    def list_tools(self) -> tuple[list[dict], int]:
        """步骤 D（§4）：所有工具，一页接一页，直到某页没有 nextCursor；以及页数。"""
        raise NotImplementedError("TODO D：先发 tools/list，再带上每个 nextCursor 重发，直到没有为止"
                                  "（实验 12 §4）")

    # --- 2026-07-28 ------------------------------------------------------------------------------
    def stamp(self, params: dict | None) -> dict:
        """步骤 E（§5）：每个 2026-07-28 请求在 params 里携带的东西。"""
        raise NotImplementedError("TODO E：params 加上 _meta：协议版本、能力、clientInfo"
                                  "（实验 12 §5）")

    def open(self) -> str:
        """旧版：第一部分的握手，声明 elicitation。新版（§5）：server/discover。"""
        if self.era == "modern":
            raise NotImplementedError("TODO E：发 server/discover，并检查 MODERN_VERSION 在它的 "
                                      "supportedVersions 里（实验 12 §5）")
        else:
            result = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": CAPABILITIES,
                                                 "clientInfo": CLIENT_INFO})
            version = result.get("protocolVersion")
            if version not in SPEAKS:
                raise ValueError(f"服务端回答的协议版本是 {version!r}；这个客户端会说 "
                                 f"{', '.join(SPEAKS)}，所以断开连接")
            self.notify("notifications/initialized")
        server = result.get("serverInfo") or result.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
        return f"服务端：{server.get('name')} {server.get('version')}（协议 {version}）"

    def call_tool(self, name: str, arguments: dict) -> dict:
        """步骤 F（§6）：tools/call；遇到 input_required 就回答并重试（换一个新 id），直到完成。"""
        raise NotImplementedError("TODO F：tools/call；遇到 input_required 就回答 inputRequests，再带上 "
                                  "inputResponses 和 requestState 重试（实验 12 §6）")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="一个手写的 stdio MCP 客户端，第二部分。")
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy", help="要说的协议时代")
    parser.add_argument("--answer", type=json.loads, help="用户对表单的回答，一个 JSON 对象")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"), help="用一个 JSON 对象调用 TOOL")
    parser.add_argument("--timeout", type=float, default=10.0, help="每个回答最多等待的秒数")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- 后面跟服务端的命令")
    args = parser.parse_args(argv)
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        parser.error("在 -- 后面给出服务端的命令，例如 -- python ../servers/weather.py")
    if command[0] in ("python", "python3"):
        command[0] = sys.executable
    try:
        with Client(command, args.timeout, args.era, args.answer) as client:
            print(client.open())
            tools, pages = client.list_tools()
            print(f"工具（{pages} 页）：", ", ".join(tool["name"] for tool in tools))
            if args.call:
                name, arguments = args.call[0], json.loads(args.call[1])
                result = client.call_tool(name, arguments)
                print(f"{name} →" + ("（工具报告了一个错误）" if result.get("isError") else ""))
                print(texts(result))
    except (OSError, ValueError, TimeoutError, ServerError, NotImplementedError) as exc:
        print(f"my_client_two: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
