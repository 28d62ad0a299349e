"""我的 stdio MCP 客户端，只用 subprocess、json 和标准库：由你来写。

    python my_client.py [--call TOOL ARGUMENTS-JSON] [--timeout SECONDS] -- SERVER COMMAND...
    python zh-CN/build/my_client.py --call get_weather '{"city": "Beijing"}' -- python ../servers/weather.py

这是 labs/build/my_client.py 的简体中文版：代码相同，注释、说明和它打印的话经过翻译。

它把服务端作为子进程启动，打开一个旧版会话（initialize → 它的结果 → notifications/initialized），
列出工具，调用其中一个，打印返回的内容，然后按 stdio 传输规定的方式关闭服务端：关闭它的 stdin，
等待，然后发信号。底部的 main() 已经写好；StdioClient 的八个步骤由你来写（实验 10 先在单元格里
逐一搭好每一步）。用 `mcplab grade client labs/zh-CN/build/my_client.py` 给它评分，或者在实验里：
grade.client(...)。
"""

from __future__ import annotations

import argparse
import itertools
import json  # noqa: F401
import queue
import subprocess
import sys
import threading  # noqa: F401
from collections import deque

PROTOCOL_VERSION = "2025-11-25"               # 我们请求的修订版：我们会说的最新一版
SPEAKS = ("2025-03-26", "2025-06-18", "2025-11-25")   # 这个客户端听得懂的修订版
CLIENT_INFO = {"name": "my-client", "version": "0.1.0"}
SHUTDOWN_WAIT = 5.0                           # 服务端的 stdin 关闭后，给它退出的秒数


class ServerError(Exception):
    """服务端用一个 JSON-RPC 错误回答了请求。"""

    def __init__(self, error: dict) -> None:
        super().__init__(f"错误 {error.get('code')}：{error.get('message')}")
        self.code = error.get("code")


class StdioClient:
    """一个服务端，作为子进程启动；每个方向都是一行一条 JSON-RPC 消息。"""

    def __init__(self, command: list[str], timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.ids = itertools.count(1)
        self.inbox: queue.Queue = queue.Queue()
        self.log: deque[str] = deque(maxlen=20)     # 服务端 stderr 的最后几行
        self.process = self.start(command)

    def start(self, command: list[str]) -> subprocess.Popen:
        """第 1 步（实验 10 §2）：启动服务端，它的三个流各接一根管道，再加两个读取线程。"""
        # subprocess.Popen(command, stdin=..., stdout=..., stderr=..., text=True, encoding="utf-8")，然后
        # 在线程里（daemon=True）启动 _read_stdout 和 _drain_stderr，并返回这个进程。
        raise NotImplementedError("TODO 1：用三根管道和两个读取线程启动服务端（实验 10 §2）")

    def _read_stdout(self, process: subprocess.Popen) -> None:
        """第 3 步（实验 10 §4）：服务端写出的每一行都放进收件箱；结束时放一个 None。"""
        raise NotImplementedError("TODO 3：把 stdout 的每一行放进 self.inbox，最后放 None（实验 10 §4）")

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        """第 4 步（实验 10 §6）：stderr 一到就读，保留最后几行用于错误消息。"""
        raise NotImplementedError("TODO 4：把 stderr 的各行读进 self.log（实验 10 §6）")

    # --- 线上 ---------------------------------------------------------------------------------
    def send(self, message: dict) -> None:
        """第 2 步（实验 10 §3）：一条消息，一行，写完就 flush。"""
        raise NotImplementedError("TODO 2：把消息写成一行 JSON，然后 flush（实验 10 §3）")

    def receive(self) -> dict:
        """第 5 步（实验 10 §5）：收件箱里的下一条消息；超过 self.timeout 秒则 TimeoutError。"""
        # queue.Queue.get(timeout=...) 在规定时间内什么都没等到时抛出 queue.Empty。
        raise NotImplementedError("TODO 5：下一条消息，或 TimeoutError（实验 10 §5）")

    def request(self, method: str, params: dict | None = None) -> dict:
        """第 6 步（实验 10 §4、§5）：发送一个请求并返回它的结果，跳过其他一切。"""
        # 一个新 id（next(self.ids)）；发送；然后一直接收，直到带这个 id 的回复到来，跳过通知；
        # "error" 则抛出 ServerError；遇到 TimeoutError 时先发送 notifications/cancelled
        # （initialize 除外：客户端绝不能取消它）。
        raise NotImplementedError("TODO 6：发送一个请求，返回它的结果（实验 10 §4、§5）")

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # --- 会话 ---------------------------------------------------------------------------------
    def initialize(self) -> dict:
        """第 7 步（实验 02 §2 和 §5）：握手，拒绝这个客户端不会说的版本。"""
        # 用 PROTOCOL_VERSION、空的 capabilities 和 CLIENT_INFO 发送 initialize；protocolVersion 不在
        # SPEAKS 中就断开（raise ValueError）；否则发送 notifications/initialized，并返回结果。
        raise NotImplementedError("TODO 7：initialize 握手（实验 02 §2、§5）")

    def close(self) -> int:
        """第 8 步（实验 10 §7）：关闭 stdin，等待；然后 SIGTERM，等待；然后 SIGKILL。返回退出状态。"""
        raise NotImplementedError("TODO 8：关闭 stdin，等待，然后 terminate，再然后 kill（实验 10 §7）")

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def texts(result: dict) -> str:
    """一个工具结果里的各个文本块，一个接一个。"""
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="一个手写的 stdio MCP 客户端。")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"), help="用一个 JSON 对象调用 TOOL")
    parser.add_argument("--timeout", type=float, default=10.0, help="每个回答最多等待的秒数")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- 后面跟服务端的命令")
    args = parser.parse_args(argv)
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        parser.error("在 -- 后面给出服务端的命令，例如 -- python ../servers/weather.py")
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # 本课程环境的解释器，而不是 PATH 上随便哪个
    try:
        with StdioClient(command, args.timeout) as client:
            info = client.initialize()
            server = info.get("serverInfo", {})
            print(f"服务端：{server.get('name')} {server.get('version')}（协议 {info['protocolVersion']}）")
            tools = client.request("tools/list")["tools"]
            print("工具：", ", ".join(tool["name"] for tool in tools))
            if args.call:
                name, arguments = args.call[0], json.loads(args.call[1])
                result = client.request("tools/call", {"name": name, "arguments": arguments})
                print(f"{name} →" + ("（工具报告了一个错误）" if result.get("isError") else ""))
                print(texts(result))
    except (OSError, ValueError, TimeoutError, ServerError, NotImplementedError) as exc:  # ConnectionError 也是 OSError
        print(f"my_client: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
