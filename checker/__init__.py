"""ordercheck's engine, and the small public API specs are written against.

Specs import only what this module exports: :class:`Spec`, :class:`Property`,
:class:`Constant`, :class:`ConstantError` for rejecting a bad constant,
:class:`Fields` for naming the items of state tuples, and :func:`tag_action` for naming
the action a hook raised in.
"""

from checker.errors import ConstantError, InputError
from checker.fields import Fields, Record
from checker.spec import Action, Constant, Property, Spec, State
from checker.spec_errors import tag_action

__all__ = [
    "Action", "Constant", "ConstantError", "Fields", "InputError", "Property", "Record", "Spec", "State", "tag_action",
]
__version__ = "0.1.0"
