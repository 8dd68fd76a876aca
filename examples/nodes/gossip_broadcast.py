"""A plain Maelstrom broadcast node: gossip, no ordering.

A value first seen (from a client or another node) is stored and sent to every
neighbour of the ``topology`` except the one it came from; ``read`` lists the values
seen, in the order first seen. Every value reaches every node (eventual delivery), but
nothing holds a value back until what its sender had seen arrives, so causal order
breaks.
"""

import json
import sys


def main() -> None:
    me = ""
    neighbours: list[str] = []
    seen: list[object] = []
    for line in sys.stdin:
        msg = json.loads(line)
        body = msg["body"]
        kind = body["type"]
        out = []
        if kind == "init":
            me = body["node_id"]
            out.append((msg["src"], {"type": "init_ok"}))
        elif kind == "topology":
            neighbours = body["topology"].get(me, [])
            out.append((msg["src"], {"type": "topology_ok"}))
        elif kind == "broadcast":
            v = body["message"]
            if v not in seen:
                seen.append(v)
                out += [(n, {"type": "broadcast", "message": v}) for n in neighbours if n != msg["src"]]
            if "msg_id" in body:
                out.append((msg["src"], {"type": "broadcast_ok"}))
        elif kind == "read":
            out.append((msg["src"], {"type": "read_ok", "messages": seen}))
        for dest, b in out:
            if dest == msg["src"] and "msg_id" in body:
                b["in_reply_to"] = body["msg_id"]
            sys.stdout.write(json.dumps({"src": me, "dest": dest, "body": b}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
