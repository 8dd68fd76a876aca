"""The spec is the model; reductions and rendering are optional protocols (mixins).

A spec opts into :class:`ordercheck.checker.Symmetry`, :class:`ordercheck.checker.PartialOrder` or
:class:`ordercheck.checker.Rendering` by inheriting it, and the engine, reports and tools reach the
hooks through one accessor per protocol. A spec written against the older API, with
such a hook defined on a plain ``Spec`` subclass, is refused when its class is defined
(one line, exit code 2 from the command line), never run with the hook ignored.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ordercheck.checker import Constant, Fields, PartialOrder, Property, Rendering, Spec, Symmetry
from ordercheck.checker.api.errors import HookError
from ordercheck.checker.api.reductions import PARTIAL_ORDER_HOOKS, SYMMETRY_HOOKS, partial_order_of, symmetry_of
from ordercheck.checker.api.rendering import RENDERING_HOOKS, rendering_of
from ordercheck.checker.api.trace import replay, to_steps
from ordercheck.checker.engine.reduce import plan
from ordercheck.specs.base import PeerSpec
from tests.toyspecs import Grid

PROTOCOLS = {"Symmetry": (Symmetry, SYMMETRY_HOOKS), "PartialOrder": (PartialOrder, PARTIAL_ORDER_HOOKS),
             "Rendering": (Rendering, RENDERING_HOOKS)}
EVERY_HOOK = [(public, hook) for public, (_mixin, hooks) in PROTOCOLS.items() for hook in hooks]


def test_spec_itself_has_no_hook_of_a_protocol() -> None:
    """The model class carries none of the protocols' hooks (so none can be half
    declared on it), and every hook belongs to exactly one protocol."""
    hooks = [hook for _public, hook in EVERY_HOOK]
    assert len(hooks) == len(set(hooks))
    assert not [h for h in hooks if hasattr(Spec, h)]
    for mixin, names in PROTOCOLS.values():
        assert all(callable(getattr(mixin, h)) for h in names)


@pytest.mark.parametrize(("public", "hook"), EVERY_HOOK)
def test_a_hook_on_a_spec_without_its_protocol_is_refused(public: str, hook: str) -> None:
    """Each hook, defined the old way on a plain ``Spec`` subclass, is refused when the
    class is defined, naming the mixin to inherit; with the mixin it is accepted."""
    with pytest.raises(HookError) as err:
        type("Old", (Spec,), {"name": "old", hook: lambda self, *a: None})
    line = str(err.value)
    assert "\n" not in line
    assert f"defines {hook}, a hook of ordercheck.{public}" in line
    assert f"write class Old(Spec, {public})" in line and f"from ordercheck import {public}" in line
    mixin = PROTOCOLS[public][0]
    accepted = type("New", (Spec, mixin), {"name": "new", hook: lambda self, *a: None})
    assert issubclass(accepted, mixin)


def test_a_hook_inherited_from_a_helper_class_or_on_a_peer_base_is_refused_too() -> None:
    """A hook reaching the class through a base other than the protocol counts as
    declared; a subclass of a built-in base that lacks the protocol (``PeerSpec`` has no
    symmetry) is told to add it beside its base."""

    class Helper:
        def permute(self, state, perm):
            return state

    with pytest.raises(HookError, match=r"defines permute, a hook of ordercheck\.Symmetry"):
        type("Mixed", (Spec, Helper), {"name": "mixed"})
    with pytest.raises(HookError) as err:
        type("Peers", (PeerSpec,), {"name": "peers", "symmetries": lambda self: [(1, 0)]})
    assert "write class Peers(PeerSpec, Symmetry)" in str(err.value)
    # PeerSpec itself declares partial-order and rendering hooks, so its subclasses may override them.
    type("Peers", (PeerSpec,), {"name": "peers", "footprints": lambda self, s: [], "describe": lambda self, s: {}})


OLD_STYLE = '''
from ordercheck.checker import Property, Spec


class Old(Spec):
    name = "old"

    def init_states(self):
        return [(0, 0)]

    def next_states(self, state):
        return [(("step", 0), (1, 0))] if state == (0, 0) else []

    def properties(self):
        return [Property.always("small", lambda s: None)]

    def symmetries(self):
        return [(1, 0)]

    def permute(self, state, perm):
        return (state[1], state[0])

    def format_action(self, action):
        return f"process {action[1]} steps"
'''


def test_an_old_style_spec_file_is_refused_at_load_with_one_line(tmp_path: Path) -> None:
    """``ordercheck check`` of a model whose spec file overrides ``symmetries`` and
    ``format_action`` on a plain ``Spec``: exit code 2, one line naming the file and
    the mixins to inherit, no traceback and no verdict."""
    (tmp_path / "old.py").write_text(textwrap.dedent(OLD_STYLE), encoding="utf-8")
    (tmp_path / "old.toml").write_text('spec = "old.py"\n[check]\nproperties = ["small"]\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ordercheck.checker.cli", "check", str(tmp_path / "old.toml")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "holds" not in run.stdout
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, run.stderr
    (line,) = lines
    assert "old.py" in line
    assert "symmetries, permute, format_action" in line
    assert "ordercheck.Symmetry and ordercheck.Rendering" in line and "class Old(Spec, Symmetry, Rendering)" in line


class Pair(Grid):
    """toyspecs' two counters, to 1, with named fields; the model alone (no protocol)."""

    name = "pair"
    constants = (Constant("n", int, 1),)
    fields = Fields("a", "b")

    def properties(self):
        return [Property.always("small", lambda s: None)]


class ShownPair(Pair, Rendering):
    def format_action(self, action):
        return f"process {action[0]} steps"

    def describe(self, state):
        return {"sum": state[0] + state[1]}


class SymmetricPair(Pair, Symmetry):
    def symmetries(self):
        return [(1, 0)]

    def permute(self, state, perm):
        return (state[1], state[0])


def test_rendering_is_the_spec_s_own_or_the_default() -> None:
    """Traces use a spec's own rendering when it inherits the protocol, and the
    defaults (fields by name, ``name(args)``) when it does not."""
    for spec, action, state in ((Pair(), "x()", {"a": 1, "b": 0}), (ShownPair(), "process x steps", {"sum": 1})):
        steps = to_steps(spec, replay(spec, 0, [0]))
        assert (steps[1].action, steps[1].state) == (action, state)
    plain = Pair()
    assert rendering_of(plain) is not plain and rendering_of(ShownPair()).format_action(("y",)) == "process y steps"
    assert rendering_of(plain).action_site(("step", 0)) is None and rendering_of(plain).internal_messages(("s",)) == ()


def test_reductions_are_the_spec_s_own_or_none() -> None:
    """The search plans symmetry from a spec that inherits :class:`Symmetry`; a spec
    without it, or without :class:`PartialOrder`, gets no reduction and the note why."""
    red, notes = plan(SymmetricPair(), [], symmetry=True, por=True)
    assert red.group == ((1, 0),) and not red.por
    assert notes == ["partial-order reduction: pair declares no footprints; not applied"]
    red, notes = plan(Pair(), [], symmetry=True, por=True)
    assert red.group == () and not red.por
    assert notes == ["symmetry: this pair configuration has no interchangeable processes; not applied",
                     "partial-order reduction: pair declares no footprints; not applied"]
    spec = SymmetricPair()
    assert symmetry_of(spec) is spec and partial_order_of(spec) is not spec
    assert partial_order_of(spec).next_states_of((0, 0), 0b11) == []  # no actor: nothing is any process's
