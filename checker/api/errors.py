"""Errors the command line turns into one clear line and exit code 2."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: an unreadable model file, an unknown spec or property, a bad constant.

    ``where`` names the file, ``field`` the dotted field inside it (may be empty), and the
    message says what is wrong and, where possible, what to do about it.
    """

    def __init__(self, where: str, field: str, message: str) -> None:
        self.where = where
        self.field = field
        self.message = message
        super().__init__(self.line())

    def line(self) -> str:
        parts = [self.where]
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


class ConstantError(ValueError):
    """A constant value a spec cannot take; the loader adds the file and field."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        self.message = message
        super().__init__(f"{name}: {message}")


class EngineError(Exception):
    """An engine failed for good while searching (e.g. a Spark job that failed after its
    retries). The command line prints ``line()`` and exits with code 4."""

    def __init__(self, engine: str, message: str) -> None:
        self.engine = engine
        self.message = message
        super().__init__(self.line())

    def line(self) -> str:
        return f"{self.engine}: {self.message}"


class SpecError(RuntimeError):
    """The spec broke a rule of the spec API (e.g. a state holding a string, or a
    ``reduction_key`` that does not decide what it claims). The command line prints it
    as one line naming the spec, with exit code 2."""


class HookError(TypeError):
    """A spec class defines a hook of an optional protocol (symmetry, partial-order
    reduction, rendering) without inheriting the protocol's mixin; raised when the class
    is defined, so loading its file fails with this one line (exit code 2)."""
