"""A base for specs of peers exchanging messages: shared constants, naming, history.

Most specs here are "n peers, each sending some messages to some destinations, with
optional side-channel signals", keep the ghost history of :mod:`specs.common`, and
have a per-peer transaction slot that must be empty at the end of a run. This base
gives them the shared constants and everything derived from the ghost, so a spec writes
only its own state and steps.
"""

from __future__ import annotations

from typing import Any, ClassVar

from checker import Constant, Property, Spec
from specs.common import destination_choices, members, names_of, parse_script, peer_names
from specs.history import History


def peer_constants(peers: int = 3, sends: int = 1, destinations: str = "others") -> tuple[Constant, ...]:
    """The constants every :class:`PeerSpec` takes, with the given defaults."""
    return (
        Constant("peers", int, peers, "number of peers, named a, b, c, ...", minimum=2, maximum=8),
        Constant("sends", int, sends, "sends per peer (when no script is given)", minimum=0, maximum=8),
        Constant(
            "destinations",
            str,
            destinations,
            "what a send may address: others (all other peers at once), unicast, or subsets",
            choices=("others", "unicast", "subsets"),
        ),
        Constant("script", dict, {}, 'fixed sends per peer, e.g. { a = ["bc"], b = ["c"] }; overrides sends'),
        Constant("signals", int, 0, "side-channel signals allowed in a run", minimum=0, maximum=8),
    )


class PeerSpec(Spec):
    """Peers named a, b, c... with message ids ``sender * stride + seq``.

    Subclasses set ``ghost_at`` and ``txs_at``: the positions in their state tuple of
    the ghost ``(sent, logs)`` and of the per-peer transaction slots (``0`` when idle).
    """

    ghost_at: ClassVar[int] = 0
    txs_at: ClassVar[int] = 1

    def setup(self) -> None:
        n = self.peers
        self.names = peer_names(n)
        if self.script:
            self.plan = parse_script(self.script, n)
            self.choices = None
            self.stride = max(1, max(len(s) for s in self.plan))
        else:
            self.plan = None
            self.choices = tuple(destination_choices(n, p, self.destinations) for p in range(n))
            self.stride = max(1, self.sends)
        self.dest_table = tuple(members(mask) for mask in range(1 << n))
        self.configure()

    def configure(self) -> None:
        """Derive spec-specific settings; runs after the shared ones are set."""

    # -- history ------------------------------------------------------------------------

    def history_key(self, state: tuple) -> Any:
        return state[self.ghost_at]

    def history(self, state: tuple) -> History:
        sent, logs = state[self.ghost_at]
        return History.from_raw(self.names, sent, logs, self.stride)

    def finished(self, state: tuple) -> bool:
        return not any(state[self.txs_at])

    def deadlock_free(self) -> Property:
        return Property.eventually(
            "deadlock_free", self._deadlock, doc="every run ends with no peer stuck inside a transaction"
        )

    def _deadlock(self, state: tuple) -> str | None:
        busy = [self.names[p] for p, tx in enumerate(state[self.txs_at]) if tx]
        return f"the run stops with {', '.join(busy)} inside a transaction" if busy else None

    # -- presentation ---------------------------------------------------------------------

    def mname(self, mid: int) -> str:
        """A message's readable name: ``a1`` is a's first message."""
        return f"{self.names[mid // self.stride]}{mid % self.stride + 1}"

    def format_action(self, action: tuple) -> str:
        kind, p, *rest = action
        who = self.names[p]
        if kind == "send":
            mid, dmask = rest
            return f"{who} starts sending {self.mname(mid)} to {names_of(dmask, self.names)}"
        if kind == "deliver":
            return f"{who} receives {self.mname(rest[0])}"
        if kind == "signal":
            return f"{who} signals {self.names[rest[0]]}"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """Labels here are ``(kind, peer, ...)``: a step other than a send, delivery or
        signal (those are in the history) is drawn as a local step of ``peer``."""
        if len(action) > 1 and isinstance(action[1], int) and action[0] not in ("send", "deliver", "signal"):
            return ("step", action[1], None)
        return None

    def common_view(self, state: tuple) -> tuple[History, dict[str, Any]]:
        """The history and the per-message part of :meth:`describe`."""
        h = self.history(state)
        messages = {
            m.name: {
                "from": self.names[m.sender],
                "to": [self.names[d] for d in sorted(m.dests)],
                "past": [h.messages[x].name for x in sorted(m.past)],
            }
            for m in h.sent_messages()
        }
        return h, messages
