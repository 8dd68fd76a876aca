"""The report as Markdown, for pull requests and design documents.

The same content as the HTML report: the protocol × property matrix, the ablation
tables, each model's verdicts and statistics, and each trace with its explanation,
its steps and what changed in each, and a Mermaid sequence diagram (which GitHub and
GitLab draw in place). Every name, label and value is escaped: ``md`` for Markdown
text (HTML markup and Markdown syntax both neutralised), ``mermaid`` for diagram text.
"""

from __future__ import annotations

import re

from jinja2 import Environment, PackageLoader, StrictUndefined

from reports.view import ReportView, TraceView, initial_state

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def md(value: object) -> str:
    """Plain text safe inside Markdown prose and table cells."""
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return _MD_SPECIAL.sub(r"\\\1", text)


_MERMAID_SAFE = re.compile(r"[A-Za-z0-9 _.,@/'=+-]")


def mermaid(value: object) -> str:
    """Text safe in a Mermaid sequence diagram: anything unusual becomes ``#NN;``."""
    return "".join(ch if _MERMAID_SAFE.fullmatch(ch) else f"#{ord(ch)};" for ch in " ".join(str(value).split()))


def sequence_diagram(t: TraceView) -> list[str]:
    """Mermaid lines for a trace: one arrow per delivery (drawn when it happens) and per
    signal, offending ones inside a red box, undelivered messages as notes."""
    tl, bl = t.timeline, t.blame
    if tl is None or bl is None:
        return []
    lines = ["sequenceDiagram"]
    for p, name in enumerate(tl.peers):
        lines.append(f"    participant p{p} as {mermaid(name)}")
    sent: dict[int, int] = {}
    source = tl.signal_pairs()  # each receipt's signal, as the monitors pair them
    for e in tl.events:
        if e.kind == "send" and e.message is not None:
            sent[e.message] = e.peer
        elif e.kind == "signal_in" and (e.peer, e.log_index) in source:
            lines.append(f"    p{source[(e.peer, e.log_index)][0]}-->>p{e.peer}: signal (step {e.step})")  # type: ignore[index]
        elif e.kind in ("deliver", "drop") and e.message in sent:
            name = mermaid(tl.message_name(e.message))
            what = "dropped " if e.kind == "drop" else ""
            arrow = f"    p{sent[e.message]}->>p{e.peer}: {what}{name} (step {e.step})"
            if (e.peer, e.log_index) in bl.deliveries:
                colour = "rgb(211, 249, 216)" if bl.witness else "rgb(255, 201, 201)"
                lines += [f"    rect {colour}", "    " + arrow, "    end"]
            else:
                lines.append(arrow)
    if not bl.deliveries and not bl.missing:
        for k in sorted(bl.steps):
            what = "reached" if bl.witness else "breaks"
            span = f"p0,p{len(tl.peers) - 1}" if len(tl.peers) > 1 else "p0"
            lines.append(f"    Note over {span}: step {k}: {mermaid(t.steps[k].action)} ({what})")
    for mid, q in sorted(bl.missing):
        lines.append(f"    Note over p{q}: {mermaid(tl.message_name(mid))} never delivered")
    for mid, q in sorted(bl.awaited):
        lines.append(f"    Note over p{q}: {mermaid(tl.message_name(mid))} not yet delivered")
    return lines


def render_markdown(view: ReportView) -> str:
    """The whole report as one Markdown document."""
    env = Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.do"],
    )
    env.filters["md"] = md
    env.globals["sequence_diagram"] = sequence_diagram
    env.globals["initial_state"] = initial_state
    text = env.get_template("report.md.j2").render(r=view)
    return re.sub(r"\n{3,}", "\n\n", text)
