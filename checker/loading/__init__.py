"""Loading models: model files (:mod:`~checker.loading.modelfile`) and finding specs by
name in the ``specs`` package (:mod:`~checker.loading.registry`).

The only layer of :mod:`checker` that imports spec modules (by name, at run time).
"""
