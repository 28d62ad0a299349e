"""我的 MCP 服务端，第二部分：由你来写（实验 11），从你在实验 09 写的服务端开始。

    python zh-CN/build/my_server_two.py                       # stdio：它在 stdin 上等待 JSON-RPC 行
    python zh-CN/build/my_server_two.py --http --port 0       # 在 127.0.0.1 上提供 Streamable HTTP（TODO 5）
    mcplab grade server-two labs/zh-CN/build/my_server_two.py      # 成绩单；在实验里：grade.server_two(...)

这是 labs/build/my_server_two.py 的简体中文版：代码相同，注释和说明经过翻译。

任务书。你在实验 09 写的服务端（在下面导入：它的工具、资源和提示词都保留）要学会五件事，
评分器按下面这些名字调用它们，两代都评，两种传输都评：
  1. crunch(steps: int = 10, label: str = "job")：一个有 `steps` 步的耗时工具，每步约 0.05 秒，
     每步之后报告进度（MCP "basic/utilities/progress"）；
  2. 被取消的 crunch 会停下：没有下一步，也没有响应（MCP "basic/utilities/cancellation"）；
     steps_done(label: str = "job") -> int 说出名为 `label` 的任务做了几步；
  3. 一个长列表：resources/list 里有 25 个或更多资源，每页最多 10 个，用你自己的游标：
     对客户端不透明，对你从未发出过的游标回答 -32602（"server/utilities/pagination"）；
  4. sign_off()：在调用中途问用户的名字，并用一段包含这个名字的文字作答：2025-11-25 中是
     elicitation/create（"client/elicitation"），2026-07-28 中是带 requestState 的 input_required 结果
     （"basic/patterns/mrtr"）；
  5. 这一切也要能通过 Streamable HTTP，两代都行（"basic/transports"）：带 --http 时 run(server) 就提供它。
"""

from __future__ import annotations

import base64  # noqa: F401  base64.urlsafe_b64encode(...)：让游标不透明的一种办法
import json  # noqa: F401
import secrets  # noqa: F401

import anyio  # noqa: F401  await anyio.sleep(0.05)：取消可以落在这样的一步上

from mcplab import InvalidParams  # noqa: F401  raise InvalidParams("...")：客户端得到错误 -32602
from mcplab.server import Context, ToolError, run  # noqa: F401

from my_server import server  # 你在实验 09 写的服务端：第二部分在它上面添加

# 耗时任务做了几步，按 label 记：steps_done 读取它们（实验 11 §3 讲了为什么要靠副作用来显示）。
DONE: dict[str, int] = {}

# TODO 1（实验 11 §2，"basic/utilities/progress"）：一个工具 crunch(ctx: Context, steps: int = 10, label: str = "job")：
#        async，一次一步（await anyio.sleep(0.05)），DONE[label] = step，然后
#        await ctx.report_progress(step, total=steps)
# TODO 2（实验 11 §3，"basic/utilities/cancellation"）：一个工具 steps_done(label: str = "job") -> int，以及一个
#        被取消时在下一个 await 处停下的 crunch（绝不要捕获取消然后继续干活）

# TODO 3（实验 11 §4，"server/utilities/pagination"）：resources/list 里有 25 个或更多资源（一个带
#        lister=... 的资源模板），以及下面的 page()：每页 PAGE_SIZE 项，一个不透明的游标，
#        对这个服务端从未发出过的游标 raise InvalidParams(...)
PAGE_SIZE = 10


def page(items: list, cursor: object, what: str) -> tuple[list, str | None]:
    """从 `cursor` 开始的一页 `items`（整个 tools/list、resources/list……），以及下一页的游标
    （最后一页之后为 None）。"""
    return items, None  # 目前：不管游标是什么，全部放在一页里


server.page = page  # 工具包回答每个列表时都调用它

# TODO 4（实验 11 §5，"client/elicitation"、"basic/patterns/mrtr"）：一个工具 sign_off(ctx: Context)，它提问
#        answer = await ctx.elicit("...", {"type": "object", "properties": {"name": {"type": "string"}}})
#        并把提问之前算出来的东西放在 ctx.state 里（2026-07-28 在重试时会把函数体再运行一遍）

# TODO 5（实验 11 §6，"basic/transports"）：这里不用写什么；用 --http 启动它，两代都试一试


if __name__ == "__main__":
    run(server)
