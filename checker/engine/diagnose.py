"""An exception raised inside a spec: finding where, and saying it in one line.

Engines run a spec's code in many places (this process, worker processes, Spark
executors), and an exception from it reaches the command line without the state it
was raised on. When a search ends with an exception that is not one of ordercheck's own
(:class:`~ordercheck.checker.api.errors.InputError`, :class:`~ordercheck.checker.api.errors.EngineError`...),
:func:`diagnose` searches the model again, breadth-first, in this process and without
reductions, calling each of the spec's hooks the engines call (``next_states``, the
properties, ``describe``, ``format_action``, and the reduction hooks the run used)
until one raises. Breadth-first order makes the trace to that state a shortest one.
The result, a :class:`SpecRaised`, names the spec, the hook, the action label and that
trace; the command line prints it as one line and exits with
:data:`~ordercheck.checker.api.result.EXIT_SPEC` (5).

The action label: the spec bases (:class:`ordercheck.specs.async_peers.AsyncPeerSpec`,
:class:`ordercheck.specs.holdback.HoldBackSpec`) tag an exception raised by a hook with the label
of the action being computed (:func:`~ordercheck.checker.api.spec_errors.tag_action`). For a spec's own ``next_states`` the
label is read from the innermost frame of the spec's code that holds a local variable
``label`` (or ``action``) with a label in it, so naming the label before computing the
successor (``label = ("pass", p); out.append((label, ...))``) is enough.

If the search again does not raise (within :data:`DIAGNOSIS_STATES` states), the
exception is not the spec's, or not reproducible: :func:`diagnose` returns the original
exception and it is raised as it was.

The search again keeps within a memory budget (:class:`~ordercheck.checker.engine.budget.MemoryBudget`,
the default limit and any address-space limit) and gives up, returning the original
exception, when it would pass it: it follows a run that failed, perhaps for want of
memory, and it must not be the one that runs out. (Under an address-space limit it once
filled what was left, and the interpreter, unable to create the MemoryError it had to
raise, overflowed its stack: SIGSEGV instead of a line and an exit code.)
"""

from __future__ import annotations

import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from ordercheck.checker.api.reductions import partial_order_of, symmetry_of
from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.spec import Property, Spec, State
from ordercheck.checker.api.spec_errors import (
    ACTION_ATTRIBUTE,
    SpecRaised,
    guard_os_exit,
    left_spec_code,
    left_text,
    source_of,
)

DIAGNOSIS_STATES = 500_000
"""At most this many states are searched again to find the state a spec raised on."""

DIAGNOSIS_SECONDS = 120.0
"""Nor for longer than this."""


def is_own_error(exc: BaseException) -> bool:
    """Whether ``exc`` is one of ordercheck's reports (bad input, an engine failure, a
    broken spec rule) or an interruption, which is never diagnosed.

    Not ordercheck's, so diagnosed: any other :class:`Exception`; a way out of the spec's
    code that is not an exception (``sys.exit``, ``os._exit`` under the command line's
    guard, a :class:`KeyboardInterrupt` that no Ctrl-C raised, any other
    :class:`BaseException`: :func:`~ordercheck.checker.api.spec_errors.left_spec_code`); and a worker
    process that ended by itself with an exit status in the middle of a search
    (:class:`ordercheck.checker.engine.shards.WorkerLost` with ``exited`` set: the spec may have
    called ``os._exit`` there). A worker killed by a signal (the out-of-memory killer)
    is not diagnosed."""
    from ordercheck.checker.api.errors import ConstantError, EngineError, InputError
    from ordercheck.checker.engine.bfs import SpecError

    if getattr(exc, "exited", False) and isinstance(exc, EngineError):
        return False
    if not isinstance(exc, Exception):
        return not left_spec_code(exc)
    return isinstance(exc, (InputError, EngineError, SpecError, ConstantError, SpecRaised, MemoryError, OSError))


def diagnose(
    model: Any,
    exc: BaseException,
    *,
    symmetry: bool = False,
    por: bool = False,
    max_states: int = DIAGNOSIS_STATES,
    seconds: float = DIAGNOSIS_SECONDS,
) -> BaseException:
    """A :class:`SpecRaised` for ``exc`` if searching ``model`` (a
    :class:`ordercheck.checker.loading.modelfile.Model`) again makes its spec raise; otherwise ``exc`` itself.

    ``symmetry`` and ``por`` say whether the failed run used those reductions, whose
    hooks are then called too.
    """
    if is_own_error(exc):
        return exc
    spec: Spec = model.spec
    try:
        with guard_os_exit():  # a spec's os._exit here is found, not the end of this process
            found = _search(spec, list(model.properties), symmetry, por, max_states, seconds)
    except MemoryError:  # the budget's bound, or an allocation that failed: not diagnosed
        return exc
    if found is None:
        if _left(exc):  # never let a spec's sys.exit(0) pass for a run's end
            return _not_found_again(model, exc)
        return exc
    hook, label, error, trace = found
    return SpecRaised(
        model.path, spec.name, _error_text(error), hook, _show(spec, label) if label is not None else None, trace,
        _where(spec, error),
    )


