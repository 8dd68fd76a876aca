"""Stopping a run on SIGINT or SIGTERM.

The command line installs :func:`handling_signals` around a command. A signal then
raises :class:`Interrupted` at once, so the search unwinds through its ``finally``
blocks: worker processes are stopped and joined, temporary files removed, and a
checkpoint written when one was asked for (:mod:`ordercheck.checker.engine.levels`). The command line
prints how to resume and exits with the conventional code, 128 plus the signal's
number (130 for SIGINT, 143 for SIGTERM).

Where an exception at an arbitrary point would leave a protocol half-done (a message
half-written to a worker's pipe), the search runs in :func:`deferred` mode: a signal
is only recorded there, and the search calls :func:`poll` where stopping is safe (after
each unit of work, a few milliseconds apart). A second signal in deferred mode raises
at once.

A step that never returns (spec code in an endless loop) would never reach
:func:`poll`: a *watchdog* covers it. A first signal in deferred mode, and the time
limit of a search that watches it (:func:`watch`), start a timer of
:func:`stop_grace` seconds (``ORDERCHECK_STOP_GRACE``, 3 by default); if the search has
not stopped by then, the timer sends SIGINT to the main thread, whose handler raises
:class:`Interrupted` (with :attr:`Interrupted.stuck` saying where the code was) or
:class:`StepTimeUp` in the code it interrupts (pure-Python code is interruptible that
way; a message half-written to a pipe is left to finish first). If even that does not
end the run within two more grace periods (the main thread blocked in a call that
retries past signals), the watchdog prints the interrupted line itself, kills the worker processes and what
:func:`at_hard_exit` registered (Spark's JVM), and ends the process with the signal's
exit code. C code that holds the interpreter and never returns to it lets no Python
code run, the watchdog's included: only SIGKILL ends that.

Worker processes call :func:`worker_signals`: they ignore SIGINT (a Ctrl-C reaches the
whole process group, and the parent decides) and die on SIGTERM. They exit on their
own when their parent dies, SIGKILL included, because they read from a pipe whose
only writer was the parent: the read ends with end-of-file (see :mod:`ordercheck.checker.engine.shards`).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from ordercheck.checker.api.errors import InputError

SIGNALS = (signal.SIGINT, signal.SIGTERM)

GRACE_ENV = "ORDERCHECK_STOP_GRACE"
"""The environment variable that sets :func:`stop_grace` (seconds)."""

DEFAULT_GRACE = 3.0
"""Seconds a search has to stop by itself after a signal or its time limit before the
watchdog interrupts the step it is in (and before a worker that does not answer the
stop is killed)."""


def seconds_from_env(name: str, default: float) -> float:
    """The number of seconds environment variable ``name`` gives (``default`` when it is
    unset or empty); anything but a finite number above 0 is bad input
    (:class:`~ordercheck.checker.api.errors.InputError`)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"environment variable {name}", "", f"{raw!r} is not a number of seconds above 0")
    return value


def stop_grace() -> float:
    """Seconds a search has to stop by itself once asked (:data:`DEFAULT_GRACE`, or
    ``ORDERCHECK_STOP_GRACE``)."""
    return seconds_from_env(GRACE_ENV, DEFAULT_GRACE)


class Interrupted(BaseException):
    """The run received SIGINT or SIGTERM (a :class:`BaseException`, like
    :class:`KeyboardInterrupt`, so that no ``except Exception`` swallows it). Never the
    spec's (:func:`ordercheck.checker.api.spec_errors.left_spec_code`)."""

    ordercheck_signal = True  # ordercheck.checker.api.spec_errors.ORDERCHECK_SIGNAL

    def __init__(self, signum: int, safe: bool = False, stuck: str | None = None) -> None:
        self.signum = int(signum)
        self.safe = safe  # raised by poll(), where the search's state is consistent
        self.checkpoint: str | None = None  # where the search saved its progress, if it did
        self.stuck = stuck  # what the watchdog interrupted (a step that did not return), if it did
        super().__init__(self.name)

    @property
    def name(self) -> str:
        """``SIGINT`` or ``SIGTERM``."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """128 plus the signal's number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


