"""Checks for the lab exercises.

Every lab ends with a few exercises at the protocol level. A student writes an
answer in a cell and calls ``check_<name>(answer)``; the check returns a
:class:`Feedback` that says what is right, what is wrong and gives a hint,
never a bare "wrong". Feedback prints the same way every time, so the lab
notebooks can store it and nbval can compare it.

One submodule per lab keeps each lab's checks next to each other; they are all
re-exported here so a notebook writes ``from mcplab import exercises`` and
``exercises.check_initialize_request(...)``.

``careless`` is lab material of another kind: the bundled parts each with one defence left out, for
Lab 14's attacks to succeed against (``python -m mcplab.exercises.careless``). It is not loaded here.

Layer: near the top. Checks may import the client and server sides, ``lifecycle``, ``wire``,
``ecosystem``, ``economics`` and ``course``, to compare an answer with what the product does; only the
labs import them.
"""

from __future__ import annotations

from mcplab.exercises._feedback import Feedback
from mcplab.exercises.lab01 import *  # noqa: F401,F403
from mcplab.exercises.lab02 import *  # noqa: F401,F403
from mcplab.exercises.lab02_cancel import *  # noqa: F401,F403
from mcplab.exercises.lab03 import *  # noqa: F401,F403
from mcplab.exercises.lab03_pages import *  # noqa: F401,F403
from mcplab.exercises.lab04 import *  # noqa: F401,F403
from mcplab.exercises.lab05 import *  # noqa: F401,F403
from mcplab.exercises.lab05_opening import *  # noqa: F401,F403
from mcplab.exercises.lab06 import *  # noqa: F401,F403
from mcplab.exercises.lab07 import *  # noqa: F401,F403
from mcplab.exercises.lab08 import *  # noqa: F401,F403
from mcplab.exercises.build_server_two import *  # noqa: F401,F403
from mcplab.exercises.lab10_http import *  # noqa: F401,F403
from mcplab.exercises.lab12_forms import *  # noqa: F401,F403
from mcplab.exercises.lab13 import *  # noqa: F401,F403
from mcplab.exercises.lab14 import *  # noqa: F401,F403
from mcplab.exercises.lab15 import *  # noqa: F401,F403
