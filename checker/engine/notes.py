"""Warnings about reductions: each names the guide, and a run prints each once.

A reduction the model asks for (symmetry, partial-order reduction) that does not apply
leaves a note in every result it concerns. Those notes say what is missing in the spec
and name :data:`REDUCTIONS_GUIDE`, which says what to declare; the command line prints
each distinct note once per run (under the first model it concerns), not once per model.
"""

from __future__ import annotations

REDUCTIONS_GUIDE = "docs/howto/reductions.md"

_PREFIXES = ("symmetry:", "partial-order reduction:", "the Spark engine does not apply")


def is_reduction_note(text: str) -> bool:
    """Whether ``text`` is a note about a reduction not (fully) applied."""
    return text.startswith(_PREFIXES)


def with_guide(text: str) -> str:
    """``text`` naming :data:`REDUCTIONS_GUIDE` when it says a reduction was not applied."""
    if ("not applied" in text or "symmetry only" in text) and REDUCTIONS_GUIDE not in text:
        return f"{text} (to make it apply: {REDUCTIONS_GUIDE})"
    return text


def first_time(text: str, seen: set[str] | None) -> bool:
    """Whether a warning is to be printed now: always, unless it is a reduction note
    already printed in this run (``seen`` collects them; ``None``: print everything)."""
    if seen is None or not is_reduction_note(text):
        return True
    if text in seen:
        return False
    seen.add(text)
    return True