class StepTimeUp(BaseException):
    """The watchdog interrupted a step that ran past the search's time limit and its
    grace (:func:`watch`): the search stops as at its time limit (exit code 3). A
    :class:`BaseException`, never the spec's, like :class:`Interrupted`."""

    ordercheck_signal = True  # ordercheck.checker.api.spec_errors.ORDERCHECK_SIGNAL

    def __init__(self, stuck: str, grace: float) -> None:
        self.stuck = stuck
        self.grace = grace
        super().__init__(f"the time limit passed while {stuck} was running; it was interrupted "
                         f"{grace:g} s later")


_received: int | None = None
_deferring = 0
_raised = False  # the signal received went up as Interrupted
_forcing: str | None = None  # "signal" or "time": the next SIGINT is the watchdog's
_timer: threading.Timer | None = None
_deadline_timer: threading.Timer | None = None
_grace = DEFAULT_GRACE
_note: str | None = None
_hard_exit: list[Callable[[], None]] = []
_protected = 0
_cancel_hooks: list[Callable[[], None]] = []
_force_hooks: list[Callable[[], None]] = []
_waits: list[str] = []  # what the cancelling blocks wait on, innermost last


_OWN = str(Path(__file__).resolve().parents[1])  # the checker package
_LIBRARIES = tuple(sorted({p for k in ("stdlib", "platstdlib", "purelib", "platlib", "scripts")
                           if (p := sysconfig.get_paths().get(k))}))
_PIPES = ("multiprocessing/connection.py", "multiprocessing\\connection.py")


def _quietly(hook: Callable[[], None]) -> None:
    """Run a cancelling hook in its thread; its failure leaves the stop to the watchdog."""
    try:
        hook()
    except Exception:  # noqa: S110 - the stop goes on (the watchdog follows)
        pass


def _handler(signum: int, frame: FrameType | None) -> None:
    global _received, _raised, _forcing
    forcing = _forcing
    if forcing is not None and installed():
        if (forcing == "signal" and _raised) or (forcing == "time" and _deadline_timer is None):
            _forcing = None  # the search stopped by itself meanwhile
            return
        if _protected or _writing(frame):  # a message half-written to a pipe, Spark's JVM starting: later
            _forcing = None
            _start_timer(0.2, forcing)
            return
        _forcing = None
        _raised = True
        stuck = where(frame)
        if _waits and not stuck.startswith("the spec's code"):  # not a step: the wait on others
            stuck = _waits[-1]
        if forcing == "time":
            raise StepTimeUp(stuck, _grace)
        raise Interrupted(_received or signum, stuck=stuck)
    if _deferring and _received is None:
        _received = signum
        _start_timer(_grace, "signal")
        for cancel in list(_cancel_hooks):  # in a thread: a handler must not wait
            threading.Thread(target=_quietly, args=(cancel,), daemon=True).start()
        return
    _received = signum
    _raised = True
    raise Interrupted(signum)


def where(frame: FrameType | None) -> str:
    """The code a frame of the main thread is running, for the interrupted line: the
    innermost frame of the spec's code (neither ordercheck's nor the standard library's
    nor an installed package's), as ``the spec's code, FUNCTION (FILE:LINE)``, with the
    outermost such function, the hook, when it differs; else the innermost frame
    (ordercheck's, or a library's it waits in), or :data:`WAITING_FOR_SPARK` when no
    spec code is running and the main thread is in PySpark's or Py4J's code."""
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    spec = [f for f in frames if _spec_file(f.f_code.co_filename)]
    if not spec:
        if any(_SPARK in f.f_code.co_filename or _PY4J in f.f_code.co_filename for f in frames):
            return WAITING_FOR_SPARK
        return _at(frames[0]) if frames else "ordercheck's own code"
    inner, hook = spec[0], spec[-1]
    text = f"the spec's code, {_at(inner)}"
    if hook is not inner:
        text += f", called from {hook.f_code.co_name}"
    return text


