"""The report card (mcplab.grade.report): a failed line says expected, got and where to look; a skipped
line never fails a card; the verdict counts failures; the text is the same on every machine."""

from __future__ import annotations

import pytest

from mcplab.grade.report import FAIL, PASS, SKIP, Report, failed, late, passed, skipped, spec


def card(*lines) -> Report:
    return Report("server my_server.py", tuple(lines))


def test_a_card_with_only_passes_and_skips_passes() -> None:
    report = card(passed("a", "does a", "2025-11-25"), skipped("b", "does b", "nothing to check"))
    assert report.ok and report.exit_code == 0 and report.failed == []
    assert report.text() == ("Report card · server my_server.py\n"
                             "  ✓ does a (2025-11-25)\n"
                             "  – does b (not checked: nothing to check)\n"
                             "PASS: no line failed (2 checks)")


def test_a_failed_line_shows_expected_got_and_every_place_to_look() -> None:
    line = failed("eof", "exits at end of file", "status 0", "status 1", spec("2025-11-25", "basic/lifecycle"),
                  "Lab 09 §7")
    report = card(passed("a", "does a"), line)
    assert not report.ok and report.exit_code == 1 and report.failed == [line]
    assert report.text().splitlines()[2:] == [
        "  ✗ exits at end of file",
        "      expected  status 0",
        "      got       status 1",
        "      look at   https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle",
        "                Lab 09 §7",
        "FAIL: 1 of 2 checks failed",
    ]
    assert repr(report) == str(report) == report.text()


def test_lines_are_found_by_their_stable_name() -> None:
    report = card(passed("a", "does a"), skipped("b", "does b", "why"))
    assert report.line("b").status == SKIP and report.line("a").status == PASS
    with pytest.raises(KeyError, match="no check 'c' on this card; it has a, b"):
        report.line("c")


def test_marks_are_the_three_statuses() -> None:
    assert [line.mark for line in (passed("a", "t"), failed("b", "t", "e", "g"), skipped("c", "t", "w"))] == \
        ["✓", "✗", "–"]
    assert failed("b", "t", "e", "g").status == FAIL


def test_a_check_not_judged_in_time_is_a_skip_and_the_card_says_why_above_its_verdict() -> None:
    report = Report("server my_server.py", (passed("a", "does a"), late("b", "does b", "the card's 12 s ran out")),
                    remarks=("1 check was not judged in time.",))
    assert report.ok and report.line("b").status == SKIP
    assert report.text().splitlines()[1:] == ["  ✓ does a",
                                              "  – does b (not judged in time: the card's 12 s ran out)",
                                              "1 check was not judged in time.",
                                              "PASS: no line failed (2 checks, 1 not judged in time)"]
    assert report.late == [report.line("b")] and report.line("b").late and not report.line("a").late


def test_the_verdict_counts_lines_not_judged_in_time_apart_from_failures_and_other_skips() -> None:
    report = card(failed("a", "does a", "e", "g"), late("b", "does b", "the server did not answer in time"),
                  skipped("c", "does c", "no prompts"))
    assert not report.ok and [line.check for line in report.late] == ["b"] and not report.line("c").late
    assert report.text().splitlines()[-1] == "FAIL: 1 of 3 checks failed, 1 not judged in time"
    assert card(passed("a", "does a"), skipped("c", "does c", "no prompts")).text().splitlines()[-1] == \
        "PASS: no line failed (2 checks)"  # no deadline fired: the verdict of every stored card


@pytest.mark.parametrize("lang, legacy, modern", [("en", "legacy: ", "modern: "), ("zh", "旧版：", "新版：")])
def test_a_card_line_names_its_era_in_the_card_s_language(monkeypatch, lang, legacy, modern) -> None:
    from mcplab.grade.probe import Session
    from mcplab.grade.server_checks import _first_failure

    monkeypatch.setenv("MCPLAB_LANG", lang)
    why = "tools/call add {} → -32603"
    assert _first_failure([(Session("legacy", "2025-11-25"), None, why)]) == legacy + why
    assert _first_failure([(Session("modern", "2026-07-28"), None, why)]) == modern + why
