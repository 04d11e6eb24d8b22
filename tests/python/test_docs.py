"""The documentation: the Sphinx build passes with warnings as errors, every public name has an API
entry, and every tutorial's code runs, in order, printing what the page says it prints."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

import gradyn

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.md"))
TUTORIALS = [t for t in TUTORIALS if t.name != "index.md"]


def fences(path: Path) -> list:
    """The fenced code blocks of a Markdown page, in order: (language, code, first line, output) where
    output is the text block right after a python block (what it prints), else None."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))  # block-level tokens in order
    blocks = []
    for i, token in enumerate(tokens):
        if token.type != "fence":
            continue
        language = token.info.strip().split()[0] if token.info.strip() else ""
        if language == "python":
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            output = after.content if after is not None and after.type == "fence" and after.info.strip() == "text" \
                else None
            blocks.append((token.content, token.map[0] + 1, output))
    return blocks


def test_sphinx_build_has_no_warnings(tmp_path):
    missing = [m for m in ("sphinx", "myst_parser") if importlib.util.find_spec(m) is None]
    assert not missing, (f"the docs build needs {', '.join(missing)}: .venv/bin/python -m pip install sphinx "
                         "myst-parser (scripts/setup.sh installs them)")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
                             str(DOCS), str(tmp_path / "html")], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr and "ERROR" not in result.stderr, result.stderr
    page = (tmp_path / "html" / "api" / "gradyn.html").read_text(encoding="utf-8")
    # the compiled functions' signatures and docstrings made it in
    assert "rollout_vjp" in page and "Reverse mode of rollout" in page


def documented_names() -> set[str]:
    names = set()
    for page in (DOCS / "api").glob("*.rst"):
        text = page.read_text(encoding="utf-8")
        module = "gradyn"
        for line in text.splitlines():
            found = re.match(r"\.\. (currentmodule|automodule)::\s*(\S+)", line)
            if found:
                module = found.group(2)
                continue
            found = re.match(r"\.\. auto(function|class|exception|data)::\s*(\S+)", line)
            if found:
                name = found.group(2)
                names.add(name if name.startswith("gradyn") else f"{module}.{name}")
    return names


def test_every_public_name_has_an_api_entry():
    names = documented_names()
    pages = {p.stem for p in (DOCS / "api").glob("*.rst")}
    missing = []
    for name in gradyn.__all__:
        obj = getattr(gradyn, name)
        if isinstance(obj, type(gradyn)):  # a submodule: its own page, automodule with :members:
            if name not in pages:
                missing.append(f"gradyn.{name} (a page docs/api/{name}.rst)")
        elif f"gradyn.{name}" not in names and f"{obj.__module__}.{name}" not in names and \
                obj.__module__.rsplit(".", 1)[-1] not in pages:
            missing.append(f"gradyn.{name}")
    assert not missing, f"not in the API reference (docs/api/*.rst): {', '.join(missing)}"


def test_tutorials_are_in_the_toctree():
    index = (DOCS / "tutorials" / "index.md").read_text(encoding="utf-8")
    assert len(TUTORIALS) >= 5
    for tutorial in TUTORIALS:
        assert tutorial.stem in index, tutorial.name


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[t.stem for t in TUTORIALS])
def test_tutorial_runs_and_prints_what_it_shows(tutorial, monkeypatch):
    blocks = fences(tutorial)
    assert blocks, f"{tutorial.name} has no python code blocks"
    code = "".join(block[0] for block in blocks)
    for module in ("torch", "jax"):
        if re.search(rf"^\s*import .*\b{module}\b", code, re.M) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{tutorial.name} needs {module}")
    monkeypatch.chdir(ROOT)  # the pages load models/... from the repository's root
    namespace = {"__name__": "__tutorial__"}
    for source, line, expected in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            # blank lines first, so that a traceback gives the line numbers of the page
            exec(compile("\n" * line + source, str(tutorial), "exec"), namespace)
        if expected is not None:
            shown = [l.rstrip() for l in expected.rstrip("\n").splitlines()]
            printed = [l.rstrip() for l in out.getvalue().rstrip("\n").splitlines()]
            assert printed == shown, f"{tutorial.name}, the block at line {line} printed:\n{out.getvalue()}"