@contextmanager
def diagnosed(models: Sequence[Any]) -> Iterator[None]:
    """Turn an exception from a batch of ``models`` (e.g. a Spark job that failed
    because a spec raised on an executor) into the first model's :class:`SpecRaised`
    whose search reproduces one; otherwise let it through. A way out of the spec's code
    that is not an exception (``sys.exit`` in the driver...) is the first model's
    :class:`SpecRaised` even when no search reproduces it."""
    try:
        yield
    except BaseException as exc:
        from ordercheck.checker.api.errors import EngineError

        if isinstance(exc, EngineError) or not is_own_error(exc):
            for model in models:
                found = diagnose(model, _Unknown(str(exc)))
                if isinstance(found, SpecRaised):
                    raise found from None
            if _left(exc) and models:  # not found again: still the spec's, never a pass
                raise _not_found_again(models[0], exc) from None
        raise


def _left(exc: BaseException) -> bool:
    """Whether ``exc`` is a way out of the spec's code that is not an exception, in this
    process or reported by a worker (:class:`ordercheck.checker.engine.shards.SpecLeftWorker`)."""
    from ordercheck.checker.engine.shards import SpecLeftWorker

    return left_spec_code(exc) or isinstance(exc, SpecLeftWorker)


def _not_found_again(model: Any, exc: BaseException) -> SpecRaised:
    """The report for a way out of the spec's code (``sys.exit``...) that searching again
    did not reproduce: the spec's all the same, without a state."""
    spec: Spec = model.spec
    return SpecRaised(model.path, spec.name, _error_text(exc), "the spec's code", _label_text(spec, exc), None,
                      _where(spec, exc))


class _Unknown(Exception):
    """Stands for an exception raised elsewhere (an executor), to be diagnosed."""


# -- the search ---------------------------------------------------------------------------


def _search(
    spec: Spec, props: list[Property], symmetry: bool, por: bool, max_states: int, seconds: float
) -> tuple[str, tuple | None, BaseException, list[str]] | None:
    """Breadth-first until a hook raises: ``(hook, label, exception, trace)``; raises
    :class:`MemoryError` before it would pass its memory budget."""
    from ordercheck.checker.engine.budget import MemoryBudget, default_limit

    budget = MemoryBudget(default_limit())
    deadline = time.monotonic() + seconds
    format_action = rendering_of(spec).format_action
    actor = partial_order_of(spec).actor
    parent: dict[Any, tuple[Any, tuple | None]] = {}
    queue: deque = deque()

    def trace_to(state: State) -> list[str]:
        steps: list[str] = []
        while True:
            prev, label = parent[state]
            if prev is None:
                break
            steps.append(_show(spec, label))
            state = prev
        return list(reversed(steps))

    raised = _call(lambda: list(spec.init_states()))
    if isinstance(raised, _Raised):
        return "init_states", None, raised.exc, []
    for s in raised:
        if not _seen(spec, s, parent, "initial "):
            parent[s] = (None, None)
            queue.append(s)
            problem = _check_state(spec, s, props, symmetry, por)
            if problem is not None:
                return problem[0], problem[1], problem[2], []
    while queue and len(parent) < max_states and time.monotonic() < deadline:
        budget.check()
        s = queue.popleft()
        out = _call(lambda s=s: list(spec.next_states(s)))
        if isinstance(out, _Raised):
            return "next_states", _label_of(out.exc, spec), out.exc, trace_to(s)
        for label, t in out:
            shown = _call(lambda label=label: format_action(label))
            if isinstance(shown, _Raised):
                return "format_action", tuple(label), shown.exc, trace_to(s)
            if por:
                who = _call(lambda label=label: actor(label))
                if isinstance(who, _Raised):
                    return "actor", tuple(label), who.exc, trace_to(s)
            if _seen(spec, t, parent):
                continue
            parent[t] = (s, tuple(label))
            problem = _check_state(spec, t, props, symmetry, por)
            if problem is not None:
                hook, _none, error = problem
                return hook, tuple(label), error, trace_to(s)
            queue.append(t)
    return None


