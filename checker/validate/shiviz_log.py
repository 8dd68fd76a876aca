"""Reading ShiViz logs, as the reports write them (:mod:`ordercheck.reports.shiviz`).

The file's first line is the parser expression, the second the execution delimiter
(empty: one execution), then each event takes the lines the expression matches: by
default a text line and a ``host {vector clock}`` line. The text is one of the
sentences the reports write (``a sent a1 to b,c``, ``b received a1``, ``b dropped a1
(reason)``, ``a signalled b``, ``b got a signal from a``, ``a: fail``), optionally
followed by `` (step N)``. The host is the peer. Vector clocks are kept as each
event's ``vc``. Events are read in file order.
"""

from __future__ import annotations

import re

from ordercheck.checker.api.inputs import parse_json
from ordercheck.checker.validate.jsonl import EVENT_NESTING, bad
from ordercheck.checker.validate.log import DELIVER, DROP, FAIL, RESTART, SIGNAL_IN, SIGNAL_OUT, Log, LogBuilder

_STEP = re.compile(r" \(step \d+\)$")
_SENT = re.compile(r"^(?P<who>\S+) sent (?P<msg>\S+) to (?P<to>\S+)$")
_RECEIVED = re.compile(r"^(?P<who>\S+) received (?P<msg>\S+)$")
_DROPPED = re.compile(r"^(?P<who>\S+) dropped (?P<msg>\S+)(?: \((?P<reason>.*)\))?$")
_SIGNALLED = re.compile(r"^(?P<who>\S+) signalled (?P<other>\S+)$")
_GOT_SIGNAL = re.compile(r"^(?P<who>\S+) got a signal from (?P<other>\S+)$")
_LOCAL = re.compile(r"^(?P<who>\S+): (?P<kind>fail|restart)$")


def _python_regex(js: str) -> re.Pattern[str]:
    """ShiViz's JavaScript expression in Python's syntax (named groups differ)."""
    return re.compile(js.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!"))


def read_shiviz(text: str, source: str) -> Log:
    """Read a ShiViz log written by the reports; errors name the file, line and part."""
    lines = text.split("\n")
    if len(lines) < 2:
        raise bad(source, 1, "parser", "a ShiViz log starts with the parser expression and the delimiter line")
    try:
        parser = _python_regex(lines[0])
    except re.error as exc:
        raise bad(source, 1, "parser", f"is not a regular expression ({exc})") from None
    except RecursionError:
        raise bad(source, 1, "parser", "is nested too deeply to be read") from None
    missing = {"event", "host"} - set(parser.groupindex)
    if missing:
        raise bad(source, 1, "parser", f"lacks the named group(s) {', '.join(sorted(missing))}")
    if lines[1].strip():
        raise bad(source, 2, "delimiter", "several executions in one file are not supported; split them into files")
    body = "\n".join(lines[2:])
    offset = 2  # lines before the body
    builder = LogBuilder(source)
    builder.log.fmt = "shiviz"
    pos = 0
    def stray(start: int, end: int) -> None:
        gap = body[start:end]
        if gap.strip():
            at = start + len(gap) - len(gap.lstrip())
            raise bad(source, offset + body.count("\n", 0, at) + 1, "event", "does not match the parser expression")

    for match in parser.finditer(body):
        stray(pos, match.start())
        pos = match.end()
        _event(builder, match, offset + body.count("\n", 0, match.start()) + 1, source)
    stray(pos, len(body))
    return builder.log


def _event(b: LogBuilder, match: re.Match[str], line: int, source: str) -> None:
    host = match.group("host")
    text = _STEP.sub("", match.group("event").strip())
    meta = None
    if "clock" in match.re.groupindex and match.group("clock"):
        vc = parse_json(match.group("clock"), f"{source}:{line + 1}", "a vector clock", EVENT_NESTING, "clock")
        if not isinstance(vc, dict) or not all(type(v) is int for v in vc.values()):
            raise bad(source, line + 1, "clock", "expected an object from hosts to integers")
        meta = {"vc": vc}
    for pattern in (_SENT, _RECEIVED, _DROPPED, _SIGNALLED, _GOT_SIGNAL, _LOCAL):
        found = pattern.match(text)
        if found is not None:
            break
    else:
        raise bad(source, line, "event", f"{text!r} is not an event the reports write (send, receipt, drop, signal)")
    who = found.group("who")
    if who != host:
        raise bad(source, line, "host", f"the event is {who}'s but the host is {host!r}")
    try:
        peer = b.peer_id(host, "host")
        if pattern is _SENT:
            dests = [b.peer_id(d, "to") for d in found.group("to").split(",") if d]
            b.send(peer, found.group("msg"), dests, line, meta)
        elif pattern is _RECEIVED:
            b.add(peer, DELIVER, b.message_id(found.group("msg")), line, meta)
        elif pattern is _DROPPED:
            reason = found.group("reason")
            b.add(peer, DROP, b.message_id(found.group("msg")), line, dict(meta or {}, reason=reason) if reason else meta)
        elif pattern is _SIGNALLED:
            b.add(peer, SIGNAL_OUT, b.peer_id(found.group("other"), "to"), line, meta)
        elif pattern is _GOT_SIGNAL:
            b.add(peer, SIGNAL_IN, b.peer_id(found.group("other"), "from"), line, meta)
        else:
            b.add(peer, FAIL if found.group("kind") == "fail" else RESTART, 0, line, meta)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise bad(source, line, field, message) from None
