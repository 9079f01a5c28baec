"""The derivative rules: one registry, filled by the rule modules listed here.

``REGISTRY`` (made in :mod:`.registry`, which the rule files import) is the
only registry; this module is the only place that loads rule files, so every
rule srctrans knows is reachable from this list.
"""

from srctrans.rules.registry import REGISTRY

# Each module registers its rules into REGISTRY when imported.
from srctrans.rules import elementwise, reductions, linalg, shapes, constants, builtins, runtime_helpers  # noqa: E402,F401
from srctrans.rules import complex_numbers, fourier, container_helpers  # noqa: E402,F401
from srctrans.rules.operators import operator_primal  # noqa: E402,F401
# SciPy's rules load when a SciPy function is first looked up (SciPy is optional)
REGISTRY.load_on_demand("scipy.special", "srctrans.rules.scipy_special")
REGISTRY.load_on_demand("scipy.linalg", "srctrans.rules.scipy_linalg")
REGISTRY.load_on_demand("scipy.signal", "srctrans.rules.scipy_signal")
REGISTRY.load_on_demand("scipy.stats", "srctrans.rules.scipy_stats")
REGISTRY.load_on_demand("scipy.spatial.distance", "srctrans.rules.scipy_distance")
from srctrans.rules.methods import METHODS, ATTRIBUTES  # noqa: E402,F401
