"""The API layer: what specs, reports and the TLA+ export are written against.

The spec API (:mod:`~ordercheck.checker.api.spec`, the optional protocols
:mod:`~ordercheck.checker.api.reductions` and :mod:`~ordercheck.checker.api.rendering`, and
:mod:`~ordercheck.checker.api.errors`, re-exported by :mod:`ordercheck.checker`), the loaded model
(:mod:`~ordercheck.checker.api.model`), the result record (:mod:`~ordercheck.checker.api.result`) and trace
replay (:mod:`~ordercheck.checker.api.trace`). Modules here import nothing else of the project.
"""
