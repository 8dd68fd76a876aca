"""ordercheck: the small public API specs are written against.

Specs import only what this module exports: :class:`Spec`, :class:`Property`,
:class:`Constant`, and :class:`ConstantError` for rejecting a bad constant. It imports
the API layer (:mod:`checker.api`) and nothing else, so importing a spec never loads
the engine. The layers below and above are described in docs/explanation/architecture.md.
"""

from checker.api.errors import ConstantError, InputError
from checker.api.spec import Action, Constant, Property, Spec, State

__all__ = ["Action", "Constant", "ConstantError", "InputError", "Property", "Spec", "State"]
__version__ = "0.1.0"
