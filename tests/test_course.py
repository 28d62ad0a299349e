"""mcplab.course: the servers and labs are found in a clone, and the student's copy keeps the student's work.

The copy is checked against a small fake course (monkeypatched ``root``), one behaviour per test,
and once against the real course, which must arrive whole."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mcplab import course

ROOT = Path(__file__).resolve().parent.parent


def test_a_clone_finds_its_own_servers_and_labs():
    assert course.is_checkout()
    assert course.servers_dir() == ROOT / "servers"
    assert course.labs_dir() == ROOT / "labs"
    argv = course.server_command("weather", "--era", "modern")
    assert argv[1:] == [str(ROOT / "servers" / "weather.py"), "--era", "modern"]


def test_an_unknown_bundled_server_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown bundled server 'wether'; expected one of weather, files"):
        course.server_command("wether")


def test_an_installed_wheel_course_wins_over_the_folder_above_the_package(tmp_path, monkeypatch):
    wheel = tmp_path / "_course"
    (wheel / "servers").mkdir(parents=True)
    (wheel / "servers" / "weather.py").write_text("# the wheel's copy\n")
    monkeypatch.setattr(course, "WHEEL_COURSE", wheel)
    assert course.root() == wheel and not course.is_checkout()
    assert course.server_command("weather")[1] == str(wheel / "servers" / "weather.py")


def test_a_missing_course_says_how_to_repair_it(tmp_path, monkeypatch):
    monkeypatch.setattr(course, "WHEEL_COURSE", tmp_path / "_course")
    monkeypatch.setattr(course, "CHECKOUT", tmp_path)
    with pytest.raises(course.CourseMissing, match="the bundled servers are missing .*reinstall mcplab"):
        course.server_command("weather")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A small course: two servers, a sample, two labs, and the litter running it leaves behind."""
    source = tmp_path / "source"
    files = {"servers/weather.py": "print('weather')\n", "servers/samples/notes.md": "# notes\n",
             "labs/00_start_here.ipynb": '{"cells": []}\n', "labs/solutions/01_s.ipynb": '{"cells": [1]}\n',
             "labs/nbval-sanitize.cfg": "[a]\n"}
    litter = ["servers/__pycache__/weather.cpython-311.pyc", "labs/.ipynb_checkpoints/00-checkpoint.ipynb",
              "servers/stray.pyc"]
    for name, text in {**files, **{name: "x" for name in litter}}.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
        (source / name).chmod(0o444)  # as in a root-owned site-packages
    monkeypatch.setattr(course, "root", lambda: source)
    return source, tmp_path / "copy", files


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_first_run_copies_the_whole_course_and_nothing_else(fake):
    source, dest, files = fake
    report = course.copy_course(dest)
    assert sorted(report.added) == sorted(files)
    assert {k: v.decode() for k, v in _tree(dest).items() if k != course.MANIFEST} == files
    assert not report.updated and not report.kept and report.unchanged == 0
    assert report.text() == f"mcplab: copied the course into {dest} ({len(files)} files)"
    for name in files:
        assert stat.S_IMODE((dest / name).stat().st_mode) & stat.S_IWUSR, f"{name} is not writable"


def test_a_second_run_keeps_an_edited_notebook_and_says_so(fake):
    source, dest, files = fake
    course.copy_course(dest)
    edited = dest / "labs" / "00_start_here.ipynb"
    edited.write_text('{"cells": ["my answer"]}\n')
    report = course.copy_course(dest)
    assert edited.read_text() == '{"cells": ["my answer"]}\n'
    assert report.kept == ("labs/00_start_here.ipynb",) and not report.added and not report.updated
    assert report.unchanged == len(files) - 1
    assert "kept your changes to 1 file (delete or rename one" in report.text()
    assert "labs/00_start_here.ipynb" in report.text()


