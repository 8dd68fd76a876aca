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

from ordercheck.reports.view import ReportView, TraceView, initial_state

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
    """Mermaid lines for a trace, drawn as the SVG diagram draws it: each message an
    arrow from its sender, at its arrival when the spec places one (its delivery then a
    note on the receiver), else at its delivery; a message not delivered when the trace
    ends a dotted arrow ending in a cross, drawn after the last step; signals and
    protocol messages (proposals, acknowledgements, tokens) dotted arrows of their own.
    What is to blame sits inside a coloured box; when the verdict blames steps rather
    than deliveries, those steps are notes; a trace with no message at all (a witness
    reached before anything was delivered) gets a note per step, so nothing is left
    empty."""
    tl, bl = t.timeline, t.blame
    if tl is None or bl is None:
        return []
    lines = ["sequenceDiagram"]
    for p, name in enumerate(tl.peers):
        lines.append(f"    participant p{p} as {mermaid(name)}")
    colour = "rgb(211, 249, 216)" if bl.witness else "rgb(255, 201, 201)"

    def add(line: str, hot: bool = False) -> None:
        if hot:
            lines.extend([f"    rect {colour}", "    " + line, "    end"])
        else:
            lines.append(line)

    fate = {}
    for e in tl.events:
        if e.kind in ("deliver", "drop") and e.message is not None:
            fate.setdefault((e.message, e.peer), e)
    sent: dict[int, tuple[int, int]] = {}  # message: sender, step
    arrived: set[tuple[int, int]] = set()
    consumed: set[tuple[int, int]] = set()
    internal: dict[tuple[int, int, str], int] = {}
    source = tl.signal_pairs()  # each receipt's signal, as the monitors pair them
    arrows = 0
    for e in tl.events:
        key = (e.message, e.peer)
        if e.kind == "send" and e.message is not None:
            sent[e.message] = (e.peer, e.step)
        elif e.kind == "signal_in" and (e.peer, e.log_index) in source:
            add(f"    p{source[(e.peer, e.log_index)][0]}-->>p{e.peer}: signal (step {e.step})")  # type: ignore[index]
            arrows += 1
        elif e.kind in ("arrive", "commit") and e.message in sent and key not in arrived and key not in consumed:
            arrived.add(key)  # type: ignore[arg-type]
            then = fate.get(key)  # type: ignore[arg-type]
            hot = (then.peer, then.log_index) in bl.deliveries if then is not None else (key in bl.missing or key in bl.awaited)
            verb = "queued" if e.kind == "commit" else "arrives"
            add(f"    p{sent[e.message][0]}->>p{e.peer}: {mermaid(tl.message_name(e.message))} {verb} (step {e.step})", hot)
            arrows += 1
        elif e.kind in ("deliver", "drop") and e.message in sent:
            consumed.add(key)  # type: ignore[arg-type]
            name = mermaid(tl.message_name(e.message))
            hot = (e.peer, e.log_index) in bl.deliveries
            what = "dropped " if e.kind == "drop" else ""
            if key in arrived:
                add(f"    Note over p{e.peer}: {'drops' if e.kind == 'drop' else 'delivers'} {name} (step {e.step})", hot)
            else:
                add(f"    p{sent[e.message][0]}->>p{e.peer}: {what}{name} (step {e.step})", hot)
                arrows += 1
        elif e.kind == "internal_send":
            internal[(e.peer, e.other, e.text)] = internal.get((e.peer, e.other, e.text), 0) + 1  # type: ignore[index]
        elif e.kind in ("internal_receive", "internal_lose") and internal.get((e.other, e.peer, e.text), 0) > 0:  # type: ignore[arg-type]
            internal[(e.other, e.peer, e.text)] -= 1  # type: ignore[index]
            if e.kind == "internal_lose":
                add(f"    p{e.other}--xp{e.peer}: {mermaid(e.text)} lost (step {e.step})")
            else:
                add(f"    p{e.other}--)p{e.peer}: {mermaid(e.text)} (step {e.step})")
            arrows += 1
    for mid, (p, k) in sorted(sent.items()):
        msg = tl.messages.get(mid)
        for q in sorted(msg.dests) if msg is not None else ():
            if (mid, q) in consumed:
                continue
            hot = (mid, q) in bl.missing or (mid, q) in bl.awaited
            if (mid, q) in arrived:
                add(f"    Note over p{q}: {mermaid(msg.name)} held, not delivered", hot)
                continue
            state = "never delivered" if (mid, q) in bl.missing else "not yet delivered" if hot else "not delivered"
            add(f"    p{p}--xp{q}: {mermaid(msg.name)} sent at step {k}, {state}", hot)
            arrows += 1
    for (p, q, text), left in internal.items():
        for _ in range(left):  # still in transit when the trace ends
            add(f"    p{p}--xp{q}: {mermaid(text)} in transit at the end")
            arrows += 1
    span = f"p0,p{len(tl.peers) - 1}" if len(tl.peers) > 1 else "p0"
    blamed = bl.steps if not bl.deliveries and not bl.missing else set()
    what = "reached" if bl.witness else "breaks"
    if arrows:
        for k in sorted(blamed):
            lines.append(f"    Note over {span}: step {k}: {mermaid(t.steps[k].action)} ({what})")
    else:  # nothing was sent or signalled: the steps themselves, in order
        at: dict[int, int] = {}
        for e in tl.events:
            at.setdefault(e.step, e.peer)
        for s in t.steps[1:]:
            where = f"p{at[s.number]}" if s.number in at and s.number not in blamed else span
            lines.append(f"    Note over {where}: step {s.number}: {mermaid(s.action)}" + (f" ({what})" if s.number in blamed else ""))
    return lines


def render_markdown(view: ReportView) -> str:
    """The whole report as one Markdown document."""
    env = Environment(
        loader=PackageLoader("ordercheck.reports", "templates"),
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
