"""Exceptions raised inside a spec: the report (:class:`SpecRaised`) and the tag a spec
base puts on an exception to name the action it was computing (:func:`tag_action`).

The engine finds the state such an exception was raised on
(:mod:`ordercheck.checker.engine.diagnose`); the command line prints :meth:`SpecRaised.line` and
exits with :data:`~ordercheck.checker.api.result.EXIT_SPEC` (5).
"""

from __future__ import annotations

import inspect
import os
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ACTION_ATTRIBUTE = "ordercheck_action"
"""The attribute :func:`tag_action` sets on an exception: the label being computed."""


class SpecRaised(Exception):
    """A spec's code raised an exception. ``line()`` is the one line the command line
    prints: the model, the spec, the exception, the hook and action, and the shortest
    trace to the state the action was taken from."""

    def __init__(
        self,
        model: str,
        spec: str,
        error: str,
        hook: str,
        label: str | None,
        trace: Sequence[str] | None,
        where: str | None = None,
    ) -> None:
        self.model = model
        self.spec = spec
        self.error = error
        self.hook = hook
        self.label = label
        self.trace = list(trace) if trace is not None else None
        self.where = where
        super().__init__(self.line())

    def line(self) -> str:
        at = f" at {self.where}" if self.where else ""
        what = f"in action {self.label} ({self.hook})" if self.label else f"in {self.hook}"
        if self.hook in LOADING_HOOKS:  # no state yet: the spec's module or constructor
            return f"{self.model}: spec {self.spec} raised {self.error}{at} {self.hook}"
        if self.trace is None:
            path = "; the state was not found again (search it with `ordercheck simulate`)"
        elif not self.trace:
            path = ", taken from an initial state"
        else:
            n = len(self.trace)
            path = f", taken from the state after {n} step{'s' if n != 1 else ''}: " + "; ".join(self.trace)
        return f"{self.model}: spec {self.spec} raised {self.error}{at} {what}{path}"


LOADING_HOOKS = ("at import", "while the model was loaded")
"""The :attr:`SpecRaised.hook` of a spec's code that left before any search: its
module's import, and the rest of loading the model (the constructor, ``properties``)."""


def spec_left_loading(model: str, spec: str, exc: BaseException) -> SpecRaised:
    """The report for spec code that left (:func:`left_spec_code`), or raised an
    exception in the spec's constructor (its ``setup``) or ``properties``, while
    ``model`` was loaded: ``at import`` when the spec's module was being imported, else
    ``while the model was loaded``; ``spec`` is what the model's ``spec`` field says."""
    frames = traceback.extract_tb(exc.__traceback__)
    importing = any(fr.filename.startswith("<frozen importlib") for fr in frames)
    ours = Path(__file__).resolve().parent.parent
    where = None
    for fr in reversed(frames):
        path = Path(fr.filename)
        if fr.filename.startswith("<") or ours in path.resolve().parents:
            continue
        where = f"{path.name}:{fr.lineno}"
        break
    return SpecRaised(model, spec, left_text(exc), LOADING_HOOKS[0] if importing else LOADING_HOOKS[1], None, [], where)


def tag_action(exc: BaseException, label: tuple) -> BaseException:
    """Record on ``exc`` (once: the innermost label wins) the label of the action whose
    successor was being computed when it was raised; returns ``exc``.

    A spec base calls it in an ``except`` clause around a hook, then re-raises::

        try:
            after = self.on_send(state, p, mid, dmask)
        except Exception as exc:
            tag_action(exc, ("send", p, mid, dmask))
            raise
    """
    if getattr(exc, ACTION_ATTRIBUTE, None) is None:
        try:
            setattr(exc, ACTION_ATTRIBUTE, tuple(label))
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            pass
    return exc


def source_of(cls: type) -> Path | None:
    """The file that defines ``cls``, or ``None``."""
    try:
        found = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    return Path(found).resolve() if found else None


# -- the ways out of a spec's code that are not exceptions --------------------------------

ORDERCHECK_SIGNAL = "ordercheck_signal"
"""A class attribute, true on ordercheck's own :class:`BaseException` for SIGINT and
SIGTERM (:class:`ordercheck.checker.engine.interrupts.Interrupted`): that one is never the spec's."""


class SpecExited(BaseException):
    """Spec code called :func:`os._exit` in the main process while :func:`guard_os_exit`
    was in force: raised instead of ending the process, so that the run ends with the
    spec's error (exit code 5) rather than with whatever status the spec chose."""

    def __init__(self, code: object) -> None:
        self.code = code
        super().__init__(f"os._exit({code!r})")

    def __str__(self) -> str:
        return f"os._exit({self.code!r}) called"


def left_spec_code(exc: BaseException) -> bool:
    """Whether ``exc``, an exception that is not an :class:`Exception`, is a way a spec's
    code left that the spec chose: :class:`SystemExit` (``sys.exit``), :class:`SpecExited`
    (``os._exit``), :class:`GeneratorExit` or any other :class:`BaseException` subclass,
    and :class:`KeyboardInterrupt` unless it may be a real Ctrl-C (SIGINT's handler is
    Python's default one, which raises it; under the command line SIGINT raises
    ordercheck's own interruption instead, and worker processes ignore SIGINT).
    ordercheck's own interruption (:data:`ORDERCHECK_SIGNAL`) and :class:`MemoryError`
    are never the spec's; nor is an :class:`Exception` (those are diagnosed as always)."""
    if isinstance(exc, Exception) or getattr(exc, ORDERCHECK_SIGNAL, False):
        return False
    if isinstance(exc, KeyboardInterrupt):
        import signal

        try:
            return signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        except (ValueError, OSError):  # pragma: no cover - no signal support here
            return False
    return True


def left_text(exc: BaseException) -> str:
    """How a spec's code left, for a :class:`SpecRaised` line: ``SystemExit(0)``,
    ``KeyboardInterrupt``, ``os._exit(0) called``, ``MyStop: why``."""
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) (sys.exit)"
    if isinstance(exc, SpecExited):
        return str(exc)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_guard_pid: int | None = None


@contextmanager
def guard_os_exit() -> Iterator[None]:
    """Inside the block, :func:`os._exit` called in this process raises
    :class:`SpecExited` instead of ending the process (a process forked inside the block,
    a worker, still ends as asked: the guard holds for this process's id only). The
    command line holds it around a whole command: ordercheck itself never calls
    ``os._exit`` in its main process, so a call there is a spec's, and it becomes exit
    code 5 with the spec's line instead of an exit status the spec chose (0 would be a
    false pass). Code that calls ``posix._exit`` directly is not caught."""
    global _guard_pid
    if _guard_pid is not None:  # already guarded (a command inside a command, a test)
        yield
        return
    real = os._exit

    def guarded(code: int) -> None:  # type: ignore[misc]
        if os.getpid() == _guard_pid:
            raise SpecExited(code)
        real(code)

    _guard_pid = os.getpid()
    os._exit = guarded  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real
        _guard_pid = None
