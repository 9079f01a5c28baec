"""Stores, tuple bindings and new dict keys that share no memory (issue 30, point 2): each
differentiates as written. And the aliases that do share memory, with their hints applied."""

import numpy as np


def filled_in_a_loop(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i]
    return np.sum(y * x)


def rows_stored(x):
    h = np.zeros((2, 3))
    h[0] = x
    h[1] = 2.0
    return np.sum(h) + np.sum(x)


def tuple_bound_then_added_to(x):
    c, e = x * 1.0, x
    c += 1.0
    return np.sum(c * e)


def counter_bound_in_a_tuple(x):
    y, n = x, 0
    while n < 3:
        y = np.sin(y) * x
        n += 1
    return np.sum(y)


def new_key_beside_a_read_entry(x):
    p = {"a": np.zeros(3)}
    a = p["a"]
    p["b"] = 1.0
    return np.sum((a + x) * x) + p["b"]


def ndarray_then_written(x):
    y = np.ndarray((3,), dtype=x.dtype)
    y[:] = x * 2.0
    return np.sum(y * x)


# -- these share memory: refused, and the hint's rewrite works ------------------------------

def view_read_in_a_loop(x):
    y = x * 1.0
    v = y[0:2]
    s = 0.0
    for _ in range(2):
        s = s + np.sum(v * v)
        y[0] = y[0] * 2.0
    return s


def view_read_in_a_loop_copied(x):          # the hint applied: v = y[0:2].copy()
    y = x * 1.0
    v = y[0:2].copy()
    s = 0.0
    for _ in range(2):
        s = s + np.sum(v * v)
        y[0] = y[0] * 2.0
    return s


def fresh_array_stored_then_changed(x):
    d = {}
    for t in range(2):
        v = x * (t + 1.0)
        d[t] = v
        v[0] = 0.0
    return np.sum(d[0] * d[1])


def fresh_array_stored_then_changed_copied(x):     # the hint applied: d[t] = v.copy()
    d = {}
    for t in range(2):
        v = x * (t + 1.0)
        d[t] = v.copy()
        v[0] = 0.0
    return np.sum(d[0] * d[1])


def ndarray_over_a_buffer(x):
    y = np.ndarray((3,), dtype=x.dtype, buffer=x)
    return np.sum(y * y)


# -- source read exactly: docstrings of several lines, nested classes, decorators ----------

class Model:
    """A model with methods documented at length."""

    def loss(self, x):
        """The squared norm.

        Args:
          x: the point.
        """
        return np.sum(x * x)

    class Inner:
        def energy(self, x):
            """Energy.

                An indented line, kept as written.
            """
            return np.sum(np.sin(x))


def _identity_decorator(fn):
    return fn


@_identity_decorator
def decorated(x):
    """A decorated function
    with a docstring of two lines."""
    return np.sum(x ** 3)


def closure_with_a_docstring(scale):
    def inner(x):
        """Scaled square.

        Reads `scale` from the enclosing function."""
        return scale * np.sum(x * x)
    return inner


# -- a local name for the array namespace -------------------------------------------------

def namespace_positional_axis(x):
    xp = np
    return xp.sum(x * x, 0)


def namespace_keyword_axis(x):
    xp = np
    la = np.linalg
    return xp.sum(xp.tanh(x), axis=0) + la.norm(x)


# -- input validation --------------------------------------------------------------------

def validated(x):
    if x.ndim != 1:
        raise ValueError("x must be 1-D")
    assert np.all(np.isfinite(x)), "x must be finite"
    return np.sum(x ** 2)


def validated_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        if i > 10:
            raise RuntimeError(f"too many steps: {i}")
        s = s + np.sum(np.sin(x) * i)
    return s


def rejects_everything(x):
    if np.sum(x) > -100.0:
        raise ValueError("rejected")
    return np.sum(x)


def accumulates_into_a_dict_entry(w, xs):
    out = {"a": 0.0}
    for x in xs:
        out["a"] = out["a"] + np.sum(x * w) ** 2
    return out["a"]


# -- chained subscript writes ---------------------------------------------------------------

def chained_in_a_loop(x):
    hs = [np.zeros(3), np.zeros(3)]
    for t in range(2):
        hs[t][1:] = x[1:] * (t + 1.0)
        hs[t][0] += np.sin(x[0])
    return np.sum(hs[0] * hs[1])


def chained_into_a_dict_of_arrays(x):
    grads = {"W": np.zeros((2, 3)), "b": np.zeros(3)}
    grads["W"][0] = x * 2.0
    grads["W"][1, :] = np.tanh(x)
    grads["b"][:] = x
    return np.sum(grads["W"] ** 2) + np.sum(grads["b"] * x)


def chained_three_deep(x):
    a = [[np.zeros(3)], [np.zeros(3)]]
    a[1][0][2] = x[0] * x[1]
    return np.sum(a[1][0] * x)


def chained_into_a_row_view(x):
    y = np.zeros((2, 3))
    y[0][1] = np.sum(x * x)
    return np.sum(y * y)


def chained_seen_through_an_alias(x):
    xs = [x * 1.0, x * 2.0]
    first = xs[0]
    xs[0][0] = 5.0
    return np.sum(first * x)


def chained_seen_through_an_alias_copied(x):       # the hint applied
    xs = [x * 1.0, x * 2.0]
    first = xs[0].copy()
    xs[0][0] = 5.0
    return np.sum(first * x)


# -- srctrans called inside a differentiated function ------------------------------------

import srctrans as st  # noqa: E402  (the programs below call it)


def _inner(x):
    return np.sin(x) * x


def _inner_dot(x, v):
    return np.sum(_inner(x) * v)


def vjp_inside(x):
    value, pullback = st.vjp(_inner, x)
    return np.sum(pullback(np.ones(3))[0] ** 2)


def vjp_inside_as_the_hint_writes_it(x):
    g = st.grad(_inner_dot)(x, np.array([1.0, 2.0, 3.0]))
    return np.sum(g * g)


def float_through_a_ufunc(p):
    v = np.add(p, p)
    return np.sum(v.reshape(-1) * 3.0)


# -- unpacking in calls ----------------------------------------------------------------------

def _huber(r, *args):
    delta, = args
    return np.where(np.abs(r) < delta, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))


def huber_with_args(x):
    params = (1.0,)
    return np.sum(_huber(x, *params))


def _scaled(x, scale=1.0, shift=0.0):
    return x * scale + shift


def options_unpacked(x):
    options = {"scale": 2.0, "shift": 0.5}
    return np.sum(_scaled(x, **options) ** 2)


def active_entries_unpacked(x):
    parts = (x * 2.0, np.sin(x))
    extra = dict(shift=np.cos(x))
    return np.sum(_scaled(*parts, **extra) + _scaled(*(x, 3.0), **{"shift": x * x}))


def unpacks_a_list_it_changes(x):
    parts = [x, 2.0]
    parts[1] = 3.0
    return np.sum(_scaled(*parts))


def unpacks_its_own_varargs(x, *args):
    return np.sum(_scaled(x, *args))


def fresh_array_stored_each_step(x):
    d = {}
    for t in range(3):
        v = np.zeros(3)
        v[0] = 1.0
        v = v * x + t
        d[t] = v
    return np.sum(d[0] * d[1] * d[2])


def array_stored_then_changed_next_step(x):
    d = {}
    v = x * 1.0
    for t in range(3):
        v[0] = t * 1.0
        d[t] = v
    return np.sum(d[0] * d[2])
