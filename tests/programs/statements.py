"""Statements real code writes inside functions: imports where they are used, and dicts
copied with keys added (tests/test_real_code.py)."""

import numpy as np


def imports_where_used(x):
    """An optional dependency imported inside, as libraries do."""
    import math
    import numpy.linalg as la
    from scipy import special
    from numpy import tanh as th
    if x[0] > 100.0:
        import os  # noqa: F401
    return np.sum(th(x)) * math.pi + la.norm(x) + np.sum(special.expit(x))


def import_also_assigned(x):
    import math
    math = 3.0
    return np.sum(x) * math


def dict_of_pairs_with_keys(x):
    d = dict([("a", x * 2.0)], b=x * 3.0)
    return np.sum(d["a"] * d["b"])


def parameters_updated(p, x):
    """A copy of the parameters with a derived entry and a constant added."""
    p = dict(p, m=p["w"] * x, scale=2.0)
    return np.sum(p["m"] * p["scale"] + p["w"])
