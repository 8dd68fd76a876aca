"""State graphs of small models, for inspection in Graphviz, yEd, Gephi or networkx.

The graph is enumerated through the spec API alone (``init_states``/``next_states``),
breadth-first, and refused (:class:`GraphTooLarge`) past a limit: a drawing of more
than a few thousand states helps nobody. Nodes are numbered in breadth-first order and
carry the described state; edges carry the action. Traces (counterexamples and
witnesses) are replayed and their paths marked: ``on_path`` names the properties whose
trace passes a node or edge, ``ends`` those whose trace ends at a node. ``write_dot``
adds Graphviz styling (paths in red, trace ends filled); ``write_graphml`` keeps the
attributes as data.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import networkx as nx

from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.result import Step
from ordercheck.checker.api.spec import Spec
from ordercheck.reports.timeline import replay_states

HARD_LIMIT = 100_000


class GraphTooLarge(Exception):
    """More states than the limit allows; ``count`` is how many were found before
    stopping."""

    def __init__(self, limit: int, count: int) -> None:
        self.limit = limit
        self.count = count
        super().__init__(f"more than {limit:,} states")


def state_graph(spec: Spec, max_states: int) -> tuple[nx.MultiDiGraph, dict[Any, int]]:
    """The reachable state graph, and each state's node number."""
    ids: dict[Any, int] = {}
    shown = rendering_of(spec)
    g = nx.MultiDiGraph()
    todo: deque[Any] = deque()

    def add(state: Any, depth: int, initial: bool) -> int:
        if state in ids:
            return ids[state]
        if len(ids) >= max_states:
            raise GraphTooLarge(max_states, len(ids) + 1)
        n = len(ids)
        ids[state] = n
        g.add_node(
            n,
            label=str(n),
            depth=depth,
            initial=initial,
            terminal=False,
            state=json.dumps(shown.describe(state), sort_keys=True),
            on_path="",
            ends="",
        )
        todo.append(state)
        return n

    for s in spec.init_states():
        add(s, 0, True)
    while todo:
        state = todo.popleft()
        n = ids[state]
        succ = list(spec.next_states(state))
        if not succ:
            g.nodes[n]["terminal"] = True
        for pos, (label, nxt) in enumerate(succ):
            m = add(nxt, g.nodes[n]["depth"] + 1, False)
            g.add_edge(n, m, key=pos, label=shown.format_action(label), action=json.dumps(list(label)), on_path="")
    return g, ids


def mark_trace(g: nx.MultiDiGraph, ids: dict[Any, int], spec: Spec, name: str, steps: list[Step]) -> list[int]:
    """Mark the path of trace ``name`` on ``g``; returns its node numbers."""
    states = replay_states(spec, steps)
    nodes = [ids[s] for s in states]
    for n in nodes:
        _append(g.nodes[n], "on_path", name)
    _append(g.nodes[nodes[-1]], "ends", name)
    for (a, b), step in zip(zip(nodes, nodes[1:]), steps[1:]):
        _append(g.edges[a, b, step.index], "on_path", name)
    return nodes


def _append(attrs: dict[str, Any], key: str, name: str) -> None:
    have = [x for x in attrs.get(key, "").split(",") if x]
    if name not in have:
        have.append(name)
    attrs[key] = ",".join(have)


def write_graphml(g: nx.MultiDiGraph, path: str | Path) -> None:
    nx.write_graphml(g, str(path))


def _dot_quote(text: str) -> str:
    """A DOT double-quoted string (never read as an HTML-like ``<...>`` label)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dot_graph(g: nx.MultiDiGraph, title: str) -> nx.MultiDiGraph:
    """A copy of ``g`` with Graphviz attributes, every value quoted for DOT."""
    d = nx.MultiDiGraph()
    d.graph["graph"] = {"label": _dot_quote(title), "labelloc": "t", "rankdir": "TB"}
    d.graph["node"] = {"shape": "circle", "fontsize": "10"}
    for n, a in g.nodes(data=True):
        attrs = {
            "label": _dot_quote(a["label"]),
            "tooltip": _dot_quote(a["state"]),
            "on_path": _dot_quote(a["on_path"]),
            "ends": _dot_quote(a["ends"]),
        }
        if a["initial"]:
            attrs["shape"] = "doublecircle"
        if a["on_path"]:
            attrs["color"] = '"#d62728"'
            attrs["penwidth"] = "2"
        if a["ends"]:
            attrs["style"] = "filled"
            attrs["fillcolor"] = '"#ffc9c9"'
            attrs["xlabel"] = _dot_quote(a["ends"])
        d.add_node(n, **attrs)
    for u, v, k, a in g.edges(keys=True, data=True):
        attrs = {"label": _dot_quote(a["label"]), "on_path": _dot_quote(a["on_path"])}
        if a["on_path"]:
            attrs["color"] = '"#d62728"'
            attrs["penwidth"] = "2.5"
        d.add_edge(u, v, key=k, **attrs)
    return d


def write_dot(g: nx.MultiDiGraph, path: str | Path, title: str) -> None:
    nx.nx_pydot.write_dot(dot_graph(g, title), str(path))
