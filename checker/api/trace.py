"""Rebuilding traces by replaying recorded action positions through a spec."""

from __future__ import annotations

from collections.abc import Sequence

from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.result import Step
from ordercheck.checker.api.spec import Spec, State


class ReplayError(RuntimeError):
    """A recorded path does not replay: the spec's action order is not deterministic."""


def replay(spec: Spec, init_index: int, actions: Sequence[int]) -> list[tuple[tuple | None, int, State]]:
    """The ``(label, position, state)`` triples of a path, the first with label None."""
    inits = list(spec.init_states())
    if not 0 <= init_index < len(inits):
        raise ReplayError(f"{spec.name}: no initial state number {init_index}")
    state = inits[init_index]
    out: list[tuple[tuple | None, int, State]] = [(None, init_index, state)]
    for depth, pos in enumerate(actions):
        succ = list(spec.next_states(state))
        if not 0 <= pos < len(succ):
            raise ReplayError(
                f"{spec.name}: step {depth + 1} takes action {pos} but only {len(succ)} are "
                "enabled; next_states must list actions in a deterministic order"
            )
        label, state = succ[pos]
        out.append((label, pos, state))
    return out


def to_steps(spec: Spec, path: list[tuple[tuple | None, int, State]]) -> list[Step]:
    """Steps for a trace record: formatted action, label and described state."""
    shown = rendering_of(spec)
    steps = []
    for label, pos, state in path:
        steps.append(
            Step(
                action=None if label is None else shown.format_action(label),
                label=None if label is None else list(label),
                state=shown.describe(state),
                index=pos,
            )
        )
    return steps

