"""Sphinx helpers for ordercheck's documentation (loaded by ``docs/conf.py``).

- :data:`cli`: the ``ordercheck`` command group, found through the console script that
  ``pyproject.toml`` declares, so ``docs/reference/cli.md`` documents whatever the
  installed command is, wherever its module lives.
- Cross-references by object: a reference written against one spelling of a Python
  name (``ordercheck.checker.api.reductions.PartialOrder.footprints``, or ``describe`` inside a subclass) is
  resolved to the documented spelling of the same object (``ordercheck.checker.PartialOrder.footprints``).
  A reference to a module these pages do not describe is shown unlinked if the module
  exists. A name that imports nothing stays unresolved, and the strict build fails on it.
- ``{ordercheck-builtin-specs}``: a section per built-in spec, listing its constants and
  properties as the spec classes declare them. Their texts are docstrings, so they are
  rendered as the reStructuredText they are written in; a reference in one is read in
  the module that wrote it, and one to code these pages do not describe is shown
  unlinked if that code exists.
"""

from __future__ import annotations

import importlib
import inspect
import json
import tomllib
from pathlib import Path
from typing import Any

import click
from docutils import nodes
from docutils.statemachine import StringList
from docutils.utils import new_document
from myst_parser.mocking import MockRSTParser
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

ROOT = Path(__file__).resolve().parents[2]


def _console_script(name: str = "ordercheck") -> click.Group:
    """The object behind the console script ``name`` of ``pyproject.toml``."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, attr = scripts[name].partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


cli = _console_script()


# -- cross-references by object -------------------------------------------------------


def find_object(dotted: str) -> tuple[Any, Any, str] | None:
    """Import ``dotted`` (a module, or attributes of one): ``(parent, object, last
    name)``, or ``None`` when nothing by that name exists."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        parent: Any = None
        for part in parts[cut:]:
            parent = obj
            if inspect.isclass(obj) and part in _members(obj):
                obj = _members(obj)[part]
            elif hasattr(obj, part):
                obj = getattr(obj, part)
            else:
                return None
        return parent, obj, parts[-1]
    return None


