"""The course's own map and clock: Lab 00's map and the README's learning path are one map.

Both list every lab in ``labs/`` with the same time, and the sentence under each table ("About N hours in
all") is their sum, rounded to the nearest hour. The times themselves come from a measured read (the
README says how); this test keeps the two places from drifting apart when a lab is added or re-timed."""

from __future__ import annotations

import json
import re

from conftest import ROOT

ROW = re.compile(r"^\|\s*(?:\*\*|`)?(\d\d)[ _][^|]*\|[^|]*\|\s*(\d+) min\s*\|", re.MULTILINE)
TOTAL = re.compile(r"About ([\w-]+) hours in all")
WORDS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
         "twenty-one": 21, "twenty-two": 22, "twenty-three": 23, "twenty-four": 24, "twenty-five": 25}


def times(text: str) -> dict[str, int]:
    return {lab: int(minutes) for lab, minutes in ROW.findall(text)}


def lab_00_map() -> str:
    cells = json.loads((ROOT / "labs" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if "## The map" in "".join(c["source"]))


def readme_path() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text[text.index("## The learning path"):][:12000]


def test_lab_00s_map_and_the_readmes_learning_path_list_every_lab_with_the_same_time():
    labs = sorted(path.name[:2] for path in (ROOT / "labs").glob("[0-9][0-9]_*.ipynb"))
    in_map, in_readme = times(lab_00_map()), times(readme_path())
    assert sorted(in_map) == labs, "Lab 00's map lists every lab, once"
    assert sorted(in_readme) == labs, "the README's learning path lists every lab, once"
    assert in_map == in_readme, {lab: (in_map[lab], in_readme[lab]) for lab in labs if in_map[lab] != in_readme[lab]}


def test_the_total_under_each_table_is_the_sum_of_its_rows():
    for name, text in (("Lab 00's map", lab_00_map()), ("the README", readme_path())):
        said = TOTAL.search(text)
        assert said, f"{name} says how long the whole course takes"
        hours = WORDS[said.group(1)]
        assert hours == round(sum(times(text).values()) / 60), f"{name}: {hours} h for {sum(times(text).values())} min"
