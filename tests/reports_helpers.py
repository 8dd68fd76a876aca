"""Shared pieces of the report tests: checked models, a hostile spec, a PNG reader."""

from __future__ import annotations

import struct
import zlib
from functools import cache
from pathlib import Path

from ordercheck.checker import Property, Rendering, Spec
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.specs.history import DELIVER, SEND, History, encode_event

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@cache
def checked(name: str) -> Result:
    """The result of checking ``models/NAME.toml`` (cached for the session)."""
    return check_model(load_model(MODELS / f"{name}.toml"), Options(progress=False))


EVIL = "<script>alert(1)</script>"


class Evil(Spec, Rendering):
    """Two peers with hostile names; peer 0 sends one message that peer 1 delivers.

    Every label, name, described value and explanation carries markup, quotes and
    Markdown syntax; a value above 2**53 exercises ITF's big integers.
    """

    name = "evil"
    summary = "hostile labels"
    constants = ()
    peers = (EVIL, 'b&"q\' |*_`[x](y)')

    def init_states(self):
        return [((), ())]  # (sent by peer 0, log of peer 1): tiny ghost

    def next_states(self, state):
        sent, log1 = state
        if not sent:
            return [(("send", 0, EVIL), ((1 << 1,), ()))]
        if not log1:
            return [(("deliver", 1, "<img src=x onerror=alert(2)>"), (sent, (encode_event(DELIVER, 0),)))]
        return []

    def history(self, state):
        sent, log1 = state
        log0 = (encode_event(SEND, 0),) if sent else ()
        return History.from_raw(self.peers, [[(d, 0) for d in sent], []], [log0, log1], 1)

    def describe(self, state):
        sent, log1 = state
        return {"<k>&": EVIL if sent else "x", "big": 2**60 + len(log1), "n": len(log1), "none": None}

    def format_action(self, action):
        return f"{action[0]} {action[2]}"

    def properties(self):
        return [
            Property.always("no_delivery<script>", self._no_delivery, over="history"),
            Property.sometimes("sent", lambda s: f"{EVIL} reached" if s[0] else None),
            Property.eventually("nothing_pending", lambda h: None, over="history"),
        ]

    def _no_delivery(self, h: History):
        if h.deliveries(1):
            return f"{EVIL} peer {h.peers[1]} delivered {h.messages[0].name}"
        return None


def evil_result() -> Result:
    spec = Evil()
    model = Model(
        path="models/<evil>.toml",
        spec_name="evil",
        spec=spec,
        description="",
        constants={},
        properties=list(spec.properties()),
        expect={"no_delivery<script>": "holds"},
    )
    return check_model(model, Options(progress=False))


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit, non-interlaced RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = colour = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3))
        prev = line
    return width, height, rows
