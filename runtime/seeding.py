"""The cotangent that starts a backward pass, and the shape of what it returns.

:func:`seed_cotangent` turns the user's ``output_gradients`` (or None, for
"gradient of the output itself") into the array the adjoint starts from,
checking its shape. :func:`conform_gradient` makes each finished gradient
look like the input it belongs to: same shape, same floating dtype, a Python
scalar input gets a NumPy float64, and never a read-only view.
"""

import numbers

import numpy as np

from .accumulate import zeros_like
from .broadcast import unbroadcast
from .containers import is_container, leaves, map_leaves
from .foreign import as_array, is_foreign, ones_for
from .complex_numbers import is_complex_value
from .refusals import error


def seed_cotangent(out, output_gradients):
    """The cotangent of the function's output ``out`` that starts the backward pass.

    Args:
      out: the forward result: an array, a NumPy or Python scalar, or a tuple
        of those when the function returns several outputs.
      output_gradients: None for ones, or an array-like of ``out``'s shape
        (for a tuple ``out``, a tuple or list of such, or of None, one per
        output).

    Returns:
      Ones of ``out``'s shape and floating dtype when ``output_gradients`` is
      None: ``1.0`` for a Python scalar, that type's one for a NumPy floating
      scalar. Otherwise ``np.asarray(output_gradients)``, cast to ``out``'s
      dtype when that is floating. A tuple ``out`` gives a tuple. An entry of
      a container output that has no derivative (None, a str, an int, a bool,
      an integer array) given None or zeros as its cotangent gets None.

    Raises:
      ShapeError: a cotangent's shape differs from its output's, or the
        number of cotangents differs from the number of outputs.
      NonDifferentiableError: the output has no derivative, or an entry of
        it that has none is seeded with ones (``output_gradients`` None) or
        given a nonzero cotangent.

    >>> seed_cotangent(np.zeros(2, np.float32), None)
    array([1., 1.], dtype=float32)
    """
    if output_gradients is None and type(out) is np.float64:
        return _ONE                          # the common case: a float64 scalar loss's seed
    return _seed(out, output_gradients, output_gradients is not None)


_ONE = np.float64(1.0)                       # (immutable: one object serves every call)


def _seed(out, output_gradients, given, within=False):
    """:func:`seed_cotangent`; ``given``: the caller gave cotangents (None entries of them
    are ones for floats, and no derivative asked of entries that have none)."""
    if isinstance(out, tuple) and not hasattr(out, "_fields"):
        return _seed_each(out, output_gradients, given)
    if is_container(out):
        if output_gradients is None:
            return map_leaves(lambda o: _seed_one(o, None, "output_gradients", True, given), out)
        return map_leaves(lambda o, v: _seed_one(o, v, "output_gradients", True, given), out,
                          output_gradients)
    return _seed_one(out, output_gradients, "output_gradients", within, given)


def seed_sum(output, has_aux=False):
    """The cotangent that starts the gradient of the sum of ``output``'s entries (the plain
    gradient function's seed): ones shaped like each float entry, None for its int and
    bool entries (constants, as in container arguments). With ``has_aux``, ``output`` is
    ``(primary, aux)`` and only ``primary`` is seeded: ``(seed, None)``.

    Raises ``NonDifferentiableError`` (see :func:`check_output`) for an output with no
    derivative, or a str entry.
    """
    if has_aux:
        return seed_sum(output[0]), None
    check_outputs(output)
    return _seed(output, None, given=True)


def not_an_aux_pair(value):
    """Whether ``value``, returned by a function differentiated with ``has_aux=True``, is not
    the pair ``(output, aux)`` it must be (a tuple of length 2, as JAX requires)."""
    return not (type(value) is tuple and len(value) == 2)


def split_aux_pair(value):
    """``(output, aux)`` from what a has-aux function returned; ``aux_pair_error`` if it is
    not such a pair."""
    if not_an_aux_pair(value):
        raise aux_pair_error(value)
    return value


def aux_pair_error(value):
    """The ``UsageError`` for a has-aux function that returned ``value``, not a pair."""
    what = f"a tuple of length {len(value)}" if isinstance(value, tuple) else \
        "None" if value is None else _with_article(type(value).__name__)
    made = error("UsageError", f"with has_aux=True the function must return a pair (output, "
                 f"aux), but it returned {what}", "return (output, aux)")
    made.about_output = True                # located at the user's return
    return made


