"""Sphinx configuration for gradyn's documentation (API reference and tutorials).

Build (warnings are errors, as in the tests):

    .venv/bin/python -m sphinx -W --keep-going -b html docs build/docs

The API pages document the installed ``gradyn`` package (autodoc imports it), so build after
``scripts/setup.sh``; tests/python/test_docs.py runs this build and every tutorial's code.
"""

from __future__ import annotations

import importlib

import gradyn

project = "gradyn"
author = "the gradyn developers"
copyright = "the gradyn developers"
version = release = gradyn.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "myst_parser",
    "sphinxarg.ext",  # sphinx-argparse: the command line page from gradyn.cli's parser
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Markdown: fenced code, ``$...$`` maths and "## Heading" anchors that [links](#heading) reach.
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# nanobind functions carry their signature as the first docstring line; autodoc reads it there.
autodoc_docstring_signature = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
# Annotations stay as written in the signature (the compiled module's types do not all resolve).
autodoc_typehints = "signature"
# torch.autograd.Function subclasses would otherwise show torch's own forward/backward docs, whose
# cross-references point into the PyTorch manual.
autodoc_inherit_docstrings = False



def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


# gradyn.torch and gradyn.jax import their framework, which scripts/setup.sh leaves out under
# GRADYN_SKIP_ML_BRIDGES=1: their pages are then built from mocked imports.
autodoc_mock_imports = [module for module in ("torch", "jax") if not _importable(module)]

html_theme = "alabaster"
html_title = f"gradyn {release}"
html_static_path: list[str] = []