WAITING_FOR_SPARK = "waiting for Spark's jobs"
"""What :func:`where` says of a main thread in PySpark's or Py4J's code (a job, or a call to the JVM)."""
_SPARK, _PY4J = f"{os.sep}pyspark{os.sep}", f"{os.sep}py4j{os.sep}"


def _spec_file(name: str) -> bool:
    """Whether code of file ``name`` may be a spec's: not ordercheck's, not the standard
    library's, an installed package's or an installed script's (``ordercheck`` itself), not generated."""
    if name.startswith(_OWN) or name.startswith("<"):
        return False
    return not any(name.startswith(lib) for lib in _LIBRARIES)


def _at(frame: FrameType) -> str:
    return f"{frame.f_code.co_name} ({Path(frame.f_code.co_filename).name}:{frame.f_lineno})"


def _writing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.endswith(_PIPES):
            return True
        frame = frame.f_back
    return False


def _start_timer(seconds: float, kind: str) -> None:
    global _timer
    if _timer is not None:
        _timer.cancel()
    _timer = threading.Timer(seconds, _fire, args=(kind, time.monotonic() + seconds + 2 * _grace))
    _timer.daemon = True
    _timer.start()


def _fire(kind: str, hard_at: float) -> None:
    """The watchdog's timer: interrupt the main thread, unless the search stopped."""
    global _forcing
    if not installed() or (kind == "signal" and _raised) or (kind == "time" and _deadline_timer is None):
        return
    if _forcing is None:
        _forcing = kind
        if kind == "signal":  # what the cancelled work waits on ends first (Spark's JVM)
            for force in list(_force_hooks):
                _quietly(force)
        try:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        except (OSError, ValueError):  # pragma: no cover - the main thread is gone
            return
    while time.monotonic() < hard_at or _protected:  # the handler runs at the main thread's next bytecode
        time.sleep(0.05)
        if _forcing is None or not installed():
            return
    _end_hard(kind)


def _end_hard(kind: str) -> None:
    """The main thread never ran the handler (blocked in a call that retries past
    signals): end the process here, with the signal's exit code (3 at the time limit)."""
    line = (f"ordercheck: interrupted by {signal.Signals(_received or signal.SIGINT).name}; " if kind == "signal"
            else "ordercheck: the time limit passed; ")
    line += (f"the main thread did not stop within {3 * _grace:g} s (blocked in code that does not "
             "return to Python) and the process was ended; nothing more was saved")
    for hook in list(_hard_exit):
        try:
            hook()
        except Exception:  # noqa: S110 - ending anyway
            pass
    try:
        import multiprocessing

        for child in multiprocessing.active_children():
            child.kill()
    except Exception:  # noqa: S110 - ending anyway
        pass
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    import posix

    posix._exit(128 + (_received or signal.SIGINT) if kind == "signal" else 3)


def at_hard_exit(hook: Callable[[], None]) -> None:
    """Run ``hook`` (which must not block) before the watchdog ends the process itself."""
    if hook not in _hard_exit:
        _hard_exit.append(hook)


def watch(deadline: float | None) -> None:
    """Watch a search's time limit (a :func:`time.monotonic` ``deadline``; ``None``:
    none): past ``deadline`` plus :func:`stop_grace` seconds the watchdog interrupts the
    step in hand with :class:`StepTimeUp`, unless :func:`unwatch` came first. Reads the
    grace (bad input when ``ORDERCHECK_STOP_GRACE`` is not a number of seconds)."""
    global _grace, _deadline_timer
    _grace = stop_grace()
    unwatch()
    if deadline is None or not installed():
        return
    seconds = max(deadline - time.monotonic(), 0.0) + _grace
    timer = threading.Timer(seconds, _fire, args=("time", time.monotonic() + seconds + 2 * _grace))
    timer.daemon = True
    _deadline_timer = timer
    timer.start()


def unwatch() -> None:
    """The search stopped (or ended): no more :class:`StepTimeUp`."""
    global _deadline_timer, _forcing
    timer, _deadline_timer = _deadline_timer, None
    if timer is not None:
        timer.cancel()
    if _forcing == "time":
        _forcing = None


