"""Node processes: started from a command line, spoken to in Maelstrom's JSON envelope.

A :class:`Node` is one process (its own process group, so that :meth:`Node.kill` reaps
whatever it started). The harness writes one JSON message per line to its stdin and
reads one per line from its stdout; stderr goes to a temporary file whose last line is
quoted when the node misbehaves. Every way a node can misbehave (a line that is not a
JSON envelope, no answer within the step's timeout, an exit, more output than a step
allows) raises :class:`NodeFailed`, whose :meth:`~NodeFailed.line` names the node and
what it did.
A :class:`Pool` starts one execution's worth of processes ahead.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from typing import Any

LINE_LIMIT = 1 << 20
"""The longest line a node may write (bytes): a longer one is a flood."""

STDERR_KEPT = 200
"""The most stderr lines :meth:`Node.new_stderr` returns at once (the rest are counted)."""


class NodeFailed(Exception):
    """A node misbehaved: ``node`` (its id) did ``what``."""

    def __init__(self, node: str, what: str) -> None:
        super().__init__(f"node {node}: {what}")
        self.node = node
        self.what = what

    def line(self) -> str:
        """The one line that names the node and what it did."""
        return f"node {self.node}: {self.what}"


class Node:
    """One node process, started from ``argv`` as node ``node_id``."""

    def __init__(self, node_id: str, argv: list[str]) -> None:
        self.id = node_id
        self._stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                         start_new_session=True)
        except OSError as exc:
            self._stderr.close()
            raise NodeFailed(node_id, f"could not be started ({exc.strerror or exc})") from None
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self._fd = self.proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._buf = b""
        self._err_at = 0  # how much of the stderr file new_stderr has read
        self._err_rest = b""  # a stderr line not yet ended
        self.last_line = ""
        """The last line :meth:`receive` read (as the node wrote it, without its newline)."""
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._fd, selectors.EVENT_READ)

    def send(self, msg: dict[str, Any]) -> None:
        """Write ``msg`` as one line to the node's stdin."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise NodeFailed(self.id, f"exited{self._exit_text()} while a message was written to it") from None

    def receive(self, timeout: float, waiting_for: str) -> dict[str, Any]:
        """The next message the node writes, as a JSON object with ``src``, ``dest`` and an
        object ``body``; :class:`NodeFailed` if none comes within ``timeout`` seconds (named
        by ``waiting_for``), or the node exits, or writes anything else."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            if len(self._buf) > LINE_LIMIT:
                raise NodeFailed(self.id, f"flooded: wrote a line of more than {LINE_LIMIT:,} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise NodeFailed(self.id, f"did not answer {waiting_for} within {timeout:g} s")
            if not self._sel.select(min(left, 0.05)):
                if self.proc.poll() is not None:  # exited, its stdout kept open by a process it started
                    raise NodeFailed(self.id, f"exited{self._exit_text()} while the harness waited for {waiting_for}")
                continue
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                raise NodeFailed(self.id, f"exited{self._exit_text()} while the harness waited for {waiting_for}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\n", 1)
        if len(raw) > LINE_LIMIT:
            raise NodeFailed(self.id, f"flooded: wrote a line of more than {LINE_LIMIT:,} bytes")
        text = raw.decode("utf-8", "replace").strip()
        self.last_line = text
        try:
            msg = json.loads(text)
        except (ValueError, RecursionError):
            raise NodeFailed(self.id, f"printed a line that is not JSON: {_clip(text)!r}") from None
        if not (isinstance(msg, dict) and isinstance(msg.get("src"), str) and isinstance(msg.get("dest"), str)
                and isinstance(msg.get("body"), dict) and isinstance(msg["body"].get("type"), str)):
            raise NodeFailed(self.id, "printed JSON that is not a Maelstrom message (src, dest and a body with a "
                                      f"type): {_clip(text)!r}")
        return msg

    def new_stderr(self) -> list[str]:
        """The lines the node has ended on stderr since the last call (at most
        :data:`STDERR_KEPT`, then one line counting the others)."""
        self._stderr.seek(self._err_at)
        data = self._stderr.read(LINE_LIMIT)
        self._err_at += len(data)
        *lines, self._err_rest = (self._err_rest + data).split(b"\n")
        if len(self._err_rest) > LINE_LIMIT:
            lines.append(self._err_rest)
            self._err_rest = b""
        out = [ln.decode("utf-8", "replace").rstrip("\r") for ln in lines]
        if len(out) > STDERR_KEPT:
            out = out[:STDERR_KEPT] + [f"({len(out) - STDERR_KEPT} more stderr lines)"]
        return out

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return ""
        self._stderr.seek(0)
        err = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        last = f"; its last stderr line: {_clip(err[-1])!r}" if err else ""
        return f" (exit code {code}{last})"

    def kill(self) -> None:
        """Kill the node's process group and reap the process (idempotent)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
            pass
        self._sel.close()
        self._stderr.close()


def argv_of(command: str) -> list[str]:
    """The node command line split as a POSIX shell would (no shell runs it)."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("empty command")
    return argv


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[:n] + "..."


class Pool:
    """Node processes started one execution ahead, so that an execution's start does
    not wait for the interpreters of its nodes to start: :meth:`spawn` hands out a
    process started earlier from the same command line (renamed ``node_id``; nothing
    has been written to it yet) and starts its replacement. A replacement that cannot
    be started is left out (the next :meth:`spawn` starts one itself, and reports the
    failure under the right id). :meth:`close` (or leaving the ``with`` block) kills
    and reaps every process not handed out."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._ready: list[tuple[list[str], Node]] = []

    def spawn(self, node_id: str, argv: list[str]) -> Node:
        """A started node process of ``argv`` named ``node_id``."""
        node = None
        for i, (args, ready) in enumerate(self._ready):
            if args == argv:
                node = ready
                del self._ready[i]
                break
        if node is None:
            node = Node(node_id, argv)
        node.id = node_id
        while len(self._ready) < self.size:
            try:
                self._ready.append((list(argv), Node("(not started)", list(argv))))
            except NodeFailed:
                break
        return node

    def close(self) -> None:
        """Kill and reap every process not handed out."""
        while self._ready:
            self._ready.pop()[1].kill()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
