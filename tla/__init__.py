"""TLA+ export and the TLC cross-check.

- :mod:`ordercheck.tla.export` renders a model as ``Name.tla`` and ``Name.cfg`` from the Jinja2
  templates in ``tla/templates`` (one per spec, plus shared pieces and the
  ``OrderingProperties`` module);
- :mod:`ordercheck.tla.adapters` holds, per spec, the template context and the state encoding
  between Python states and TLA+ values;
- :mod:`ordercheck.tla.tlc` runs TLC (``TLA2TOOLS_JAR``, ``java``) and reads its output;
- :mod:`ordercheck.tla.crosscheck` compares TLC with our engine; :mod:`ordercheck.tla.traces` moves traces
  between the two.
"""
