"""The code blocks of a documentation page, for the tests that run a tutorial."""

from __future__ import annotations

import re


def code_blocks(path: str) -> list[tuple[str, str]]:
    """``(kind, body)`` of every fenced ``python`` or ``console`` block of the Markdown page
    ``path``, in order."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return re.findall(r"```(python|console)\n(.*?)```", text, flags=re.S)
