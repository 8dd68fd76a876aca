"""A node written to Maelstrom's ``broadcast`` workload as Maelstrom documents it, and
nothing else: no ordercheck-specific message, so ``ordercheck run`` sees its deliveries
only by polling ``read``.

The protocol (Maelstrom's doc/protocol.md and doc/workloads.md): one JSON message per
line, ``{"src", "dest", "body"}``; every request body has a ``type`` and a ``msg_id``,
every reply an ``in_reply_to`` (and, here, its own ``msg_id``). ``init`` (``node_id``,
``node_ids``) is answered ``init_ok``; ``topology`` (a map from node ids to neighbour
lists) ``topology_ok``; ``broadcast`` (``message``) ``broadcast_ok``; ``read``
``read_ok`` with ``messages``, the values this node has. Between nodes the node gossips
with the same ``broadcast`` RPC: a value first seen is sent, with a ``msg_id``, to every
neighbour but the one it came from, and the neighbour answers ``broadcast_ok``. The node
logs to stderr, as Maelstrom nodes do. Nothing orders the values, so causal order can
break; every value still reaches every node.

There are no retries: a retry needs a timer, and nothing is lost on ordercheck's
network unless a run asks for faults.
"""

import json
import sys


class Node:
    def __init__(self) -> None:
        self.id = ""
        self.neighbours: list[str] = []
        self.messages: set[int] = set()
        self.next_msg_id = 0
        self.unacked: dict[int, tuple[str, int]] = {}  # msg_id -> (neighbour, value)

    def send(self, dest: str, body: dict) -> None:
        self.next_msg_id += 1
        body["msg_id"] = self.next_msg_id
        sys.stdout.write(json.dumps({"src": self.id, "dest": dest, "body": body}) + "\n")

    def reply(self, request: dict, body: dict) -> None:
        body["in_reply_to"] = request["body"]["msg_id"]
        self.send(request["src"], body)

    def log(self, text: str) -> None:
        sys.stderr.write(f"{self.id}: {text}\n")
        sys.stderr.flush()

    def handle(self, msg: dict) -> None:
        body = msg["body"]
        kind = body["type"]
        if kind == "init":
            self.id = body["node_id"]
            self.log(f"initialised, nodes {', '.join(body['node_ids'])}")
            self.reply(msg, {"type": "init_ok"})
        elif kind == "topology":
            self.neighbours = body["topology"].get(self.id, [])
            self.log(f"neighbours {', '.join(self.neighbours)}")
            self.reply(msg, {"type": "topology_ok"})
        elif kind == "broadcast":
            value = body["message"]
            if value not in self.messages:
                self.messages.add(value)
                self.log(f"new value {value} from {msg['src']}")
                for n in self.neighbours:
                    if n != msg["src"]:
                        self.send(n, {"type": "broadcast", "message": value})
                        self.unacked[self.next_msg_id] = (n, value)
            self.reply(msg, {"type": "broadcast_ok"})
        elif kind == "broadcast_ok":
            self.unacked.pop(body.get("in_reply_to"), None)
        elif kind == "read":
            self.reply(msg, {"type": "read_ok", "messages": sorted(self.messages)})
        else:
            self.reply(msg, {"type": "error", "code": 10, "text": f"{kind} is not supported"})


def main() -> None:
    node = Node()
    for line in sys.stdin:
        node.handle(json.loads(line))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
