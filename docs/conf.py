"""Sphinx configuration for ordercheck's documentation: ``make docs`` builds it into
``build/docs`` with every warning an error (broken links and cross-references
included)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE / "_ext")]  # the checkout's packages, then our helpers

project = "ordercheck"
author = "the ordercheck authors"
copyright = "the ordercheck authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx_click",
    "ordercheck_docs",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

# Markdown: heading anchors for links such as ``exit-codes.md#check``; ``$`` stays text.
myst_heading_anchors = 4
myst_enable_extensions = ["deflist"]

# Every cross-reference must resolve. Python's own documentation is not reachable
# while building (no network), so names of the standard library are let through.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(collections\.abc|typing|numpy|click)\..*"),
    (r"py:.*", r"z3\..*"),  # Z3's Python classes have no inventory
    (r"py:class", r"(ordercheck\.)?checker\.api\.(model\.Model|result\.Step)"),
    (r"py:.*", r"(Any|Hashable|Sequence|Iterable|Iterator|Callable|Literal|ClassVar|NamedTuple)"),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "alabaster"
html_title = "ordercheck"
html_static_path: list[str] = []
html_theme_options = {"page_width": "1180px", "sidebar_width": "240px", "fixed_sidebar": True}
