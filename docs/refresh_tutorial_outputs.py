"""Rewrite the printed output shown in the tutorials with what their code prints now.

    .venv/bin/python docs/refresh_tutorial_outputs.py [docs/tutorials/simulate.md ...]

A tutorial shows a block's output as a ```text block right after the ```python block;
tests/python/test_docs.py runs every page and fails when the two differ. After a change that
moves the numbers on purpose, run this (all tutorials by default) and review the diff.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]


def refresh(page: Path) -> bool:
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    tokens = MarkdownIt("commonmark").parse("".join(lines))
    namespace = {"__name__": "__tutorial__"}
    replacements = []  # (first line, end line, new lines) of each text block's content
    for i, token in enumerate(tokens):
        if token.type != "fence" or token.info.strip() != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile("\n" * (token.map[0] + 1) + token.content, str(page), "exec"), namespace)
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if after is not None and after.type == "fence" and after.info.strip() == "text":
            printed = [line.rstrip() + "\n" for line in out.getvalue().rstrip("\n").splitlines()]
            replacements.append((after.map[0] + 1, after.map[1] - 1, printed))
    changed = False
    for start, end, printed in reversed(replacements):
        if lines[start:end] != printed:
            lines[start:end] = printed
            changed = True
    if changed:
        page.write_text("".join(lines), encoding="utf-8")
    return changed


def main() -> None:
    os.chdir(ROOT)  # the tutorials load models/... from the repository's root
    pages = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "docs" / "tutorials").glob("*.md"))
    for page in pages:
        print(f"{page}: {'rewritten' if refresh(page) else 'unchanged'}")


if __name__ == "__main__":
    main()
