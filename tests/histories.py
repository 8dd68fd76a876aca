"""Building histories by hand: peers a, b, c..., messages a1, b1, ..., events as words."""

from __future__ import annotations

from ordercheck.specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, History, encode_event

STRIDE = 4


def mid(name: str, peers: str) -> int:
    return peers.index(name[0]) * STRIDE + int(name[1:]) - 1


def history(peers: str, logs: dict[str, list[str]], dests: dict[str, str], failed: str = "") -> History:
    """``logs`` maps a peer to events such as ``"send a1"``, ``"recv b1"``, ``"drop b1"``,
    ``"sig c"`` (signal c) and ``"got a"`` (signal from a); ``dests`` gives each message's
    destinations. Causal pasts follow DESIGN.md: replay the logs in a consistent order."""
    n = len(peers)
    know = [0] * n
    sent: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    encoded: list[list[int]] = [[] for _ in range(n)]
    pos = dict.fromkeys(peers, 0)
    signals_out: dict[tuple[str, str], list[int]] = {}
    pasts: dict[int, int] = {}
    progress = True
    while progress:
        progress = False
        for p in peers:
            i = pos[p]
            if i >= len(logs.get(p, [])):
                continue
            verb, arg = logs[p][i].split()
            pi = peers.index(p)
            if verb == "send":
                m = mid(arg, peers)
                mask = sum(1 << peers.index(d) for d in dests[arg])
                pasts[m] = know[pi]
                sent[pi].append((mask, know[pi]))
                encoded[pi].append(encode_event(SEND, m))
                know[pi] |= 1 << m
            elif verb in ("recv", "drop"):
                m = mid(arg, peers)
                if m not in pasts:
                    continue  # wait until the send has been replayed
                if verb == "recv":
                    know[pi] |= (1 << m) | pasts[m]
                encoded[pi].append(encode_event(DELIVER if verb == "recv" else DROP, m))
            elif verb == "sig":
                signals_out.setdefault((p, arg), []).append(know[pi])
                encoded[pi].append(encode_event(SIGNAL_OUT, peers.index(arg)))
            elif verb == "got":
                waiting = signals_out.get((arg, p))
                if not waiting:
                    continue
                know[pi] |= waiting.pop(0)
                encoded[pi].append(encode_event(SIGNAL_IN, peers.index(arg)))
            pos[p] += 1
            progress = True
    for p in peers:
        assert pos[p] == len(logs.get(p, [])), f"log of {p} cannot be replayed"
    return History.from_raw(
        tuple(peers), [tuple(s) for s in sent], [tuple(e) for e in encoded], STRIDE,
        failed={peers.index(f) for f in failed},
    )
