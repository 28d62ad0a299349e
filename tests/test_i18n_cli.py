"""The command line in Chinese: the language chosen once (--lang, MCPLAB_LANG, the locale) and every
subcommand's help and argparse's own words taken from the catalog.

Each check runs the real ``mcplab`` in a subprocess with a clean language environment, as a student's
shell would start it: ``LANG=zh_CN.UTF-8`` and nothing else is the Chinese locale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from mcplab import i18n
from mcplab.i18n import commandline

CJK = re.compile(r"[\u3400-\u9fff]")
# Three English words in a row (letters only, each two or more), outside what a help must keep:
# flags (--era), metavars and choices ({auto,legacy}), paths, URLs and $VARIABLES are removed first.
WORDS = re.compile(r"\b[A-Za-z][a-z]+(?:[ ,;:]+[A-Za-z][a-z]+){2,}\b")
KEPT = (re.compile(r"https?://\S+"), re.compile(r"\{[^{}]*\}"), re.compile(r"\[[^\[\]]*\]"),
        re.compile(r"\S*[/.$_=<>'\"]\S*"), re.compile(r"--?[\w-]+"))
# Names that are two or three words and stay as they are (a product, a transport, the protocol's name).
NAMES = ("Streamable HTTP", "Model Context Protocol", "JupyterLite", "JupyterLab", "Pyodide")
SUBCOMMANDS = ("setup", "lab", "serve", "inspect", "call", "demo", "grade", "i18n", "config", "schemas", "site")
LANGUAGE_VARIABLES = (i18n.ENV, i18n.START_ENV, *i18n.LOCALE_ENV, "LANGUAGE")


def english_left(text: str) -> list[str]:
    for name in NAMES:
        text = text.replace(name, " ")
    for pattern in KEPT:
        text = pattern.sub(" ", text)
    return WORDS.findall(text)


def mcplab(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in LANGUAGE_VARIABLES}
    return subprocess.run([sys.executable, "-m", "mcplab", *args], capture_output=True, text=True, timeout=60,
                          env={**clean, **env})


@pytest.mark.parametrize("env, expected", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),            # LC_ALL wins, as in POSIX
    ({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}, "zh"),             # an empty variable is not set
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"MCPLAB_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),      # the variable beats the locale
    ({"MCPLAB_LANG": "zh", "LC_ALL": "C.UTF-8"}, "zh"),
])
def test_the_language_is_mcplab_lang_else_the_locale_in_posix_order(monkeypatch, env, expected):
    for name in (i18n.ENV, *i18n.LOCALE_ENV):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert i18n.language() == expected


@pytest.mark.parametrize("argv, expected", [
    (["inspect", "--server", "weather", "--lang", "zh"], "zh"),
    (["--lang=zh", "demo"], "zh"),
    (["lab", "--lang", "en", "--", "--lang", "zh"], "en"),      # after -- it belongs to another program
    (["i18n", "update", "--lang", "zh"], None),                 # the catalog's language, not the command's
    (["demo"], None),
])
def test_lang_is_found_before_the_parser_is_built(argv, expected):
    assert commandline.chosen(argv) == expected


@pytest.mark.parametrize("command", ["", *SUBCOMMANDS])
def test_every_subcommand_s_help_speaks_chinese_under_the_chinese_locale(command):
    done = mcplab(*([command] if command else []), "--help", LANG="zh_CN.UTF-8")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("用法：mcplab") and CJK.search(done.stdout.split("\n\n", 1)[1])
    assert "显示这条帮助信息并退出" in done.stdout and "\n选项" in done.stdout
    assert english_left(done.stdout) == [], done.stdout


def test_the_english_help_is_the_source_under_any_other_locale():
    done = mcplab("inspect", "--help", LANG="en_US.UTF-8")
    assert done.stdout.startswith("usage: mcplab inspect")
    assert "show this help message and exit" in done.stdout and "connect to a server" in done.stdout
    assert english_left(done.stdout)  # the detector sees English where there is English


@pytest.mark.parametrize("args, chinese", [
    (["config", "nowhere"], "参数 host：无效的选择：'nowhere'"),
    (["inspect"], "参数 --stdio --url --server 中必须给出一个"),
    (["grade"], "缺少以下必需参数：kind, PATH"),
    (["demo", "--step", "two"], "参数 --step：无效的 int 值：'two'"),
    (["call", "--server", "weather", "tools/list", "{}", "surplus"], "无法识别的参数：surplus"),
])
def test_argparse_s_own_errors_speak_chinese_with_exit_status_2(args, chinese):
    done = mcplab(*args, LANG="zh_CN.UTF-8")
    assert done.returncode == 2
    assert "mcplab" in done.stderr and "：错误：" in done.stderr and chinese in done.stderr, done.stderr
    assert "error:" not in done.stderr and "usage:" not in done.stderr


def test_lang_and_mcplab_lang_beat_the_locale_and_lang_reaches_every_subcommand():
    assert mcplab("--lang", "en", "schemas", "--help", LANG="zh_CN.UTF-8").stdout.startswith("usage: ")
    assert mcplab("schemas", "--help", LANG="zh_CN.UTF-8", MCPLAB_LANG="en").stdout.startswith("usage: ")
    assert mcplab("schemas", "--lang", "zh", "--help", LANG="C.UTF-8").stdout.startswith("用法：")
    assert mcplab("config", "--lang", "zh", "--help").stdout.startswith("用法：")


def test_an_unknown_lang_is_refused_by_name():
    done = mcplab("demo", "--lang", "fr")
    assert done.returncode == 1 and "unknown language 'fr'; expected one of en, zh" in done.stderr


def test_a_call_s_own_messages_speak_chinese():
    done = mcplab("call", "--server", "weather", "tools/list", "[1]", LANG="zh_CN.UTF-8")
    assert done.returncode == 1
    assert done.stderr.strip() == "mcplab：JSON-PARAMS 必须是一个 JSON 对象，例如 '{\"name\": \"get_weather\"}'"


def test_inspect_labels_its_view_in_chinese_and_keeps_the_columns():
    done = mcplab("inspect", "--server", "weather", "--era", "legacy", "--no-trace", LANG="zh_CN.UTF-8")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("服务端        weather ")           # 服务端 is six columns wide, padded to 14
    assert any(line.startswith("代            legacy") for line in lines)
    assert "\n工具（2 个）\n" in done.stdout and "名称" in done.stdout


# --- python -m mcplab from a Python without mcplab's dependencies ---------------------------------------

def test_python_m_mcplab_without_its_dependencies_says_what_to_run_in_one_sentence():
    from conftest import ROOT

    clean = {k: v for k, v in os.environ.items() if k not in LANGUAGE_VARIABLES}
    # -S: no site-packages, so anyio is missing as from the system Python; -m finds mcplab in the checkout.
    for env, said in (({"LANG": "C.UTF-8"}, "does not have mcplab's dependencies (anyio is missing)"),
                      ({"LANG": "zh_CN.UTF-8"}, "里没有 mcplab 的依赖（缺少 anyio）")):
        done = subprocess.run([sys.executable, "-S", "-m", "mcplab", "demo", "--step", "1"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, env={**clean, **env})
        assert done.returncode == 1 and done.stdout == ""
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert said in done.stderr and "mcplab demo --step 1" in done.stderr


def test_the_sentence_names_the_environment_s_mcplab_or_the_set_up_when_there_is_none(tmp_path, monkeypatch):
    import mcplab.__main__ as entry

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(entry, "CHECKOUT", tmp_path)
    said = entry.missing_dependency("anyio", ["demo", "--step", "1"])
    assert "set them up first with python3 -m mcplab setup --no-lab, then run .venv/bin/mcplab demo --step 1." in said
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "mcplab").write_text("")
    said = entry.missing_dependency("anyio", ["call", "--server", "weather", "tools/call", '{"name": "x"}'])
    assert ("run .venv/bin/mcplab call --server weather tools/call '{\"name\": \"x\"}', or activate it first "
            "(source .venv/bin/activate)") in said


def test_a_missing_module_of_mcplab_itself_is_not_taken_for_a_missing_dependency(monkeypatch):
    import mcplab.__main__ as entry

    def broken(argv):
        raise ModuleNotFoundError("No module named 'mcplab.nothing'", name="mcplab.nothing")

    monkeypatch.setattr(entry, "main", broken)
    with pytest.raises(ModuleNotFoundError):
        entry.run(["demo"])


# --- the subcommands' own sentences ---------------------------------------------------------------------

def test_config_speaks_chinese_under_the_chinese_locale(tmp_path):
    done = mcplab("config", "generic", "weather", LANG="zh_CN.UTF-8")
    assert done.returncode == 0 and '"weather"' in done.stdout
    assert done.stderr.strip() == "# generic 从这里读取：宿主自己的文件，例如 .mcp.json（Claude Code）或 .cursor/mcp.json（Cursor）"
    refused = mcplab("config", "generic", "nowhere.py", LANG="zh_CN.UTF-8")
    assert refused.returncode == 2 and "mcplab config：服务端文件应是一个已存在的 .py 文件；" in refused.stderr


def test_schemas_speaks_chinese_when_it_cannot_download(tmp_path):
    # Port 9 on 127.0.0.1 (discard) refuses at once here: nothing leaves the machine.
    done = mcplab("schemas", "--cache-dir", str(tmp_path), "--base-url", "http://127.0.0.1:9", LANG="zh_CN.UTF-8")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("mcplab schemas：") and "追踪查看器的 schema 徽章不会显示" in done.stderr, done.stderr


def test_a_bundled_server_s_flags_speak_chinese_under_the_chinese_locale():
    from conftest import ROOT

    clean = {k: v for k, v in os.environ.items() if k not in LANGUAGE_VARIABLES}
    done = subprocess.run([sys.executable, str(ROOT / "servers" / "weather.py"), "--help"], capture_output=True,
                          text=True, timeout=60, env={**clean, "LANG": "zh_CN.UTF-8"})
    assert done.returncode == 0 and done.stdout.startswith("用法：weather.py")
    assert "用 Streamable HTTP 提供服务，而不是 stdio" in done.stdout and "显示这条帮助信息并退出" in done.stdout
    help_text = done.stdout.split("\n\n", 2)[2]  # after the usage and the server's own one-line description
    assert english_left(help_text) == [], help_text


def test_setup_hands_its_lang_to_the_lab_it_opens(monkeypatch):
    from mcplab import cli, install

    seen = {}
    monkeypatch.setattr(install, "main", lambda args, **kw: seen.update(args=list(args), **kw) or 0)
    monkeypatch.delenv(i18n.ENV, raising=False)
    try:
        assert cli.main(["setup", "--lang", "zh", "--no-browser"]) == 0
        assert seen == {"args": ["--lang", "zh", "--no-browser"], "extra": "lab", "open_lab": True}
        assert os.environ[i18n.ENV] == "zh"  # and everything setup starts speaks it
    finally:
        os.environ.pop(i18n.ENV, None)
    cli.main(["setup", "--no-lab"])
    assert seen["args"] == [] and seen["open_lab"] is False


def test_mcplab_lab_under_a_chinese_locale_opens_the_chinese_labs_without_lang(monkeypatch, tmp_path):
    from mcplab import cli, launch

    seen = {}
    monkeypatch.setattr(launch, "run", lambda argv, folder, code: seen.update(argv=argv, code=code) or 0)
    for name in (i18n.ENV, *i18n.LOCALE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        cli.main(["lab", "--no-browser"])
        assert os.environ[i18n.ENV] == "zh"  # chosen once, for the kernels too
    finally:
        os.environ.pop(i18n.ENV, None)
    assert "--LabApp.default_url=/lab/tree/zh-CN/00_start_here.ipynb" in seen["argv"]
    assert any(arg.startswith("--LabApp.app_settings_dir=") for arg in seen["argv"])
    assert seen["code"] == "zh", "the closing line names the Chinese Lab 00 too"
    seen.clear()
    monkeypatch.setenv("MCPLAB_LANG", "en")  # English chosen over the locale: JupyterLab as it was
    cli.main(["lab", "--no-browser"])
    assert not any("default_url" in arg or "app_settings_dir" in arg for arg in seen["argv"])


def test_the_translators_tool_reports_in_chinese_under_the_chinese_locale():
    done = mcplab("i18n", "status", LANG="zh_CN.UTF-8")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(r"\n?\d+ 个目录，\d+ 个条目：已翻译 \d+，fuzzy 0，未翻译 0\n", done.stdout), done.stdout
    assert re.fullmatch(r"\n?\d+ catalogs, \d+ entries: \d+ translated, 0 fuzzy, 0 untranslated\n",
                        mcplab("i18n", "status").stdout)
