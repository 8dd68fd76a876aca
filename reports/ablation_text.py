"""The ablation table as plain text, for the terminal.

One row per step switched off, one column per property. A cell reads ``holds``,
``violated`` or ``unknown``; a verdict that differs from the full algorithm's is in
capitals with the length of its shortest trace (``BREAKS 18`` for a property the step
protects, ``REACHED``/``UNREACHED`` for a ``sometimes`` property that changes); a
``sometimes`` property never reached reads ``unreached``, as in every other artifact.
Below the table, each break with its explanation, and for a step whose removal changes
nothing the same words as the HTML report's ``breaks`` column
(:func:`ordercheck.reports.view.ablation_outcome`): ``inert here`` when the search finds the same
states and verdicts, else that none of the properties the model checks breaks.
"""

from __future__ import annotations

from ordercheck.checker.api.result import PropertyResult
from ordercheck.reports.view import Ablation, ablation_outcome, full_algorithm_label


def _cell(p: PropertyResult | None, base: PropertyResult | None) -> str:
    if p is None:
        return "-"
    if base is None or base.status == p.status:
        return p.word
    steps = f" {len(p.trace) - 1}" if p.trace else ""
    if p.kind == "sometimes":
        return ("REACHED" if p.status == "holds" else "UNREACHED") + steps
    if p.status == "violated":
        return f"BREAKS{steps}"
    return p.status.upper() + steps


def ablation_table(a: Ablation) -> str:
    """The table and the explanation of every break."""
    props = list(a.baseline.properties)
    base = a.baseline.properties
    header = ["step switched off", *props]
    rows = [[full_algorithm_label(a.note), *[base[p].word for p in props]]]
    for flag, _doc, result in a.mutants:
        rows.append([flag, *[_cell(result.properties.get(p), base.get(p)) for p in props]])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [f"ablation of {a.model} ({a.spec.replace(chr(92), '/').rsplit('/', 1)[-1]})"]  # a spec file: its name
    if a.note:
        out.append(a.note)
    out += ["", line(header), line(["-" * w for w in widths]), *(line(r) for r in rows), ""]
    for flag, doc, result in a.mutants:
        outcome = ablation_outcome(a.baseline, result)
        sentence = outcome.sentence(flag, doc)
        if sentence is not None:
            out.append(sentence)
            continue
        out.append(f"{flag} ({doc}):" if doc else f"{flag}:")
        for name, word in outcome.changes:
            p = result.properties[name]
            steps = f", {len(p.trace) - 1} steps" if p.trace else ""
            out.append(f"  {name} {word}{steps}: {p.explanation or ''}".rstrip())
    return "\n".join(out)