def _members(cls: type) -> dict[str, Any]:
    """Every name ``cls`` defines or inherits, dataclass fields and annotations included."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        out.update({name: None for name in getattr(klass, "__annotations__", {})})
        out.update(vars(klass))
    return out


def _identity(found: tuple[Any, Any, str]) -> tuple | None:
    """A key equal for every spelling of one object: a class member by its defining
    class and name, a module by its name, a class or function by where it was defined."""
    parent, obj, name = found
    if inspect.isclass(parent):
        for klass in parent.__mro__:
            if name in vars(klass) or name in getattr(klass, "__annotations__", {}):
                return ("member", klass.__module__, klass.__qualname__, name)
        return None
    if inspect.ismodule(obj):
        return ("module", obj.__name__)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return ("object", obj.__module__, obj.__qualname__)
    if inspect.ismodule(parent):
        return ("data", parent.__name__, name)
    return None


def _documented(env: BuildEnvironment) -> dict[tuple, str]:
    """Identity key -> the name under which the Python domain documents that object."""
    cache = getattr(env, "_ordercheck_documented", None)
    domain = env.get_domain("py")
    objects = {name for name, *_ in domain.get_objects()}
    if cache is not None and cache[0] == objects:
        return cache[1]
    table: dict[tuple, str] = {}
    for name in sorted(objects, key=len):
        found = find_object(name)
        key = _identity(found) if found else None
        if key is not None:
            table.setdefault(key, name)
    env._ordercheck_documented = (objects, table)  # type: ignore[attr-defined]
    return table


def _candidates(target: str, module: str | None, cls: str | None) -> list[str]:
    """The spellings to try for ``target`` written in ``cls`` of ``module``: the class
    (and its bases), the module, the name as written, and last the classes the module
    defines (a module docstring speaking of its class's methods)."""
    target = target.lstrip("~.")
    out = []
    if module and cls:
        out.append(f"{module}.{cls}.{target}")
    if module:
        out.append(f"{module}.{target}")
    out.append(target)
    if module and not cls:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            mod = None
        for name, value in vars(mod).items() if mod else ():
            if inspect.isclass(value) and value.__module__ == module:
                out.append(f"{module}.{name}.{target}")
    return out


def resolve_by_object(app: Sphinx, env: BuildEnvironment, node: Any, contnode: Any) -> Any:
    """``missing-reference`` handler: find the documented spelling of the same object."""
    if node.get("refdomain") != "py":
        return None
    documented = _documented(env)
    for spelling in _candidates(node["reftarget"], node.get("py:module"), node.get("py:class")):
        found = find_object(spelling)
        key = _identity(found) if found else None
        name = documented.get(key) if key else None
        if name is None:
            continue
        domain = env.get_domain("py")
        ref = node.deepcopy()
        ref["reftarget"] = name
        ref["refspecific"] = False
        resolved = domain.resolve_xref(env, node.get("refdoc", ""), app.builder, node["reftype"], name, ref, contnode)
        if resolved is None:
            resolved = domain.resolve_any_xref(env, node.get("refdoc", ""), app.builder, name, ref, contnode)
            resolved = resolved[0][1] if resolved else None
        if resolved is not None:
            return resolved
    if node["reftype"] == "mod" and find_object(node["reftarget"].lstrip("~.")) is not None:
        return contnode  # a module these pages do not describe: its name, unlinked, but it must exist
    if node.get(FROM_CODE) and any(find_object(s) for s in _candidates(node["reftarget"], node.get("py:module"), None)):
        return contnode  # a spec's docstring naming code these pages do not describe: unlinked, but it must exist
    return None


# -- the built-in specs ---------------------------------------------------------------

def _code(value: str) -> str:
    ticks = "``" if "`" in value else "`"
    return f"{ticks} {value} {ticks}" if ticks == "``" else f"`{value}`"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and not value:
        return "{}"
    return json.dumps(value)


class _Docstrings:
    """The docstring texts of the built-in specs page: each becomes a placeholder word in
    the page's Markdown and, once that is parsed, reStructuredText parsed in place of it
    (:meth:`BuiltinSpecs.run`)."""

    def __init__(self) -> None:
        self.texts: dict[str, tuple[str, str, str]] = {}

    def add(self, text: str, module: str, where: str) -> str:
        """A placeholder for ``text``, reStructuredText written in ``module`` (its
        references are read there), named ``where`` in warnings."""
        token = f"ORDERCHECKDOCSTRING{id(self)}X{len(self.texts)}X"
        self.texts[token] = (inspect.cleandoc(text), module, where)
        return token


def _constant_row(const: Any, docs: _Docstrings, module: str, where: str) -> str:
    allowed = []
    if const.choices:
        allowed.append(" or ".join(_code(json.dumps(c)) for c in const.choices))
    if const.minimum is not None or const.maximum is not None:
        low = "" if const.minimum is None else f"{const.minimum} ≤ "
        high = "" if const.maximum is None else f" ≤ {const.maximum}"
        allowed.append(f"{low}n{high}")
    kind = {int: "integer", bool: "boolean", str: "string", list: "array", dict: "table"}.get(const.kind, const.kind.__name__)
    meaning = inspect.cleandoc(const.doc)
    if const.ablation:
        meaning += " (ablation flag: ``false`` makes a mutant)"
    token = docs.add(meaning, module, f"{where}, constant {const.name}")
    return f"| `{const.name}` | {kind} | {_code(_toml(const.default))} | {'; '.join(allowed)} | {token} |"


def builtin_specs_markdown(docs: _Docstrings | None = None) -> str:
    """A section per built-in spec: its summary, constants and properties. The texts
    the code writes (summaries, constants' and properties' docs) are placeholders
    recorded in ``docs``; :meth:`BuiltinSpecs.run` parses them as the
    reStructuredText they are."""
    docs = _Docstrings() if docs is None else docs
    registry = importlib.import_module("ordercheck.checker.loading.registry")
    out: list[str] = []
    for name in registry.spec_names():
        cls = registry.spec_class(name)
        where = f"{cls.__module__}.{cls.__qualname__}"
        out += [f"## `{name}`", "", docs.add(cls.summary, cls.__module__, f"{where}.summary"), ""]
        if cls.tolerates or cls.breaks_under:
            faults = [f"{label} {', '.join(sorted(kinds))}" for label, kinds in
                      (("tolerates", cls.tolerates), ("breaks under", cls.breaks_under)) if kinds]
            out += [f"Channel faults a model may ask for: {'; '.join(faults)}.", ""]
        out += ["| constant | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        out += [_constant_row(c, docs, cls.__module__, where) for c in cls.constants]
        out.append("")
        props = cls().properties()
        out += ["| property | kind | meaning |", "|---|---|---|"]
        out += [f"| `{p.name}` | {p.kind} | "
                f"{docs.add(p.doc, getattr(p.check, '__module__', None) or cls.__module__, f'{where}, property {p.name}')} |"
                for p in props]
        out.append("")
    return "\n".join(out)


#: Set on a cross-reference written in a spec's docstring shown on the built-in specs
#: page: an object that exists but that these pages do not describe is shown unlinked.
FROM_CODE = "ordercheck_from_code"


def _file_of(module: str) -> str:
    try:
        return inspect.getsourcefile(importlib.import_module(module)) or module
    except (ImportError, TypeError):
        return module


def rst_nodes(directive: SphinxDirective, text: str, module: str, where: str) -> list[nodes.Node]:
    """``text`` parsed as reStructuredText (a docstring, written in ``module``) into the
    nodes of ``directive``'s document. Its Python references are read in ``module``, and
    a reference that resolves to nothing is reported as in ``where``'s docstring."""
    document = new_document(f"{where} (docstring)", directive.state.document.settings)
    document.reporter = directive.state.document.reporter
    MockRSTParser().parse(text, document)
    for ref in document.findall(addnodes.pending_xref):
        if ref.get("refdomain") == "py":
            ref["py:module"] = module
            ref[FROM_CODE] = True
        ref.source, ref.line = f"{_file_of(module)}:docstring of {where}", ref.line or 1  # as autodoc names it
    return list(document.children)


class BuiltinSpecs(SphinxDirective):
    """``{ordercheck-builtin-specs}``: :func:`builtin_specs_markdown`, parsed in place,
    with each docstring it names rendered as reStructuredText."""

    def run(self) -> list[nodes.Node]:
        holder = nodes.section()
        holder.document = self.state.document
        docs = _Docstrings()
        text = builtin_specs_markdown(docs)
        nested_parse_with_titles(self.state, StringList(text.splitlines(), source="ordercheck-builtin-specs"), holder)
        # MyST attaches the sections it parses to the document itself, not to ``holder``.
        placed = set()
        for node in list(self.state.document.findall(nodes.Text)):
            token = node.astext()
            if token not in docs.texts:
                continue
            paragraph = node.parent
            if not isinstance(paragraph, nodes.paragraph) or paragraph.astext() != token:
                raise self.error(f"{docs.texts[token][2]}: its placeholder is not a paragraph of its own")
            paragraph.replace_self(rst_nodes(self, *docs.texts[token]))
            placed.add(token)
        if missing := set(docs.texts) - placed:
            raise self.error(f"docstrings not placed on the page: {sorted(docs.texts[t][2] for t in missing)}")
        return holder.children


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("missing-reference", resolve_by_object)
    app.add_directive("ordercheck-builtin-specs", BuiltinSpecs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