def _seen(spec: Spec, state: State, parent: dict[Any, Any], which: str = "") -> bool:
    """Whether ``state`` was found before; a state that cannot be hashed (a list inside
    it) breaks the spec API: :class:`~ordercheck.checker.api.errors.SpecError` naming the part, as
    the engines' own check of a state's vocabulary does (exit code 2), not a traceback."""
    try:
        return state in parent
    except TypeError:
        from ordercheck.checker.api.errors import SpecError
        from ordercheck.checker.engine.fingerprint import check_vocabulary

        problem = check_vocabulary(state) or f"state {state!r} cannot be hashed"
        raise SpecError(f"{spec.name}: {which}{problem}") from None


def _check_state(
    spec: Spec, state: State, props: list[Property], symmetry: bool, por: bool
) -> tuple[str, None, BaseException] | None:
    """Run on ``state`` every hook the engines run on a state: ``(hook, None, exc)``."""
    for prop in props:
        if prop.over == "history":
            h = _call(lambda: spec.history(state))
            if isinstance(h, _Raised):
                return "history", None, h.exc
            got = _call(lambda prop=prop, h=h: prop.check(h))
        else:
            got = _call(lambda prop=prop: prop.check(state))
        if isinstance(got, _Raised):
            return f"property {prop.name}", None, got.exc
    for hook, fn in (("describe", rendering_of(spec).describe), ("finished", spec.finished),
                     ("history_key", spec.history_key)):
        got = _call(lambda fn=fn: fn(state))
        if isinstance(got, _Raised):
            return hook, None, got.exc
    if symmetry:
        sym = symmetry_of(spec)
        for g in _declared(lambda: sym.symmetries()) or ():
            got = _call(lambda g=g: sym.permute(state, g))
            if isinstance(got, _Raised):
                return "permute", None, got.exc
    if por:
        po = partial_order_of(spec)
        for hook, fn in (("footprints", po.footprints), ("reduction_key", po.reduction_key)):
            got = _call(lambda fn=fn: fn(state))
            if isinstance(got, _Raised) and not isinstance(got.exc, NotImplementedError):
                return hook, None, got.exc
    return None


class _Raised:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _call(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except MemoryError:  # the machine's, not the spec's: ends the diagnosis
        raise
    except Exception as exc:  # the spec's exception, whatever it is
        return _Raised(exc)
    except BaseException as exc:  # sys.exit, os._exit (guarded), a KeyboardInterrupt of its own...
        if left_spec_code(exc):
            return _Raised(exc)
        raise  # ordercheck's interruption (a signal), a real Ctrl-C


def _declared(fn: Callable[[], Any]) -> Any:
    got = _call(fn)
    return None if isinstance(got, _Raised) else got


# -- presentation -----------------------------------------------------------------------


def _label_of(exc: BaseException, spec: Spec) -> tuple | None:
    """The label of the action being computed when ``exc`` was raised: the one a spec
    base recorded, or the innermost local ``label``/``action`` of the spec's frames."""
    tagged = getattr(exc, ACTION_ATTRIBUTE, None)
    if tagged is not None:
        return tagged
    files = _spec_files(type(spec))
    found = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if Path(frame.f_code.co_filename).resolve() in files:
            for name in ("label", "action"):
                value = frame.f_locals.get(name)
                if isinstance(value, tuple) and value and isinstance(value[0], str):
                    found = value
        tb = tb.tb_next
    return found


def _spec_files(cls: type) -> set[Path]:
    """The files of the spec's classes (its own and its bases'), outside ``checker``."""
    out = set()
    here = Path(__file__).resolve().parent
    for klass in cls.__mro__:
        src = source_of(klass)
        if src is not None and src.parent != here:
            out.add(src)
    return out


def _show(spec: Spec, label: tuple) -> str:
    try:
        return rendering_of(spec).format_action(label)
    except Exception:
        name, *args = label
        return f"{name}({', '.join(str(a) for a in args)})"


def _label_text(spec: Spec, exc: BaseException) -> str | None:
    label = _label_of(exc, spec)
    return _show(spec, label) if label is not None else None


def _error_text(exc: BaseException) -> str:
    if not isinstance(exc, Exception):
        return left_text(exc)
    if _left(exc):  # a worker's report of one: its text is the way out, e.g. SystemExit(0)
        return f"{exc} in a worker process"
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _where(spec: Spec, exc: BaseException) -> str | None:
    """``file:line`` of the innermost frame in the spec's code (its own file, its bases',
    or any file outside ordercheck's packages)."""
    files = _spec_files(type(spec))
    frames = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(frames):
        if Path(fr.filename).resolve() in files:
            return f"{Path(fr.filename).name}:{fr.lineno}"
    return None
