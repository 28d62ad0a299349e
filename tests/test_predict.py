"""Predict, then run: the widget judges through its callbacks, hides its answer, and speaks Chinese.

The answers live here, and only here: each is checked against its prediction's digest, against a
table of plausible wrong predictions (none may pass), and against what the lab's next cell really
prints, so a prediction whose exchange changes fails here instead of telling a student the wrong thing.
"""

from __future__ import annotations

import ast
import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Callable

import nbformat
import pytest

from mcplab import i18n
from mcplab.notebook.prediction import Asked, Prediction, digest_of, normalise
from mcplab.notebook.predictions import PREDICTIONS, predict

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
ASK = re.compile(r"""notebook\.predict\(["']([0-9a-z_.]+)["']\)""")
MINIMUM_PER_LAB = 3


def _replies(text: str) -> int:
    line = next(line for line in text.splitlines() if line.startswith("replies: "))
    return len(json.loads(line.removeprefix("replies: ")))


def _first_message_chunk(text: str) -> int:
    fed = [line for line in text.splitlines() if line.startswith("fed ")]
    return next(place for place, line in enumerate(fed, 1) if not line.endswith("out: []"))


def _replies_after_initialized(text: str) -> int:
    frames = [line for line in text.splitlines() if re.match(r"\s+\d+ [→←] ", line)]
    after = frames[next(i for i, line in enumerate(frames) if "notifications/initialized" in line) + 1:]
    return sum("←" in line.split()[1] for line in after)


def _status_after_initialized(text: str) -> str:
    lines = text.splitlines()
    sent = next(i for i, line in enumerate(lines) if "→ http POST" in line and "notifications/initialized" in line)
    return re.search(r"← http POST (\d+)", lines[sent + 1])[1]


def _between(text: str, start: str, end: str | None = None) -> str:
    after = text.split(start, 1)[1]
    return after.split(end, 1)[0] if end else after


def _ratio_levels_off_below_100(text: str) -> bool:
    lines = re.findall(r"^100 apps × ([\d,]+) tools: .*\bratio ([\d.]+)\)$", text, re.M)
    by_tools = {m: float(ratio) for m, ratio in lines}  # a later cell may print one of the five again
    ratios = [by_tools[m] for m in sorted(by_tools, key=lambda m: int(m.replace(",", "")))]
    return len(ratios) == 5 and ratios == sorted(ratios) and 99 < ratios[-1] < 100 and ratios[-1] - ratios[-2] < 1


def _fewer_pieces_at_half_density(text: str) -> str:
    found = re.search(r"at density 0.5: (\d+) adapters vs (\d+) implementations", text)
    adapters, implementations = int(found[1]), int(found[2])
    if adapters == implementations:
        return "neither"
    return "point-to-point" if adapters < implementations else "the protocol"


def _frames_of_the_modern_trace(text: str) -> int:
    blocks = re.split(r"\n\s*\n", text)
    trace = next(block for block in blocks if re.search(r"^\s+\d+ → stdio .*server/discover", block, re.M))
    return sum(bool(re.match(r"\s+\d+ [→←] ", line)) for line in trace.splitlines())


def _lists_every_version_it_speaks(text: str) -> bool:
    listed = re.search(r'"supportedVersions": \[(.*?)\]', text.split("--- modern")[1], re.S)[1]
    return re.findall(r'"([0-9-]+)"', listed) == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def _failing_rows_over_stdio(text: str) -> int:
    table = text.split("rows over stdio")[0]
    return sum(" fails: " in line for line in table.splitlines())


