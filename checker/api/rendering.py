"""The rendering protocol: how a spec's states and actions are shown to people.

:class:`Rendering` is a mixin a spec inherits to opt in (``class MySpec(Spec,
Rendering)``), next to :class:`~ordercheck.checker.api.spec.Spec`, which is the model alone. Its
hooks shape traces, reports and space-time diagrams, never a state count or a verdict:
:meth:`~Rendering.describe` (a state as JSON), :meth:`~Rendering.format_action` (an action
label as text), :meth:`~Rendering.action_site` and :meth:`~Rendering.internal_messages`
(where a step is drawn in a diagram).

Traces, reports, the TLA+ trace import and the engine's diagnostics reach these hooks
only through :func:`rendering_of`, which gives a spec that does not inherit the protocol
the defaults: states by field name (or as one value), actions as ``name(arg, ...)``,
nothing drawn for steps outside the history.

A hook of this protocol defined on a spec that does not inherit it is refused when the
class is defined (see :func:`ordercheck.checker.api.spec.misplaced_hooks`): ignoring it would show
traces other than the spec means without a word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ordercheck.checker.api.fields import Fields
from ordercheck.checker.api.state import Action, State


class Rendering:
    """Rendering: a mixin for a :class:`~ordercheck.checker.api.spec.Spec` that shows its states and
    actions its own way.

    A spec inherits it (``class MySpec(Spec, Rendering)``) and overrides any of the hooks
    below; those it leaves alone keep their defaults. Nothing here may change the state
    graph: the hooks are called on states and labels the search already has.
    """

    fields: Fields | None
    """The spec's :attr:`ordercheck.checker.api.spec.Spec.fields`, which :meth:`describe` reads."""

    def describe(self, state: State) -> dict[str, Any]:
        """A JSON-friendly view of ``state`` for traces and reports (by field name when
        the spec names its fields, else ``{"state": ...}``)."""
        if self.fields is not None:
            return {k: jsonable(v) for k, v in self.fields.describe(state).items()}
        return {"state": jsonable(state)}

    def format_action(self, action: Action) -> str:
        """A short human reading of an action label (the default: ``name(arg, ...)``)."""
        name, *args = action
        return f"{name}({', '.join(str(a) for a in args)})"

    def action_site(self, action: Action) -> tuple[str, int, int | None] | None:
        """Where an action happens, for space-time diagrams: ``(kind, peer, message)``.

        Sends, deliveries and signals are drawn from the history; this places the other
        steps. ``kind`` is ``"stage"`` (a message is staged or blocked on ``peer``'s
        queue), ``"commit"`` (a message is committed to ``peer``'s queue), ``"arrive"``
        (a message reaches ``peer``, which holds it back undelivered for now) or
        ``"step"`` (another local step at ``peer``); ``message`` is a message id or
        ``None``.

        The first ``"arrive"`` or ``"commit"`` of a message at a peer is where the
        diagram ends the message's arrow; its delivery, later, is drawn on the peer's
        line joined to the arrival (a message's arrival is not hidden behind its
        delivery). Give the site of what the action does in the run being shown: a
        ``"stage"`` for a block that a configuration leaves out would draw a block
        that did not happen (a ``"stage"`` or ``"commit"`` of a step that changes
        nothing in :meth:`describe`'s view is drawn as a plain step). ``None`` (the
        default) draws nothing for the action.
        """
        return None

    def internal_messages(self, action: Action) -> Sequence[tuple[str, int, int, str]]:
        """Protocol-internal messages ``action`` sends or receives, for space-time
        diagrams: messages outside the ordered history (a token, an acknowledgement, a
        request for a sequence number), drawn lighter than the application's messages.

        Each item is ``("send", peer, to, name)``, ``("receive", peer, sender, name)``,
        ``("lose", peer, sender, name)`` or ``("send_dests", peer, message, name)``,
        with peer numbers as in the history. ``lose``: the channel loses a message
        ``name`` from ``sender`` on its way to ``peer`` (drawn ending in a cross);
        ``send_dests`` sends ``name`` to each destination of application message
        ``message`` as the history records them (a reply to all of a multicast's
        destinations, when the label does not name them). A receipt or a loss is
        matched with the oldest unmatched send of that name from ``sender`` to
        ``peer``, and drawn as an arrow from it; a send never matched is drawn in
        transit at the trace's end. Empty (the default): the action sends and receives
        none."""
        return ()


RENDERING_HOOKS = ("describe", "format_action", "action_site", "internal_messages")
"""The hooks of :class:`Rendering`: a spec that defines one must inherit it."""


class _Plain(Rendering):
    """:class:`Rendering`'s defaults for a spec that does not inherit it."""

    def __init__(self, spec: Any) -> None:
        self.fields = spec.fields


def rendering_of(spec: Any) -> Rendering:
    """``spec``'s :class:`Rendering` hooks: the spec itself when it inherits the
    protocol, else an object giving the defaults."""
    return spec if isinstance(spec, Rendering) else _Plain(spec)


def jsonable(value: Any) -> Any:
    """``value`` with tuples as lists and frozensets as sorted lists (JSON's shapes)."""
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(jsonable(v) for v in value)
    return value