@pytest.mark.parametrize(("student_edits", "expected"), [(False, "updated"), (True, "kept")])
def test_a_course_change_reaches_only_files_the_student_left_alone(fake, student_edits, expected):
    source, dest, files = fake
    course.copy_course(dest)
    lab = "labs/solutions/01_s.ipynb"
    if student_edits:
        (dest / lab).write_text("mine\n")
    (source / lab).chmod(0o644)
    (source / lab).write_text('{"cells": [2]}\n')
    report = course.copy_course(dest)
    assert getattr(report, expected) == (lab,)
    assert (dest / lab).read_text() == ("mine\n" if student_edits else '{"cells": [2]}\n')


def test_a_deleted_file_comes_back_fresh(fake):
    source, dest, files = fake
    course.copy_course(dest)
    (dest / "servers" / "weather.py").unlink()
    report = course.copy_course(dest)
    assert report.added == ("servers/weather.py",)
    assert (dest / "servers" / "weather.py").read_text() == files["servers/weather.py"]


@pytest.mark.parametrize("manifest", ["{not json", '{"files": ' + "[" * 100_000 + "]" * 100_000 + "}"],
                         ids=["not JSON", "nested 100,000 deep"])
def test_without_a_manifest_no_differing_file_is_overwritten(fake, manifest):
    source, dest, files = fake
    (dest / "labs").mkdir(parents=True)
    (dest / "labs" / "00_start_here.ipynb").write_text("someone else's file\n")
    (dest / course.MANIFEST).write_text(manifest)
    report = course.copy_course(dest)
    assert report.kept == ("labs/00_start_here.ipynb",)
    assert (dest / "labs" / "00_start_here.ipynb").read_text() == "someone else's file\n"
    assert json.loads((dest / course.MANIFEST).read_text())["files"]["servers/weather.py"]


def test_a_folder_where_a_file_belongs_is_left_alone(fake):
    source, dest, files = fake
    (dest / "servers" / "weather.py").mkdir(parents=True)
    report = course.copy_course(dest)
    assert "servers/weather.py" in report.kept and (dest / "servers" / "weather.py").is_dir()


def test_no_temporary_file_is_left_behind(fake):
    source, dest, files = fake
    course.copy_course(dest)
    course.copy_course(dest)
    assert not [p for p in dest.rglob("*.part")]


@pytest.mark.parametrize("inside", [".", "labs", "servers/samples"])
def test_the_copy_is_never_written_into_the_course_itself(fake, inside):
    source, dest, files = fake
    before = _tree(source)
    with pytest.raises(ValueError, match="expected a folder of your own for the course, outside"):
        course.copy_course(source / inside)
    assert _tree(source) == before


def test_a_folder_that_holds_the_course_is_refused(fake):
    source, dest, files = fake
    with pytest.raises(ValueError, match="expected a folder of your own"):
        course.copy_course(source.parent)


def test_the_real_course_arrives_whole_and_runs_from_the_copy(tmp_path):
    report = course.copy_course(tmp_path / "course")
    expected = {p.relative_to(ROOT).as_posix() for folder in ("servers", "labs")
                for p in (ROOT / folder).rglob("*") if p.is_file()
                and not {"__pycache__", ".ipynb_checkpoints"} & set(p.parts) and p.suffix != ".pyc"}
    assert set(report.added) == expected
    assert "servers/samples/notes.md" in expected and "labs/solutions/01_jsonrpc_solutions.ipynb" in expected
    # the notebooks start servers as ../servers/NAME.py: the copy keeps the two folders side by side
    assert (tmp_path / "course" / "labs" / os.pardir / "servers" / "weather.py").is_file()


# --- links, leftovers and other things in the way -------------------------------------------------------

WALKS = [True, False]  # by directory descriptors, and by checked paths (what a platform without dir_fd gets)


@pytest.fixture(params=WALKS, ids=["dir_fd", "paths"])
def walk(request, monkeypatch):
    monkeypatch.setattr(course, "DIR_FD", request.param and course.DIR_FD)


