"""Argument domains for the rule tests: how to draw each argument of a rule.

Shared by tests/test_rule_catalog.py (reverse mode, end to end) and
tests/test_jvp_rules.py (the rule functions themselves). A builder is drawn
from a seeded ``np.random.Generator`` only, so every test is reproducible.
"""

import numpy as np


class Arg:
    """How to build one argument from a seeded generator.

    ``shape`` None means a Python float. ``low``/``high`` bound a uniform draw;
    ``away_from_zero`` mirrors half of the draws to negative values (for
    denominators); ``value`` gives a fixed argument instead of a random one.
    """

    def __init__(self, shape=(), low=None, high=None, away_from_zero=False, value=None):
        self.shape = shape
        self.low = low
        self.high = high
        self.away_from_zero = away_from_zero
        self.value = value

    def build(self, rng):
        if self.value is not None:
            return np.array(self.value, dtype=np.float64) if isinstance(self.value, list) else self.value
        shape = () if self.shape is None else self.shape
        if self.low is None:
            x = rng.standard_normal(shape)
        else:
            x = rng.uniform(self.low, self.high, shape)
        if self.away_from_zero:
            x = x * rng.choice([-1.0, 1.0], shape)
        return float(x) if self.shape is None else np.asarray(x, dtype=np.float64)


def normal(*shape):
    return Arg(shape)


def uniform(low, high, *shape):
    return Arg(shape, low, high)


def positive(*shape):
    return Arg(shape, 0.5, 2.0)


def nonzero(*shape):
    """Magnitudes in [0.5, 2], either sign."""
    return Arg(shape, 0.5, 2.0, away_from_zero=True)


class Complex(Arg):
    """Complex numbers whose real and imaginary parts are standard normal (``shape`` None:
    a Python complex)."""

    def build(self, rng):
        shape = () if self.shape is None else self.shape
        z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return complex(z) if self.shape is None else np.asarray(z, dtype=np.complex128)


def cnormal(*shape):
    return Complex(shape)


def pyfloat(low=-2.0, high=2.0):
    return Arg(None, low, high)


def fixed(value):
    return Arg(value=value)


class Matrices(Arg):
    """Stacked square matrices (the last two axes) far from singular: the identity
    times the size, plus a standard normal draw. ``reshaped(shape)`` gives the same
    draw reshaped (a tensor whose matrix form is far from singular)."""

    def __init__(self, shape, reshape=None):
        super().__init__(shape)
        self.reshape = reshape

    def build(self, rng):
        size = self.shape[-1]
        m = rng.standard_normal(self.shape) + size * np.eye(size)
        return m if self.reshape is None else m.reshape(self.reshape)

    def reshaped(self, shape):
        return Matrices(self.shape, shape)


def matrices(*shape):
    return Matrices(shape)


class PositiveDefinite(Arg):
    """Stacked symmetric positive definite matrices: ``m @ m.T`` plus the size times the identity."""

    def build(self, rng):
        m = rng.standard_normal(self.shape)
        return m @ np.swapaxes(m, -1, -2) + self.shape[-1] * np.eye(self.shape[-1])


def positive_definite(*shape):
    return PositiveDefinite(shape)


class Factored(Arg):
    """The factorization ``factor(a)`` of a matrix ``a`` drawn by ``matrix`` (an Arg):
    ``scipy.linalg.cho_factor`` or ``lu_factor``, whose tuple a solve takes."""

    def __init__(self, factor, matrix, **options):
        super().__init__(matrix.shape)
        self.factor, self.matrix, self.options = factor, matrix, options

    def build(self, rng):
        return self.factor(self.matrix.build(rng), **self.options)


def factored(factor, matrix, **options):
    return Factored(factor, matrix, **options)


class Simplex(Arg):
    """Points of the probability simplex, components along the first axis (as
    ``scipy.stats.dirichlet`` takes them); ``drop_last`` leaves the last component out
    (SciPy appends ``1 - sum``), so every direction keeps the point valid."""

    def __init__(self, shape, drop_last=False):
        super().__init__(shape)
        self.drop_last = drop_last

    def build(self, rng):
        k, rest = self.shape[0], self.shape[1:]
        x = rng.dirichlet(np.full(k, 4.0), size=rest).T if rest else rng.dirichlet(np.full(k, 4.0))
        return x[:-1] if self.drop_last else x


def simplex(*shape, drop_last=False):
    return Simplex(shape, drop_last)
