"""ordercheck: the small public API specs are written against.

Specs import only what this module exports: :class:`Spec` (the model), :class:`Property`,
:class:`Constant`, :class:`ConstantError` for rejecting a bad constant,
:class:`Fields` for naming the items of state tuples, :func:`tag_action` for naming
the action a hook raised in, and the optional protocols a spec inherits to opt in:
:class:`Symmetry` and :class:`PartialOrder` (reductions) and :class:`Rendering` (how
states and actions are shown). It imports the API layer (:mod:`ordercheck.checker.api`) and nothing
else, so importing a spec never loads the engine. The layers below and above are
described in docs/explanation/architecture.md.
"""

from ordercheck._version import __version__ as __version__  # one version: the distribution's
from ordercheck.checker.api.errors import ConstantError, InputError
from ordercheck.checker.api.fields import Fields, Record
from ordercheck.checker.api.reductions import PartialOrder, Symmetry
from ordercheck.checker.api.rendering import Rendering
from ordercheck.checker.api.spec import Action, Constant, Property, Spec, State
from ordercheck.checker.api.spec_errors import tag_action

__all__ = [
    "Action", "Constant", "ConstantError", "Fields", "InputError", "PartialOrder", "Property", "Record", "Rendering",
    "Spec", "State", "Symmetry", "tag_action",
]