def test_a_link_where_a_course_folder_or_file_belongs_is_left_alone_and_named(fake, walk, tmp_path):
    source, dest, files = fake
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "labs").mkdir(parents=True)
    (dest / "servers").symlink_to(outside)
    (dest / "labs" / "00_start_here.ipynb").symlink_to("mine.ipynb")  # a link inside the copy is the user's too
    report = course.copy_course(dest)
    assert list(outside.iterdir()) == []
    assert os.readlink(dest / "servers") == str(outside)
    assert os.readlink(dest / "labs" / "00_start_here.ipynb") == "mine.ipynb" and not (dest / "labs" / "mine.ipynb").exists()
    assert report.linked == (("servers", str(outside)), ("labs/00_start_here.ipynb", "mine.ipynb"))
    assert sorted(report.added) == ["labs/nbval-sanitize.cfg", "labs/solutions/01_s.ipynb"]
    assert ("mcplab: left 2 links in your copy alone, as the course is never copied through a link (remove one "
            f"and run again for the course's copy): servers → {outside}, labs/00_start_here.ipynb → mine.ipynb"
            ) in report.text()
    (dest / "servers").unlink()
    assert sorted(course.copy_course(dest).added) == ["servers/samples/notes.md", "servers/weather.py"]


def test_a_fifo_where_a_course_file_belongs_is_kept_without_waiting_on_it(fake, walk):
    source, dest, files = fake
    (dest / "servers").mkdir(parents=True)
    os.mkfifo(dest / "servers" / "weather.py")  # opened for reading without O_NONBLOCK, it would wait for a writer
    report = course.copy_course(dest)
    assert "servers/weather.py" in report.kept and stat.S_ISFIFO((dest / "servers" / "weather.py").lstat().st_mode)


def test_a_rerun_removes_only_the_temporary_files_a_killed_copy_left(fake, walk):
    source, dest, files = fake
    course.copy_course(dest)
    labs = dest / "labs"
    ours = [labs / ".00_start_here.ipynb.k2j9x_0q.part", dest / f".{course.MANIFEST}.0a1b2c3d.part"]
    theirs = [labs / ".my_notes.md.k2j9x_0q.part",        # beside no course file
              labs / ".00_start_here.ipynb.mine.part",     # not the shape of our names
              labs / "00_start_here.ipynb.k2j9x_0q.part",  # no leading dot
              labs / ".00_start_here.ipynb.0a1b2c3d.part"]  # a link (made below)
    for path in ours + theirs[:3]:
        path.write_text("half a file")
    theirs[3].symlink_to("00_start_here.ipynb")
    course.copy_course(dest)
    assert [p for p in ours if os.path.lexists(p)] == []
    assert [p for p in theirs if os.path.lexists(p)] == theirs


def test_a_leftover_of_another_user_is_not_ours_to_remove(fake, monkeypatch):
    source, dest, files = fake
    course.copy_course(dest)
    leftover = dest / "labs" / ".00_start_here.ipynb.k2j9x_0q.part"
    leftover.write_text("half a file")
    # as a classmate sharing the folder would run it (raising=False: Windows has no geteuid, and owner 0 for all)
    monkeypatch.setattr(os, "geteuid", lambda: leftover.stat().st_uid + 1, raising=False)
    course.copy_course(dest)
    assert leftover.read_text() == "half a file"


def test_the_copy_is_as_private_as_the_users_umask_asks(fake):
    source, dest, files = fake  # the course's own files are read-only (0444)
    old = os.umask(0o077)  # a student who keeps their files to themselves on a shared machine
    try:
        course.copy_course(dest)
    finally:
        os.umask(old)
    modes = {stat.S_IMODE((dest / name).stat().st_mode) for name in files}
    assert modes == {0o600} if os.name == "posix" else all(mode & stat.S_IWUSR for mode in modes), modes
