"""Traces in the Informal Trace Format (ITF), the JSON trace format of Apalache.

A trace is ``{"#meta": {...}, "vars": [...], "states": [...]}``; each state is
``{"#meta": {"index": i, ...}, var: value, ...}`` and defines every variable. The
variables are the top-level keys of the spec's described state. Values follow the
format's rules: strings and booleans as themselves, lists as JSON arrays, tables as
records (JSON objects) or, when a key is not a string or starts with ``#``, as
``{"#map": [[key, value], ...]}``; integers as JSON numbers when they lie in
``[-(2**53)+1, 2**53-1]`` and as ``{"#bigint": "digits"}`` otherwise. The format has
no null: an absent value (``None``) is written as the empty option
``{"tag": "None", "value": {"#tup": []}}``, as Apalache and Quint write one. Each
state's ``#meta`` also carries the action that led to it.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker.api.result import Step

SAFE_INT = 2**53 - 1
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def itf_value(value: Any) -> Any:
    """One described value in ITF form."""
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -SAFE_INT <= value <= SAFE_INT else {"#bigint": str(value)}
    if isinstance(value, float):
        if value.is_integer():
            return itf_value(int(value))
        return {"#unserializable": repr(value)}
    if isinstance(value, (list, tuple)):
        return [itf_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"#set": [itf_value(v) for v in sorted(value, key=repr)]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("#") for k in value):
            return {k: itf_value(v) for k, v in value.items()}
        return {"#map": [[itf_value(k), itf_value(v)] for k, v in value.items()]}
    return {"#unserializable": repr(value)}


def itf_trace(
    steps: list[Step],
    *,
    source: str = "",
    description: str = "",
    extra_meta: dict[str, Any] | None = None,
    loop: int | None = None,
) -> dict[str, Any]:
    """The ITF document of a trace. ``source`` names the model file; ``loop`` makes it
    a lasso: the index of the state the run returns to after the last one (whose
    state equals it)."""
    names: list[str] = []
    for step in steps:
        for key in step.state:
            if key not in names:
                names.append(str(key))
    states = []
    for i, step in enumerate(steps):
        meta: dict[str, Any] = {"index": i}
        if step.action is not None:
            meta["action"] = step.action
            meta["label"] = itf_value(list(step.label or []))
        state: dict[str, Any] = {"#meta": meta}
        for key in names:
            state[key] = itf_value(step.state.get(key))
        states.append(state)
    meta = {"format": "ITF", "format-description": FORMAT_DESCRIPTION, "source": source, "description": description}
    meta.update(extra_meta or {})
    doc: dict[str, Any] = {"#meta": meta, "vars": names, "states": states}
    if loop is not None:
        doc["loop"] = loop
    return doc
