"""The derivative rules: one registry, filled by the rule modules listed here.

``REGISTRY`` (made in :mod:`.registry`, which the rule files import) is the
only registry; this module is the only place that loads rule files, so every
rule srctrans knows is reachable from :func:`_load_builtins`. They load at the
registry's first query (a process served by the persistent cache never
queries it); ``METHODS``, ``ATTRIBUTES`` and ``operator_primal`` load with
their modules on first access.
"""

import importlib

from srctrans.rules.registry import REGISTRY


def _load_builtins():
    # Each module registers its rules into REGISTRY when imported.
    for name in ("elementwise", "reductions", "linalg", "shapes", "constants", "builtins",
                 "runtime_helpers", "product_helpers", "scan_helpers", "fold_helpers",
                 "softmax_log_helpers", "softplus_helpers", "cholesky_helpers", "complex_numbers",
                 "fourier", "container_helpers", "control_helpers", "operators", "methods"):
        importlib.import_module(f"srctrans.rules.{name}")
    # SciPy's rules load when a SciPy function is first looked up (SciPy is optional)
    REGISTRY.load_on_demand("scipy.special", "srctrans.rules.scipy_special")
    REGISTRY.load_on_demand("scipy.linalg", "srctrans.rules.scipy_linalg")
    REGISTRY.load_on_demand("scipy.signal", "srctrans.rules.scipy_signal")
    REGISTRY.load_on_demand("scipy.stats", "srctrans.rules.scipy_stats")
    REGISTRY.load_on_demand("scipy.spatial.distance", "srctrans.rules.scipy_distance")


REGISTRY.load_builtins_with(_load_builtins)

_LAZY = {"METHODS": "methods", "ATTRIBUTES": "methods", "operator_primal": "operators"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"srctrans.rules.{_LAZY[name]}"), name)