def conform_gradient(g, x):
    """The finished gradient ``g`` made to look like the input ``x``.

    Args:
      g: the accumulated gradient of ``x``, or None (no gradient).
      x: the input: an array, a NumPy scalar, or a Python int or float.

    Returns:
      None for None. For a Python int or float ``x``, an ``np.float64``; for
      a NumPy scalar ``x``, a scalar of its type when floating (else an
      ``np.float64``). Otherwise a writable array of ``x``'s shape and, when
      ``x`` is floating, its dtype. A ``g`` that was broadcast is summed back
      to ``x``'s shape first. A ``g`` that is an array of another library (Dask)
      stays one, of ``x``'s shape (0-d for a number ``x``), not computed.

    Raises:
      ShapeError: ``g`` cannot be summed or broadcast to ``x``'s shape.
    """
    if g is None:
        return None
    if isinstance(g, dict) and not is_container(x):
        # an object's gradient: its attributes' gradients by name
        return {name: conform_gradient(value, getattr(x, name)) for name, value in g.items()}
    if is_container(x):
        # a container's gradient: the same kind, every float entry conformed, absent ones zero
        return map_leaves(lambda xv, gv: None if is_integer(xv) else
                          conform_gradient(zeros_like(xv) if gv is None else gv, xv), x, g)
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape \
            and g.dtype == x.dtype and g.flags.writeable:
        return g                                   # the common case, already conforming
    if is_foreign(x) and isinstance(g, (list, tuple)):
        g = as_array(g)                  # the cotangents of list(x)'s entries, stacked lazily
    g = _to_shape(g, x)
    dtype = _floating_dtype_of(x)
    if is_foreign(g):          # a Dask or CuPy gradient stays lazy, in its library (0-d for a
        return as_array(g, dtype or np.dtype(np.float64))         # number's)
    if is_complex(g) and not is_complex(x):
        g = np.real(g)          # a real input's gradient is real: the rest is no direction of it
    if isinstance(x, (int, float, complex, np.generic)):
        kind = (dtype or np.dtype(np.float64)).type
        return g if type(g) is kind else kind(g)      # a NumPy scalar is immutable: kept
    g = np.asarray(g, dtype=dtype)
    if not g.flags.writeable:
        g = g.copy()
    return g


def _seed_each(outs, output_gradients, given):
    if output_gradients is None:
        output_gradients = (None,) * len(outs)
    elif not isinstance(output_gradients, (tuple, list)):
        raise error("ShapeError", f"the function returns {len(outs)} outputs, so "
                    f"output_gradients must be a tuple or list of {len(outs)} cotangents, not "
                    f"{type(output_gradients).__name__}")
    if len(output_gradients) != len(outs):
        raise error("ShapeError", f"output_gradients has {len(output_gradients)} entries "
                    f"but the function returns {len(outs)} outputs")
    return tuple(_seed(out, cotangent, given, True) if is_container(out)    # a list output: a list
                 else _seed_one(out, cotangent, f"output_gradients[{i}]", True, given)
                 for i, (out, cotangent) in enumerate(zip(outs, output_gradients)))


def _seed_one(out, cotangent, name, within=False, given=False):
    if within and given and has_no_derivative(out):
        if cotangent is None or not np.any(as_array(cotangent)):
            return None                 # an entry without a derivative, none asked of it
        raise error("NonDifferentiableError",
                    f"{name} gives a nonzero cotangent to an entry of the output that has no "
                    f"derivative ({_with_article(type(out).__name__)})",
                    "give such entries None (or zeros) as their cotangent")
    check_output(out, within)
    if cotangent is None:
        return _ones_like(out)
    dtype = _floating_dtype_of(out)
    if is_complex(cotangent) and not is_complex(out):
        cotangent = np.real(cotangent)       # a real output's cotangent is real (docs/complex.md)
    cotangent = as_array(cotangent, dtype=dtype)
    if not _same_shape(cotangent.shape, np.shape(out)):
        raise error("ShapeError", f"{name} has shape {cotangent.shape} but the output "
                    f"has shape {np.shape(out)}")
    return cotangent


