"""我的 MCP 服务端：由你来写（实验 09），基于 mcplab 的服务端工具包（在旁边打开 mcplab/server/）。

    python zh-CN/build/my_server.py                        # stdio：它在 stdin 上等待 JSON-RPC 行
    mcplab grade server labs/zh-CN/build/my_server.py      # 成绩单；在实验里：grade.server(...)

这是 labs/build/my_server.py 的简体中文版：代码相同，注释和说明经过翻译。

任务书。一个由你自己选题的小服务端（待办清单、单位换算、术语表、小测验……），要有：
  1. 两个或更多工具，每个参数都有类型（类型注解就能做到：str、int、float、bool、Literal[...]）；
  2. 一个资源（固定的 URI）或一个资源模板（带 {变量} 的 URI）；
  3. 一个提示词；
  4. 一个工具在被要求做它做不到的事时（例如一个不存在的条目），以工具错误（isError: true）报告失败。
评分器根据你的工具的 schema（默认值、Literal 选项、示例、类型）构造参数，所以它能调用每个工具；
它还会尝试一些不太可能的值，你的工具错误应该在那里出现。
"""

from __future__ import annotations

from typing import Literal  # noqa: F401  Literal["a", "b"]：取值限定在一组选项中的参数

from mcplab.server import Server, ToolError, run  # noqa: F401

# TODO 0：给你的服务端起一个自己的名字，并写上说明它用途的 instructions。
server = Server("my-server", "0.1.0")

# 你的服务端的数据就放在这里，在这个进程里（实验 09 §9 讲了这意味着什么）。
ITEMS: dict[int, dict] = {}

# TODO 1（实验 09 §2）：一个带类型参数的工具：              @server.tool
# TODO 2（实验 09 §2、§3）：第二个工具，对它没有的条目 raise ToolError("...")
# TODO 3（实验 09 §4）：一个资源或资源模板：                @server.resource("myserver://...")
# TODO 4（实验 09 §5）：一个提示词：                        @server.prompt


if __name__ == "__main__":
    run(server)