def note(text: str) -> None:
    """Say what the stop had to interrupt or kill (a worker that did not answer), for
    the interrupted line (:func:`noted`)."""
    global _note
    if _note is None:
        _note = text


def noted() -> str | None:
    """What :func:`note` recorded since the signals were installed."""
    return _note


@contextmanager
def handling_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` inside the block (main thread
    only; elsewhere the block runs unchanged). The previous handlers come back after."""
    global _received, _deferring, _raised, _forcing, _note, _grace
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    _received, _deferring, _raised, _forcing, _note = None, 0, False, None, None
    try:
        _grace = stop_grace()
    except InputError:  # reported where a search reads it (watch)
        _grace = DEFAULT_GRACE
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        _stop_timers()
        for s, h in previous.items():
            signal.signal(s, h)
        _received, _deferring, _raised, _forcing, _note = None, 0, False, None, None


def _stop_timers() -> None:
    global _timer
    unwatch()
    timer, _timer = _timer, None
    if timer is not None:
        timer.cancel()


def installed() -> bool:
    """Whether :func:`handling_signals` is in force."""
    return signal.getsignal(signal.SIGTERM) is _handler


@contextmanager
def deferred() -> Iterator[None]:
    """Inside the block a first signal is only recorded, for :func:`poll` to raise."""
    defer()
    try:
        yield
    finally:
        undefer()
    poll()


@contextmanager
def cancelling(cancel: Callable[[], None], force: Callable[[], None] | None = None,
               waiting: str = "waiting for the work cancelled") -> Iterator[None]:
    """Deferred mode for work that waits on others (Spark's jobs): a first signal inside
    the block is recorded and ``cancel()`` runs in a thread of its own to end the work
    waited for; whatever then ends the block (the cancelled job's error) becomes the
    signal's :class:`Interrupted`. If the block does not end within the grace, the
    watchdog calls ``force()`` (which must not block: it kills what the block waits
    on, Spark's JVM) and then interrupts the block; unless it interrupts the spec's
    code there, :attr:`Interrupted.stuck` is ``waiting`` (see :data:`WAITING_FOR_SPARK`)."""
    defer()
    _cancel_hooks.append(cancel)
    _waits.append(waiting)
    if force is not None:
        _force_hooks.append(force)
    try:
        yield
    except BaseException as exc:
        if _received is not None and installed() and not isinstance(exc, Interrupted):
            global _raised
            _raised = True  # the stop goes on (stop_spark): the watchdog has nothing more to interrupt
            raise Interrupted(_received, safe=True) from None
        raise
    finally:
        _cancel_hooks.remove(cancel)
        _waits.remove(waiting)
        if force is not None:
            _force_hooks.remove(force)
        undefer()
    poll()


@contextmanager
def protected() -> Iterator[None]:
    """Inside the block the watchdog waits (it interrupts nothing): for work that must
    not be cut in the middle, such as starting Spark's JVM, which could not be stopped
    before its context is known."""
    global _protected
    _protected += 1
    try:
        yield
    finally:
        _protected -= 1


def reinstall() -> None:
    """Put SIGINT's handler back where a library replaced it (PySpark's context does)."""
    if installed():
        signal.signal(signal.SIGINT, _handler)


def defer() -> None:
    """Enter deferred mode (see :func:`deferred`); pair with :func:`undefer`."""
    global _deferring
    _deferring += 1


def undefer() -> None:
    """Leave deferred mode."""
    global _deferring
    _deferring = max(_deferring - 1, 0)


def poll() -> None:
    """Raise :class:`Interrupted` if a signal arrived while deferred."""
    global _raised
    if _received is not None and installed():
        _raised = True
        raise Interrupted(_received, safe=True)


def pending() -> int | None:
    """The signal received and not yet raised, if any."""
    return _received if installed() else None


def worker_signals() -> None:
    """In a forked worker: ignore SIGINT, die on SIGTERM (undo the parent's handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
