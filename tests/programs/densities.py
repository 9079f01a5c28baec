"""Helpers called from another module (so srctrans calls their own derivatives rather than
inlining them): densities whose callers sum them (tests/test_callee_spreads.py)."""

import numpy as np


def log_density(z, nu):
    """A Student-t log density whose normalising constant only the output needs."""
    constant = np.log(np.sinh(nu) + np.cosh(nu)) - 0.5 * np.log(nu * np.pi)
    return constant - 0.5 * (nu + 1) * np.log1p(z * z / nu)


def shifted(z, c):
    return z + c                      # z (n,), c () : the sum's cotangent of c counts n terms


def with_options(z, **options):
    """Keyword options reach it through ``**``: a caller's keyword may be any name."""
    return np.log1p(z * z / options["seed"]) * options.get("scale", 1.0)