# key → (the right answer, plausible wrong ones for a short value, what the lab's next cells show)
ANSWERS: dict[str, tuple[str, tuple[str, ...], Callable[[str], object]]] = {
    "01.null_id": ("refused with -32600 (Invalid Request)", (),
                   lambda out: "refused with -32600" in out.split("\n\n")[0]),
    "01.batch": ("2", ("3", "1", "0", "two?"), _replies),
    "01.framer": ("3", ("1", "2", "4", "0"), _first_message_chunk),
    "02.same_version": ("2024-11-05", (),
                        lambda out: re.search(r'from stdout: .*"result":\{"protocolVersion":"([^"]+)"', out)[1]),
    "02.initialized_reply": ("1", ("2", "0", "3"), _replies_after_initialized),
    "02.completions": ("completions", (), lambda out: "completions" in out.split("capabilities:")[1].split("\n")[0]),
    "02.downgrade": ("2025-11-25", ("2024-10-07", "2024-11-05", "2026-07-28", "-32602", "2025-06-18"),
                     lambda out: re.search(r"the server offered (\S+)", out)[1]),
    "02.cancelled": ("the ping response: the cancelled call gets no response at all", (),
                     lambda out: out.startswith('next from the server: {"jsonrpc":"2.0","id":3,"result":{}}')),
    "03.default_units": ("°C", (), lambda out: re.search(r"Beijing: [^,]+, -?\d+ (°[CF])", out)[1]),
    "03.unknown_tool": ("-32602", ("-32601", "-32600", "-32002", "32602", "-32603"),
                        lambda out: re.search(r"protocol error: (-\d+) Unknown tool", out)[1]),
    "03.pages": ("3", ("2", "5", "1", "4"),
                 lambda out: len(re.findall(r"^→ resources/list  cursor: (?!page-2)", out, re.M))),
    "03.structured_mismatch": ("it keeps the result but does not use structuredContent as data", (),
                               lambda out: "careless: ✗" in out and "do not use it as data" in out),
    "03.resource_escape": ("-32602", ("-32002", "-32601", "-32600", "-32603"),
                           lambda out: re.search(r"resources/read: (-\d+)", out)[1]),
    "04.twins": ("backup__get_weather", ("backup_get_weather", "backup.get_weather", "get_weather",
                                         "backup/get_weather", "weather__get_weather"),
                 lambda out: re.search(r"^(\S+)\s+backup\s+get_weather", out, re.M)[1]),
    "04.crash": ("a tool result that says the server failed", (),
                 lambda out: "tools/call get_weather → Error: server 'weather' failed" in out),
    "04.catalogue": ("4", ("6", "5", "2", "0"),
                     lambda out: len(out.split("function name")[1].split("\n\n")[0].splitlines()[1:])),
    "05.before_initialize": ("HTTP 400 Bad Request, with -32600 in the body", (),
                             lambda out: "HTTP POST tools/list → 400 {'code': -32600" in out),
    "05.notification_status": ("202", ("200", "204", "400", "0"), _status_after_initialized),
    "05.session_headers": ("5", ("1", "2", "4", "6", "9", "10"), lambda out: out.count("Mcp-Session-Id: yes")),
    "05.not_acceptable": ("406", ("400", "415", "200", "403"),
                          lambda out: re.search(r"Accept without SSE\s+→ (\d+)", out)[1]),
    "00.frames": ("7", ("6", "8", "4", "3"), lambda out: re.search(r"(\d+) frames:", out)[1]),
    "00.new_handshake": ("initialize: a new connection needs a handshake of its own", (),
                         lambda out: re.search(r"^\s+1 → (\S+)", out, re.M)[1] == "initialize"),
    "00.send_frames": ("13", ("12", "11", "14", "18", "20"), lambda out: re.search(r"(\d+) frames:", out)[1]),
    "08.not_exponential": ("it levels off just below 100", (), _ratio_levels_off_below_100),
    "08.doubled": ("48", ("24", "14", "96", "12", "28"), lambda out: re.search(r"'adapters': (\d+)", out)[1]),
    "08.sparse": ("point-to-point", (), _fewer_pieces_at_half_density),
    "08.revision": ("10.5", ("6", "7", "10", "3.5", "18", "21"),
                    lambda out: re.search(r"3 ×\s+4: one revision costs\s+\S+ point-to-point,\s+(\S+)", out)[1]),
    "09.error_members": ("1", ("2", "3", "0"),
                         lambda out: _between(out, "the three answers on the wire:").count('"error":')),
    "09.capabilities": ("4", ("3", "5", "6", "7"),
                        lambda out: len(ast.literal_eval(re.search(r"the bookshelf: +(\{.*\})", out)[1]))),
    "09.round_robin": ("1", ("0", "2", "3"),
                       lambda out: _between(out, "books in each process:", "books in one file:").count(": found ")),
    "10.flush": ("no: the line is still in the client's own buffer", (),
                 lambda out: re.search(r"written, not flushed: an answer within 0.5 s\? (\w+)", out)[1] == "False"),
    "10.stderr_full": ("nothing: the server is stuck writing into a full pipe", (),
                       lambda out: "stderr never read: nothing within 1 s" in out),
    "10.sigkill_status": ("-9", ("9", "137", "-15", "0", "1", "143"),
                          lambda out: re.search(r"stopped by SIGKILL, status (-?\d+)", out)[1]),
    "10.post_headers": ("3", ("4", "2", "1", "0"),
                        lambda out: len(re.findall(r"^without .+→ 4\d\d ", out, re.M))),
    "10.header_mismatch": ("HTTP 400 with the error -32020 (HeaderMismatch), twice", (),
                           lambda out: len(re.findall(r"^Mcp-Name: (?:get_forecast|\(none\)) +→ 400 .*-32020", out,
                                                      re.M)) == 2),
    "10.before_response": ("a comment line, then a notifications/message about the request", (),
                           lambda out: bool(re.search(r"^': [^']*'\n''\n'data: \{\"jsonrpc\": \"2\.0\", \"method\": "
                                                      r"\"notifications/message\"", out, re.M))),
    "06.modern_frames": ("4", ("5", "3", "2", "6"), _frames_of_the_modern_trace),
    "06.supported_versions": ("2026-07-28 and the four legacy revisions it also speaks", (),
                              _lists_every_version_it_speaks),
    "06.retry_version": ("2026-07-28", (), lambda out: re.search(r"retry with (\S+) →", out)[1]),
    "06.matrix_failures": ("2", ("0", "1", "3", "4", "7"), _failing_rows_over_stdio),
    "07.session_404": ("404", ("400", "200", "202", "409", "410"),
                       lambda out: re.search(r"the server ended this session \((\d+)\)", out)[1]),
    "07.input_required": ("input_required", (), lambda out: re.search(r'"resultType": "(\w+)"', out)[1]),
    "07.tampered": ("an error, before the tool runs", (),
                    lambda out: "RemoteError -32602" in out and "integrity check" in out.split("\n")[0]),
    "13.no_token": ("401", ("403", "400", "200", "407", "511"),
                    lambda out: re.search(r"^\s*1\s+POST /mcp\s+(\d{3})\s", out, re.M)[1]),
    "13.step_up": ("403", ("401", "400", "200", "407"),
                   lambda out: re.search(r"^\s*1\s+POST /mcp\s+(\d{3})\s", out, re.M)[1]),
    "13.passthrough": ("401", ("403", "200", "400", "407"),
                       lambda out: re.search(r"^ours\s+(\d{3}) · Bearer error=\"invalid_token\"", out, re.M)[1]),
    "14.rebinding": ("403", ("401", "400", "200", "421", "404"),
                     lambda out: re.search(r"^ours\s+(\d{3}) · Host 'attacker\.example:PORT' is not allowed", out, re.M)[1]),
    "14.sandbox_link": ("a tool result with isError: true that names the rule", (),
                        lambda out: bool(re.search(r"^ours\s+shortcut\.txt\s+→ isError True: refused", out, re.M))),
    "14.recover": ("starts the file server again and answers from notes.md", (),
                   lambda out: "ours      host → files: started again" in out and "read_file: # MCP notes" in out
                   and "hostile kept its process under both: True" in out),
    "11.progress_count": ("4", ("3", "5", "1", "0"),
                          lambda out: re.search(r"notifications/progress frames: (\d+)", out)[1]),
    "11.cancel_response": ("0", ("1", "2"), lambda out: re.search(r"responses for the cancelled id: (\d+)", out)[1]),
    "11.pages": ("4", ("1", "3", "5", "40"), lambda out: re.search(r"resources/list requests: (\d+)", out)[1]),
    "11.legacy_ask_id": ("1", ("2", "3", "0"),
                         lambda out: re.search(r'"id":(\d+),"method":"elicitation/create"', out)[1]),
    "11.modern_rounds": ("2", ("1", "3", "4"), lambda out: re.search(r"tools/call requests: (\d+)", out)[1]),
    "11.http_streams": ("1", ("2", "4", "5"),
                        lambda out: " ".join(sorted(set(re.findall(r"in (\d+) HTTP response", out))))),
    "15.host_frames": ("9", ("8", "10", "11", "12", "7"),
                       lambda out: len(re.findall(r"^\s+\d+ [→←] stdio ", out, re.M))),
    "15.unknown_resource": ("-32002, then -32602", (),
                            lambda out: ", then ".join(re.search(r"error\.code: (-\d+) → (-\d+)", out).groups())),
    "15.sdk_extra": ("tools/list", (), lambda out: re.search(r"▶\s+│ → (\S+) \(id \d+\)", out)[1]),
    "12.undeclared": ("error -32601 (Method not found)", (),
                      lambda out: "error -32601 (Method not found)" if re.search(
                          r'^\s+8 → stdio\s+\{"jsonrpc":"2.0","id":2,"error":\{"code":-32601', out, re.M) else out),
    "12.pages": ("3", ("2", "5", "4", "1", "6"), lambda out: len(re.findall(r"^tools/list \d+: ", out, re.M))),
    "12.first_modern": ("server/discover", (),
                        lambda out: re.search(r'^\s+1 → stdio\s+\{.*?"method":"([^"]+)"', out, re.M)[1]),
    "12.input_required": ("a result: resultType input_required, with the question in it", (),
                          lambda out: '"resultType": "input_required"' in out and '"inputRequests"' in out),
    "12.tampered": ("error -32602 (Invalid params)", (),
                    lambda out: "error -32602 (Invalid params)" if "one character changed: error -32602" in out else out),
}