def _same_shape(a, b):
    """Equal shapes, where a length unknown until computed (NaN, a Dask array's after a
    boolean selection) matches any."""
    return len(a) == len(b) and all(m == n or m != m or n != n for m, n in zip(a, b))


def is_complex(value):
    """Whether ``value`` is a complex number or array, or a container holding one."""
    if is_complex_value(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_complex(v) for v in value)
    if isinstance(value, dict):
        return any(is_complex(v) for v in value.values())
    return False


def check_output(out, within=False):
    """Raise ``NonDifferentiableError`` unless ``out`` can have a derivative: a real or complex
    number or array. None, strings, ints, bools and integer or boolean arrays have none
    (an int output's derivative would be zero whatever the function did with its inputs,
    which hides the mistake). ``within``: ``out`` is an entry of a container output.

    The error's ``about_output`` is True, and its ``output_type`` says what was found: the
    entry points name the line of the user's ``return`` (``srctrans.outputs``)."""
    if has_no_derivative(out):
        kind = (f"an array of {out.dtype}" if hasattr(out, "dtype") and np.ndim(out)
                else "None" if out is None else _with_article(type(out).__name__))
        kind = f"a container holding {kind}" if within else kind
        made = error("NonDifferentiableError",
                     f"the function's output is {kind}, which has no derivative", OUTPUT_HINT)
        made.about_output = True
        made.output_type = kind
        raise made


def has_no_derivative(value):
    """Whether ``value`` is None, a string, an int, a bool or an integer or boolean array."""
    return value is None or isinstance(value, (str, bytes)) or is_integer(value)


def check_outputs(out):
    """:func:`check_output` of ``out``, or, for a container, of its entries that are strings:
    its int and bool entries have a zero tangent (``np.linalg.lstsq``'s rank), and its None
    entries none (a gradient's, for an argument's entry without a derivative)."""
    if type(out) is np.ndarray and out.dtype.kind in "fc" or type(out) in (float, np.float64):
        return                                             # the common case
    if is_container(out):
        for each in leaves(out):
            if isinstance(each, (str, bytes)):
                check_output(each, within=True)
        return
    check_output(out)


def _with_article(noun):
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


OUTPUT_HINT = ("return the float or float array to differentiate; to return other values "
               "beside it (metrics, labels, counts), return (output, aux) and pass "
               "has_aux=True")


def _ones_like(out):
    if type(out) is np.float64:
        return np.float64(1.0)                     # the common case: a float64 scalar loss
    dtype = _floating_dtype_of(out) or np.dtype(np.float64)
    # a NumPy scalar's (before float: np.float64 is a float), and a lazy scalar's: a number,
    # as its cotangents meet them (Dask's full_like of a spread, no lazy guard of a zero)
    if isinstance(out, np.generic) or is_foreign(out) and np.shape(out) == ():
        return dtype.type(1)
    if isinstance(out, (int, float)):
        return 1.0
    return ones_for(np.shape(out), dtype, out)


def _floating_dtype_of(value):
    """``value``'s dtype if it is floating or complex, else None."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        dtype = np.asarray(value).dtype
    return dtype if np.issubdtype(dtype, np.inexact) else None


def _to_shape(g, x):
    shape = np.shape(x)
    if _same_shape(np.shape(g), shape):
        return g
    try:
        return unbroadcast(g, x if hasattr(x, "shape") else np.asarray(x))   # x: a number
    except ValueError:
        raise error("ShapeError", f"the gradient has shape {np.shape(g)} but the input "
                    f"has shape {shape}") from None


def is_float(value):
    """Whether ``value`` is a real number (not a bool or int), a float or complex array, or a
    container holding one: what a derivative can be taken with respect to."""
    if is_container(value):
        return any(is_float(leaf) for leaf in leaves(value))
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray) or is_foreign(value):
        return value.dtype.kind in "fc"
    return (isinstance(value, (numbers.Complex, np.inexact))
            and not isinstance(value, numbers.Integral))


def is_integer(value):
    """True for ints, bools and integer or bool arrays: values that carry no gradient."""
    kind = type(value)
    if kind is np.ndarray:                            # the common cases first, in one test
        return value.dtype.kind in "biu"
    if kind is float or kind is str or value is None:
        return False
    return isinstance(value, (bool, int, np.integer, np.bool_)) or (
        (isinstance(value, np.ndarray) or is_foreign(value)) and value.dtype.kind in "biu")
