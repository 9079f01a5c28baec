"""Derivatives of the functions that are not holomorphic: abs, angle and sign of complex
numbers, their imaginary part, and real values that meet complex ones.

srctrans follows the convention of autograd and JAX (docs/complex.md). A cotangent
``g`` of a value ``y`` pairs with a tangent ``dy`` as ``Re(sum(g * dy))``, with no
conjugate, and a VJP is the transpose of the JVP for that pairing. So:

* a holomorphic function's rules are its real rules: ``g * f'(z)`` and ``dz * f'(z)``;
* ``st.grad`` of a real ``L(z)`` is ``dL/dx - 1j * dL/dy`` (``z = x + 1j * y``), which is
  ``f'(z)`` for the real part of a holomorphic ``f``; step against its conjugate to
  descend;
* the cotangent of a real value is real: :func:`real_for` takes the real part where a
  real operand of a complex result gets its cotangent.

Every function here takes real and complex arguments alike and gives, for real ones,
what the real rules gave before complex numbers were supported. srctrans differentiates
their source for second derivatives, so each has one return.
"""

import numpy as np

from .refusals import unsupported

# NumPy 2 defines the sign of a complex number as z / |z|; NumPy 1 as the sign of its real part
SIGN_IS_UNIT = complex(np.sign(1j)) == 1j


def is_complex_value(x):
    """Whether ``x`` is a complex number or array (a constant: it only reads the dtype)."""
    return isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", None) == "c"


def real_for(g, x):
    """The cotangent ``g`` for the operand ``x``: its real part when ``x`` is real and ``g``
    complex (the imaginary part pairs with no direction of a real ``x``), else ``g``.

    >>> real_for(np.array([1 + 2j]), 3.0)
    array([1.])
    """
    if is_complex_value(g) and not is_complex_value(x):
        g = np.real(g)
    return g


def conj_if_complex(x):
    """``np.conj(x)`` for a complex ``x``, else ``x`` itself (no copy)."""
    if is_complex_value(x):
        x = np.conj(x)
    return x


def real_if_complex(t, x):
    """``np.real(t)`` when ``x`` is complex, else ``t``: the tangent of a real function of ``x``
    (a norm, a variance) summed from complex products."""
    if is_complex_value(x):
        t = np.real(t)
    return t


def abs_direction(x):
    """``d|x|``'s factor: ``sign(x)`` for real ``x``; ``conj(x) / |x|`` for complex ``x``, and 0
    at 0 (the subgradient srctrans uses for real ``abs`` at 0 too).

    >>> abs_direction(np.array([3 + 4j, 0j]))
    array([0.6-0.8j, 0. +0.j ])
    """
    if is_complex_value(x):
        direction = np.conj(_unit(x))
    else:
        direction = np.sign(x)
    return direction


def abs_grad(g, x):
    """The cotangent of ``x`` in ``|x|`` given the cotangent ``g`` of ``|x|`` (a real value)."""
    return real_if_complex(g, x) * abs_direction(x)


def abs_jvp(dx, x):
    """The tangent of ``|x|`` given the tangent ``dx`` of ``x``: ``Re(conj(x) dx) / |x|``."""
    return real_if_complex(dx * abs_direction(x), x)


def angle_grad(g, x, deg=False):
    """The cotangent of ``x`` in ``np.angle(x, deg)``: ``-1j / x`` times the real cotangent,
    0 at 0; zero for real ``x`` (whose angle is 0 or pi)."""
    if is_complex_value(x):
        cotangent = (-1j * _scale(deg)) * np.real(g) * _inverse(x)
    else:
        cotangent = np.zeros_like(np.real(g))
    return cotangent


def angle_jvp(dx, x, deg=False):
    """The tangent of ``np.angle(x, deg)``: ``Im(dx / x)``, 0 at 0 and for real ``x``."""
    if is_complex_value(x):
        tangent = _scale(deg) * np.imag(_inverse(x) * dx)
    else:
        tangent = np.zeros_like(np.real(dx))
    return tangent


def sign_grad(g, x):
    """The cotangent of ``x`` in ``np.sign(x)``: zero for real ``x`` (a step function); a
    complex ``sign(x) = x / |x|`` turns with the angle: ``d sign = 1j * sign * d angle``
    (NumPy before 2.0 gives the sign of the real part, a step function too)."""
    if is_complex_value(x) and SIGN_IS_UNIT:
        cotangent = angle_grad(np.real(1j * _unit(x) * g), x)
    else:
        cotangent = np.zeros_like(np.real(g))
    return cotangent


def sign_jvp(dx, x):
    """The tangent of ``np.sign(x)``: ``1j * sign(x) * Im(dx / x)``; zero for real ``x``."""
    if is_complex_value(x) and SIGN_IS_UNIT:
        tangent = 1j * _unit(x) * angle_jvp(dx, x)
    else:
        tangent = np.zeros_like(np.real(dx))
    return tangent


def imag_grad(g, x):
    """The cotangent of ``x`` in ``np.imag(x)``: ``-1j`` times the real cotangent; zero for a
    real ``x`` (whose imaginary part is the constant 0)."""
    if is_complex_value(x):
        cotangent = -1j * np.real(g)
    else:
        cotangent = np.zeros_like(np.real(g))
    return cotangent


def finite_parts(t, x):
    """``t`` where ``x`` is finite, 0 elsewhere: the derivative of ``np.nan_to_num(x)``, which
    replaces a complex number's real and imaginary parts apart (each its own mask)."""
    if is_complex_value(x):
        t = np.real(t) * np.isfinite(np.real(x)) + 1j * (np.imag(t) * np.isfinite(np.imag(x)))
    else:
        t = t * np.isfinite(x)
    return t


def imag_tangent(dx):
    """The tangent of ``np.imag(x)``: ``np.imag(dx)``, as a new (writable) array."""
    return np.imag(dx) * 1.0


def complex_grads(g):
    """The cotangents of ``re`` and ``im`` in ``complex(re, im) = re + 1j * im``."""
    return np.real(g), -np.imag(g)


def real_only(a, what, subject="a complex matrix", hint=None):
    """``a``, checked to be real: ``what`` (a decomposition, by default) has derivative rules
    for real values only. Raises ``UnsupportedSyntaxError`` for a complex ``a``, saying
    "the derivative of ``what`` of ``subject``", with ``hint`` (by default, how to
    differentiate a complex matrix as a real one)."""
    if is_complex_value(a):
        unsupported(f"the derivative of {what} of {subject}", hint or (
            "srctrans differentiates it for real matrices; for a complex one, differentiate "
            "the real and imaginary parts as a real block matrix [[re, -im], [im, re]]"))
    return a


def _scale(deg):
    """Degrees per radian when ``deg``, else 1."""
    return 180.0 / np.pi if deg else 1.0


def _unit(x):
    """``x / |x|``, and 0 where ``x`` is 0."""
    return x * _inverse(np.abs(x))


def _inverse(x):
    """``1 / x``, and 0 where ``x`` is 0."""
    nonzero = x != 0
    return np.where(nonzero, 1 / np.where(nonzero, x, 1), 0)
