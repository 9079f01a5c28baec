"""Zero cotangents stay zero at the singular points of a derivative.

A rule such as ``log``'s, ``g / x``, is NaN where ``g == 0`` and ``x == 0``
(0 / 0), and ``sqrt``'s, ``g * 0.5 / ans``, is NaN wherever ``x < 0`` (``ans``
is NaN there). Such a zero cotangent is what ``np.where(x > 0, np.log(x), 0)``
and ``y[x <= 0] = 0`` send back to the branch they discard, and a NaN there
would spoil the whole gradient. The same holds for the tangents of forward
mode. The rules with singular points therefore wrap their product in
:func:`zero_guard`, which keeps it unless it has a non-finite entry, and then
sets exactly the entries whose cotangent is zero to zero.

The check is the product's sum of squares (``np.vdot``, the cheapest NumPy
reduction for small arrays; an infinite or NaN entry makes it non-finite),
so a product with no bad entry costs one extra pass over it; only a product
with a non-finite entry, or whose squares overflow, takes the exact path.
"""

import math

import numpy as np

from .foreign import is_foreign

_squares = np.vdot


def zero_guard(g, value):
    """``value`` (a product ``g * factor``), with 0 wherever ``g == 0``.

    Args:
      g: the cotangent (or tangent) the rule multiplied; an array or a
        number that broadcasts against ``value``.
      value: the rule's product for ``g``, as computed.

    Returns:
      ``value`` itself when all its entries are finite (the usual case, and
      then ``value == g * factor`` is already 0 where ``g == 0``), or when ``g``
      is a float other than 0 (no entry to set: the check is skipped). Otherwise
      a new array of ``value``'s shape and dtype (a NumPy scalar when
      ``value`` is 0-d): 0 where ``g == 0``, ``value`` elsewhere. An
      infinity or NaN where ``g != 0`` is kept: it is the true derivative
      there, or an error the caller should see.

    >>> x = np.array([0.0, 2.0, 0.0])
    >>> g = np.array([0.0, 1.0, 3.0])
    >>> with np.errstate(divide="ignore", invalid="ignore"):
    ...     zero_guard(g, g / x)
    array([0. , 0.5, inf])
    """
    if (type(value) is float or type(value) is np.float64) and math.isfinite(value):
        return value           # a finite number, a loop's step's: the common case first
    if isinstance(value, np.ndarray):
        if (type(g) is float or type(g) is np.float64) and g != 0.0:
            return value       # (a number not 0: no entry to set; an inf or NaN is kept)
        if math.isfinite(_squares(value, value).real):     # complex: the sum of |value|**2
            return value
    elif is_foreign(value) or is_foreign(g):     # a lazy array: repair without looking
        return np.where(np.equal(g, 0), 0, value)
    elif math.isfinite(abs(value)):               # a Python or NumPy scalar
        return value
    repaired = np.where(np.equal(g, 0), 0, value)
    return repaired if repaired.ndim else repaired[()]


def zero_guard_sum(g, value):
    """``zero_guard(g, value).sum()``, checking the sum rather than the product: a float
    array's sum is finite exactly when every entry is (an infinity or NaN makes it one) and
    it does not overflow, and then it is the sum of the guard's value; otherwise the guard
    repairs ``value`` first (``optimise/guarded_sums.py``: specialised fused gradients; its
    rules are the guard's and the sum's, ``rules/elementwise.py``).

    >>> float(zero_guard_sum(np.array([0.0, 1.0]), np.array([np.nan, 2.0])))
    2.0
    """
    if type(value) is np.ndarray and value.dtype.kind == "f":
        total = value.sum()
        if math.isfinite(total):
            return total
    return zero_guard(g, value).sum()
