"""Chinese plots with and without a CJK font: with one, Chinese labels and no missing glyph; without one
(hidden from matplotlib's font manager here), English labels that no box replaces, and one Chinese
sentence above the picture naming the command that installs a font on the student's system.
"""

from __future__ import annotations

import re
import warnings

import pytest

from mcplab import i18n
from mcplab.i18n import fontnote, fonts
from conftest import need

matplotlib = pytest.importorskip("matplotlib")
from matplotlib import font_manager  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from mcplab import economics  # noqa: E402
from mcplab.economics import plots  # noqa: E402

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")


@pytest.fixture
def no_cjk_font(monkeypatch):
    """matplotlib's font manager as on a machine without any CJK font, for this test only.

    findfont remembers its answers (a family not found, too) whatever the list of fonts: its memory is
    emptied on the way in and out, so no answer of this test outlives it.
    """
    kept = [entry for entry in font_manager.fontManager.ttflist if entry.name not in fonts.CJK_FONTS]
    font_manager.FontManager._findfont_cached.cache_clear()
    monkeypatch.setattr(font_manager.fontManager, "ttflist", kept)
    assert fonts.cjk_font() is None
    yield
    font_manager.FontManager._findfont_cached.cache_clear()


def charts() -> list:
    return [plots.plot_graphs(3, 4), plots.plot_costs(4), plots.plot_saving_heatmap(steps=8),
            plots.plot_break_even(), plots.plot_cumulative(10, 50, 5, revision_years=(3,)),
            plots._explorer_figure(economics.summarize(3, 4), economics.SEED_COSTS)]


def drawn_text(chart) -> str:
    """Every text matplotlib draws for the chart; a glyph missing from the fonts fails (it is a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = chart.to_matplotlib()
        FigureCanvasAgg(figure).draw()
    return "".join(t.get_text() for t in figure.findobj(matplotlib.text.Text))


def test_without_a_cjk_font_chinese_plots_keep_english_labels_and_say_which_command_installs_one(zh, no_cjk_font):
    with matplotlib.rc_context({"font.family": ["sans-serif"]}):
        for chart in charts():
            text = drawn_text(chart)
            assert text and not CJK.search(text), text
            assert fonts.missing_glyphs(text) == "", "a label would be drawn as boxes"
            assert chart.note.startswith("这台机器没有带中文字形的字体，所以图中的文字保留英文")
            assert fontnote.install_command() in chart.note and "重启内核" in chart.note
            bundle = chart._repr_mimebundle_()
            assert bundle["text/html"].startswith(f"<p>{chart.note}</p><img src=\"data:image/png;base64,")
            assert bundle["image/png"] in bundle["text/html"]
        assert "App A" in drawn_text(plots.plot_graphs(3, 4))
    assert i18n.language() == "zh"  # the English was for the plot only


def test_without_a_cjk_font_the_explorer_says_so_above_its_chinese_table(zh, no_cjk_font):
    pytest.importorskip("ipywidgets")
    with matplotlib.rc_context({"font.family": ["sans-serif"]}):
        explorer = economics.explore(3, 4)
    assert explorer.table.value.startswith("<p>这台机器没有带中文字形的字体")
    assert CJK.search(explorer.table.value.split("<pre>")[1])  # the table itself stays Chinese


def test_with_a_cjk_font_chinese_plots_draw_chinese_with_no_note(zh):
    need(fonts.cjk_font() is not None, "no CJK font for matplotlib (make test installs fonts-wqy-microhei)")
    with matplotlib.rc_context():
        for chart in charts():
            text = drawn_text(chart)
            assert CJK.search(text) and fonts.missing_glyphs(text) == ""
            assert chart.note == "" and "text/html" not in chart._repr_mimebundle_()


def test_english_plots_need_no_cjk_font_and_carry_no_note(monkeypatch, no_cjk_font):
    monkeypatch.setenv(i18n.ENV, "en")
    chart = plots.plot_graphs(3, 4)
    assert chart.note == "" and "text/html" not in chart._repr_mimebundle_()


@pytest.mark.parametrize("platform, os_release, command", [
    ("linux", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n', "sudo apt install fonts-noto-cjk"),
    ("linux", "ID=ubuntu\nID_LIKE=debian\n", "sudo apt install fonts-noto-cjk"),
    ("linux", "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", "sudo apt install fonts-noto-cjk"),
    ("linux", 'ID="fedora"\n', "sudo dnf install google-noto-sans-cjk-fonts"),
    ("linux", 'ID="rocky"\nID_LIKE="rhel centos fedora"\n', "sudo dnf install google-noto-sans-cjk-fonts"),
    ("linux", "ID=arch\n", "sudo pacman -S noto-fonts-cjk"),
    ("linux", 'ID="opensuse-tumbleweed"\nID_LIKE="opensuse suse"\n', "sudo zypper install noto-sans-sc-fonts"),
    ("linux", "ID=alpine\n", "sudo apk add font-noto-cjk"),
    ("linux", "ID=nixos\n", "your package manager's Noto Sans CJK font package"),
    ("linux", "", "your package manager's Noto Sans CJK font package"),
    ("darwin", "", "brew install --cask font-noto-sans-cjk-sc"),
    ("win32", "", "Settings → Time & language → Language & region → Add a language → 中文(简体)"),
])
def test_the_font_command_is_the_one_for_the_student_s_system(monkeypatch, platform, os_release, command):
    monkeypatch.setenv(i18n.ENV, "en")
    assert fontnote.install_command(platform, os_release) == command
