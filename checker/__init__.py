"""ordercheck's engine, and the small public API specs are written against.

Specs import only what this module exports: :class:`Spec`, :class:`Property`,
:class:`Constant`, and :class:`ConstantError` for rejecting a bad constant.
"""

from checker.errors import ConstantError, InputError
from checker.spec import Action, Constant, Property, Spec, State

__all__ = ["Action", "Constant", "ConstantError", "InputError", "Property", "Spec", "State"]
__version__ = "0.1.0"
