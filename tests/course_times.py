"""The time estimates the chapters and exercises state, in minutes.

A chapter says "**Time.** About forty-five minutes to read, an hour and a half
with the experiments"; an exercise says "About 45 minutes". The landing page's
path through the course repeats them, and a test keeps the two in step.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

WORDS = {"thirty minutes": 30, "thirty-five minutes": 35, "forty minutes": 40, "forty-five minutes": 45, "fifty minutes": 50, "fifty-five minutes": 55, "an hour": 60,
         "an hour and a quarter": 75, "an hour and a half": 90, "ninety minutes": 90, "two hours": 120}


def minutes(phrase: str) -> int:
    """Minutes of "forty-five minutes", "an hour and a half", "45 minutes"."""
    phrase = " ".join(phrase.lower().replace("about ", "").split())
    if m := re.fullmatch(r"(\d+) minutes", phrase):
        return int(m.group(1))
    if phrase not in WORDS:
        raise ValueError(f"no duration in {phrase!r}")
    return WORDS[phrase]


def _markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def chapter_times(path: Path) -> tuple[int, int]:
    """(reading, with the experiments) in minutes, from the chapter's **Time.** line."""
    line = re.search(r"\*\*Time\.\*\*\s*(.*?)(?:\.|\n\n)", _markdown(path), re.S)
    if not line:
        raise ValueError(f"{path}: no **Time.** line")
    m = re.fullmatch(r"About (.+?) to read[;,] (?:about )?(.+?) with the experiments", " ".join(line.group(1).split()))
    if not m:
        raise ValueError(f"{path}: the **Time.** line must read 'About X to read, Y with the experiments'")
    return minutes(m.group(1)), minutes(m.group(2))


def exercise_time(path: Path) -> int:
    """Minutes from the exercise's first cell ("About 45 minutes.")."""
    first = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    m = re.search(r"About ([^.]+?)\.", "".join(first["source"]))
    if not m:
        raise ValueError(f"{path}: no 'About N minutes.' in the first cell")
    return minutes(m.group(1))


def fmt(total: int) -> str:
    """45 -> '45 min', 90 -> '1 h 30', 60 -> '1 h'."""
    hours, rest = divmod(total, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest:02d}" if rest else "")