# key prefix → how the name of the lab's notebook ends. The prefix is the lab's number in the course and a
# notebook's file name may lag behind a renumbering (economics is Lab 08 once Lab 06 is split in two,
# whether its file is still 07_economics.ipynb or already 08_economics.ipynb), so the topic finds it.
LAB_TOPICS = {"00": "start_here", "01": "jsonrpc", "02": "handshake", "03": "primitives", "04": "host",
              "05": "streamable_http", "06": "stateless", "07": "scaling", "08": "economics", "09": "build_server",
              "10": "build_client", "11": "build_server_two", "12": "build_client_two", "13": "authorization", "14": "attacks",
              "15": "ecosystem"}


def labs() -> list[Path]:
    return sorted(LABS.glob("[0-9][0-9]_*.ipynb"))


def asked_in(path: Path) -> list[tuple[int, str]]:
    """(cell index, key) of every prediction a notebook asks."""
    cells = nbformat.read(str(path), as_version=4).cells
    return [(index, key) for index, cell in enumerate(cells) if cell.cell_type == "code"
            for key in ASK.findall(cell.source)]


def text_of(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text") or output.get("data", {}).get("text/plain", ""))
    return "".join("".join(part) if isinstance(part, list) else part for part in parts)


def states(asked: Asked) -> str:
    """Everything the browser is sent about the widget, model ids blanked (they differ on every run)."""
    found = []

    def walk(widget) -> None:
        found.append(widget.get_state())
        for child in getattr(widget, "children", ()):
            walk(child)

    walk(asked.widget)
    return re.sub(r"IPY_MODEL_[0-9a-f]+", "IPY_MODEL_", json.dumps(found, sort_keys=True, default=str))


def test_every_prediction_has_its_answer_here_and_the_digest_agrees():
    assert set(ANSWERS) == set(PREDICTIONS)
    for key, (answer, _wrong, _shown) in ANSWERS.items():
        assert PREDICTIONS[key].digest == digest_of(key, answer), f"{key}: paste {digest_of(key, answer)}"


@pytest.mark.parametrize("key", list(ANSWERS))
def test_the_right_prediction_is_accepted_through_the_check_button(key):
    asked = predict(key)
    asked.choose(ANSWERS[key][0])
    asked.button.click()
    assert asked.right is True and asked.attempts == [ANSWERS[key][0]]
    assert asked.feedback.value.startswith("✓ Right.")
    assert PREDICTIONS[key].wrong not in asked.feedback.value


@pytest.mark.parametrize("key", list(ANSWERS))
def test_every_wrong_prediction_is_refused_and_pointed_at_the_frame(key):
    answer, wrong_values, _shown = ANSWERS[key]
    prediction = PREDICTIONS[key]
    wrong = [choice for choice in prediction.choices if choice != answer] or list(wrong_values)
    assert wrong, f"{key}: no wrong prediction tried"
    for value in wrong:
        asked = predict(key)
        asked.choose(value)
        asked.button.click()
        assert asked.right is False, f"{key}: {value!r} was accepted"
        assert asked.feedback.value.startswith("✗ Not this one.")
        assert prediction.wrong in html.unescape(asked.feedback.value)
    assert re.search(r"frame|line|step|column|row|inputSchema", prediction.wrong), f"{key}: says nowhere to look"


def test_a_short_value_is_compared_after_normalising_only_spacing_quotes_case_the_minus_sign_and_numbers():
    asked = predict("03.unknown_tool")
    for typed in (" -32602 ", "\u221232602", '"-32602"', "-32602.0"):
        asked.choose(typed)
        assert asked.check() is True
    for typed in ("-32601", "32602", "-3260.2", "-32602e0"):  # another number, or one written with an exponent
        asked.choose(typed)
        assert asked.check() is False
    assert normalise("Completions ") == "completions"
    assert [normalise(n) for n in ("10.50", "+10.5", "010.5", "7.", ".5", "-0", "2025-11-25")] == \
        ["10.5", "10.5", "10.5", "7", "0.5", "0", "2025-11-25"]


def test_checking_before_answering_asks_for_an_answer_and_judges_nothing():
    for key, expected in (("02.completions", "Pick one first."), ("03.unknown_tool", "Type a value first.")):
        asked = predict(key)
        asked.button.click()
        assert asked.right is None and asked.attempts == [] and asked.feedback.value == expected


def test_a_hostile_typed_value_is_judged_wrong_in_one_short_escaped_sentence():
    asked = predict("03.unknown_tool")
    for typed in ("9" * 1_000_000, "<script>alert(1)</script>", "-32602\x00", "nan", "1e309", "\u202e-32602"):
        asked.choose(typed)
        assert asked.check() is False
        assert "<script>" not in asked.feedback.value and len(asked.feedback.value) < 1000


def test_a_choice_outside_the_list_is_refused_by_name():
    with pytest.raises(ValueError, match="expected one of"):
        predict("02.completions").choose("tools")


def test_a_prediction_whose_digest_matches_none_of_its_choices_is_refused():
    with pytest.raises(ValueError, match="none of its 2 choices"):
        Prediction("x.y", "?", ("a", "b"), digest_of("x.y", "c"), "look at frame 1")
    with pytest.raises(ValueError, match="expected a digest"):
        Prediction("x.y", "?", ("a", "b"), "a", "look at frame 1")


@pytest.mark.parametrize("key", list(ANSWERS))
def test_nothing_the_browser_or_the_stored_output_gets_depends_on_the_answer(key):
    prediction = PREDICTIONS[key]
    other = next(choice for choice in (*prediction.choices, "something else") if not prediction.is_right(choice))
    decoy = dataclasses.replace(prediction, digest=digest_of(key, other))
    real, fake = Asked(prediction), Asked(decoy)
    assert states(real) == states(fake)
    assert real._repr_mimebundle_()["text/plain"] == fake._repr_mimebundle_()["text/plain"]
    assert prediction.digest not in states(real) and prediction.digest.split(":")[1] not in states(real)
    assert real.feedback.value == ""


def test_the_stored_output_is_the_question_and_carries_no_model_id():
    bundle = predict("02.downgrade")._repr_mimebundle_()
    assert bundle["text/plain"].splitlines()[0].startswith("Predict: The client asks for 2024-10-07")
    assert "model_id" not in bundle["text/plain"] and not re.search(r"[0-9a-f]{32}", bundle["text/plain"])


def test_every_sentence_of_the_widget_and_the_predictions_is_translated_into_chinese(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")
    for prediction in PREDICTIONS.values():
        texts = [prediction.question, prediction.wrong, prediction.right, *prediction.choices]
        for text in texts:
            if " " in text:  # a sentence; a bare wire value ("2024-11-05", "°C", "roots") stays as it is
                assert i18n._(text) != text, f"{prediction.key}: not translated: {text!r}"
    asked = predict("01.null_id")
    assert asked.button.description == "检查" and asked.text().startswith("预测：")
    asked.choose("被拒绝，-32600（Invalid Request）")  # the label a Chinese student clicks
    assert asked.check() is True and asked.feedback.value.startswith("✓ 对了。")
    asked.choose("被拒绝，-32700（Parse error）")
    assert asked.check() is False and asked.feedback.value.startswith("✗ 不是这个。")
    assert "第 3 步" in asked.feedback.value


def test_each_lab_asks_at_least_three_predictions_of_its_own_and_each_one_is_asked_once():
    asked = {path.stem: [key for _, key in asked_in(path)] for path in labs()}
    everywhere = [key for keys in asked.values() for key in keys]
    assert sorted(everywhere) == sorted(PREDICTIONS), "every prediction is asked exactly once"
    for prefix, topic in LAB_TOPICS.items():
        (lab,) = [stem for stem in asked if stem.endswith("_" + topic)]
        assert len(asked[lab]) >= MINIMUM_PER_LAB, f"{lab} asks {len(asked[lab])}"
        assert all(key.startswith(prefix + ".") for key in asked[lab]), f"{lab} asks {asked[lab]}"
    every_prefix = {key.split(".")[0] for key in PREDICTIONS}
    assert every_prefix <= set(LAB_TOPICS), f"no notebook known for the labs {every_prefix - set(LAB_TOPICS)}"
    assert sorted(stem.split("_")[0] for stem in asked) == sorted(LAB_TOPICS), \
        "every lab asks its own"


@pytest.mark.parametrize("key", list(ANSWERS))
def test_the_answer_is_what_the_lab_s_next_cells_really_show(key):
    path, index = next((path, index) for path in labs() for index, asked in asked_in(path) if asked == key)
    cells = nbformat.read(str(path), as_version=4).cells
    own = cells[index]
    assert text_of(own) == predict(key).text(), "the stored output is the question, unanswered"
    following = [cell for cell in cells[index + 1:index + 6] if cell.cell_type == "code"]
    following = following[:next((i for i, cell in enumerate(following) if ASK.search(cell.source)), len(following))]
    shown = ANSWERS[key][2]("\n".join(text_of(cell) for cell in following[:3]))
    assert shown is True or normalise(shown) == normalise(ANSWERS[key][0]), f"{key}: the lab shows {shown!r}"


def test_the_chinese_labs_ask_the_same_predictions_in_chinese():
    for path in labs():
        keys = [key for _, key in asked_in(path)]
        if not keys:
            continue
        chinese = LABS / "zh-CN" / path.name
        cells = nbformat.read(str(chinese), as_version=4).cells
        built = [(index, key) for index, cell in enumerate(cells) if cell.cell_type == "code"
                 for key in ASK.findall(cell.source)]
        assert [key for _, key in built] == keys
        for index, _key in built:
            assert text_of(cells[index]).startswith("预测：")
