"""What a verdict means against its model's expectation: one category per matrix cell.

The protocol x property matrix colours and groups cells by *expectation*, not by
verdict: a ``violated`` is good news in a mutant that must break the property, neutral
in a model that does not promise it, and bad news where the model expects it to hold.
:func:`category` sorts a cell into one of :data:`CATEGORIES`; the console table
(:mod:`ordercheck.checker.review.matrix`) and the HTML report (:mod:`ordercheck.reports.view`) both read the
same words from here, so every artifact says the same thing.

A model is a *mutant* (:func:`mutant_steps`) when it switches off a step of its spec's
algorithm (an ablation constant set to ``false``) or asks for one of the spec's
deliberately broken variants (a constant named ``mutant`` set away from its default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ordercheck.checker.api.result import verdict_word
from ordercheck.checker.api.spec import Spec

LIBRARY_ORDER = (
    "fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "synchronous",
    "eventual_delivery",
)
"""The library's ordering properties, in the order a matrix shows them."""


def property_order(names: list[str]) -> list[str]:
    """``names`` as a matrix orders its columns: the library properties first, in
    :data:`LIBRARY_ORDER`, then the others in the order given."""
    return [p for p in LIBRARY_ORDER if p in names] + [p for p in names if p not in LIBRARY_ORDER]


@dataclass(frozen=True)
class Category:
    """One kind of matrix cell: ``name`` (also its CSS class and JSON value), the
    console's ``word`` for it (``None``: the verdict word itself, see :func:`console_word`),
    the HTML ``glyph`` (``None``: the verdict's glyph) and the ``legend`` line."""

    name: str
    word: str | None
    glyph: str | None
    legend: str


CATEGORIES: tuple[Category, ...] = (
    Category("held", "holds", "✓", "held, as expected: a guarantee the model promises"),
    Category("broke", "broke", "✗", "violated, as expected: a mutant (a step switched off, a broken variant) breaks it"),
    Category("not_promised", "n/p", "✗",
             "violated, as expected: not promised (the model expects it violated; not a mutant)"),
    Category("reached", "reached", "◉", "witness (sometimes) reached, as expected"),
    Category("unreached", "unreached", "○", "witness (sometimes) never reached, as expected"),
    Category("unexpected", None, None, "UNEXPECTED: the verdict differs from the model's [expect]"),
    Category("unknown", "unknown?", "?", "unknown: a bound stopped the search before a verdict"),
    Category("unjudged", None, None, "no expectation: the model's [expect] does not name it"),
    Category("not_checked", "-", "·", "not checked by this model"),
)
"""Every category, in the order the legends list them."""

BY_NAME = {c.name: c for c in CATEGORIES}

GLYPHS = {"holds": "✓", "violated": "✗", "reached": "◉", "unreached": "○", "unknown": "?"}
"""The HTML glyph of each verdict word (:func:`ordercheck.checker.api.result.verdict_word`)."""


def category(kind: str | None, status: str, expected: str | None, as_expected: bool, mutant: bool) -> str:
    """The :data:`CATEGORIES` name of one verdict: ``kind`` the property's kind
    (``sometimes`` makes it a witness), ``status`` holds/violated/unknown, ``expected``
    the model's ``[expect]`` (``None`` when it names none), ``as_expected`` whether the
    verdict is what the model expects, ``mutant`` whether the model is a mutant."""
    if status == "unknown":
        return "unknown"
    if not as_expected:
        return "unexpected"
    if expected is None:
        return "unjudged"
    if kind == "sometimes":
        return "reached" if status == "holds" else "unreached"
    if status == "holds":
        return "held"
    return "broke" if mutant else "not_promised"


def console_word(name: str, kind: str | None, status: str) -> str:
    """A cell of category ``name`` as the console table prints it: the category's word,
    or for an unexpected verdict the verdict word in capitals with ``!``
    (``VIOLATED!``, ``UNREACHED!``), and for one without expectation the verdict word
    in parentheses (``(holds)``)."""
    word = verdict_word(kind, status) or status
    if name == "unexpected":
        return word.upper() + "!"
    if name == "unjudged":
        return f"({word})"
    return BY_NAME[name].word or word


def glyph(name: str, kind: str | None, status: str) -> str:
    """The HTML glyph of a cell of category ``name`` (:data:`GLYPHS`)."""
    own = BY_NAME[name].glyph
    return own if own is not None else GLYPHS.get(verdict_word(kind, status) or status, "?")


def cell_sentence(name: str, kind: str | None, status: str, expected: str | None,
                  steps: int | None = None) -> str:
    """One cell in words, saying the verdict and what was expected (the HTML tooltip):
    ``violated (8-step counterexample); expected holds``."""
    word = verdict_word(kind, status) or status
    if steps is not None:
        what = "witness" if kind == "sometimes" else "counterexample"
        word = f"{word} ({steps}-step {what})"
    want = verdict_word(kind, expected)
    if name == "unknown":
        return f"{word}: a bound stopped the search" + (f"; expected {want}" if want else "")
    if name == "unexpected":
        return f"{word}; expected {want}" if want else f"{word}; no expectation, and only holds passes"
    if name == "unjudged":
        return f"{word}; no expectation ([expect] does not name it)"
    if name == "broke":
        return f"{word}; expected {want}: this mutant breaks it"
    if name == "not_promised":
        return f"{word}; expected {want}: the model does not promise it"
    return f"{word}; expected {want}"


def mutant_steps(spec: type[Spec], constants: dict[str, Any]) -> list[str]:
    """What makes a model of ``spec`` with ``constants`` a mutant, in words (empty for
    the algorithm itself): ``without FLAG`` for each ablation constant set to false,
    ``mutant = VALUE`` for a constant named ``mutant`` away from its default."""
    out = [f"without {flag}" for flag in spec.ablations() if constants.get(flag) is False]
    for c in spec.constants:
        if c.name == "mutant" and constants.get("mutant", c.default) != c.default:
            out.append(f"mutant = {constants['mutant']}")
    return out
