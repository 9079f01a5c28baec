"""One example for each row of docs/syntax.md's table: a table row is a test.

Each entry is ``(text, source)``: ``text`` is found in the row's first cell and
in no other row's; ``source`` is a module whose ``check()`` shows what the row
says (a supported construct differentiates in both modes, to second order; a
refused one raises the error the row names, at this file's line). The test
(tests/test_syntax_table.py) writes each into a file of its own and runs it.
"""

HEADER = """\
import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pytest

import srctrans as st
from programs.syntax_checks import M, X, differentiates, refused
"""

ROWS = [
    # -- assignments and statements --------------------------------------------------------
    ("`x = ...`, `a = b = ...`", """
def f(x):
    a = b = x * 2.0
    c, (d, e) = a, (b, x)
    return np.sum(c * d + e)

def check():
    differentiates(f, X)
"""),
    ("`x += ...` and the other augmented", """
def f(x):
    y = x * 1.0
    y += x
    y *= x
    y -= 1.0
    y /= 2.0
    y **= 2
    return np.sum(y)

def check():
    differentiates(f, X)
"""),
    ("`x: float = ...`", """
def f(x):
    y: float = np.sum(x * x)
    return y

def check():
    differentiates(f, X)
"""),
    ("`return`, `return a, b` (several outputs)", """
def f(x):
    return np.sum(x), x * 2.0

def check():
    differentiates(f, X)
"""),
    ("`return` anywhere", """
def f(x, n):
    for i in range(n):
        if i == 2:
            return np.sum(x) * i
    if n > 10:
        return np.sum(x * x)
    return np.sum(np.sin(x))

def check():
    differentiates(f, X, 4, wrt=0)
    differentiates(f, X, 1, wrt=0)
"""),
    ("expression statements", """
def f(x):
    print(end="")
    return np.sum(x * x)

def check():
    differentiates(f, X)
"""),
    ("docstrings, `pass`", """
def f(x):
    \"\"\"A docstring.\"\"\"
    pass
    return np.sum(x)

def check():
    differentiates(f, X)
"""),
    ("`assert`", """
def f(x):
    assert x.ndim == 1, "a vector"
    return np.sum(x * x)

def check():
    differentiates(f, X)
    with pytest.raises(AssertionError):
        st.grad(f)(M)
"""),
    ("`obj.a = ...`", """
class Box:
    pass

def f(x, box):
    box.a = x
    return np.sum(x)

def check():
    refused(f, X, Box(), text="keep the value in a local variable")
"""),
    ("`try`", """
def f(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)

def check():
    refused(f, X, text="move error handling outside")
"""),
    ("`with st.stop_recording():`", """
def f(x):
    with st.stop_recording():
        c = np.sum(x)
    return np.sum(x * x) + c

def check():
    np.testing.assert_allclose(st.grad(f)(X), 2 * X)
"""),
    ("`with st.grad_of(h) as dh:`", """
def f(x):
    h = x * x
    with st.grad_of(h) as dh:
        dh = dh * 0.5
    return np.sum(h)

def check():
    np.testing.assert_allclose(st.grad(f)(X), X)
"""),
    ("leaving one of those blocks", """
def f(x):
    for i in range(3):
        with st.stop_recording():
            break
    return np.sum(x)

def check():
    refused(f, X, text="end the block normally")
"""),
    ("any other `with`", """
import contextlib

def f(x):
    with contextlib.suppress(ValueError):
        y = x * 2.0
    return np.sum(y)

def check():
    refused(f, X, text="outside the differentiated function")
"""),
    ("`raise`", """
def f(x):
    if x.ndim != 1:
        raise ValueError("a vector, please")
    return np.sum(x * x)

def check():
    differentiates(f, X)
    with pytest.raises(ValueError, match="a vector, please"):
        st.grad(f)(M)
"""),
    ("`del name` releasing a value", """
def f(x):
    t = x * x
    s = np.sum(t)
    del t
    return s

def check():
    differentiates(f, X)
"""),
    ("any other `del`", """
def f(x):
    d = {"a": x, "b": x}
    del d["a"]
    return np.sum(d["b"])

def check():
    refused(f, X, text="drop the `del`")
"""),
    ("`import m`, `import a.b as c`", """
def f(x):
    import numpy.linalg as la
    from math import pi
    return la.norm(x) * pi

def check():
    differentiates(f, X)
"""),
    ("`global`, `nonlocal`", """
TOTAL = 0.0

def f(x):
    global TOTAL
    return np.sum(x)

def check():
    refused(f, X, text="pass the value as an argument")
"""),
    ("`class` inside the function", """
def f(x):
    class Local:
        pass
    return np.sum(x)

def check():
    refused(f, X, text="define the class at module level")
"""),
    ("`async def`, `await`", """
def f(x):
    async def inner():
        return 1
    return np.sum(x)

def check():
    refused(f, X, text="non-async")
"""),
    ("`yield`, `yield from`", """
def f(x):
    yield np.sum(x)

def check():
    refused(f, X, text="return a value instead of yielding")
"""),
    # -- branches and loops ------------------------------------------------------------------
    ("`if` / `elif` / `else`", """
def f(x, k):
    if k == 0:
        y = np.sin(x)
    elif k == 1:
        y = x * x
    else:
        y = np.exp(x)
    return np.sum(y)

def check():
    for k in (0, 1, 2):
        differentiates(f, X, k, wrt=0)
"""),
    ("`for i in range(...)` (one, two or three", """
def f(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * i
    for i in range(1, n, 2):
        s = s * x[i]
    return s

def check():
    differentiates(f, X, 3, wrt=0)
"""),
    ("`for row in X` over an array", """
def f(m, w1, w2):
    s = 0.0
    for row in m:
        s = s + np.sum(row * row)
    for w in [w1, w2]:
        s = s + np.sum(w * m)
    return s

def check():
    differentiates(f, M, M * 2.0, M + 1.0)
"""),
    ("`for a, b in zip(xs, ys)`", """
def f(x, m):
    s = 0.0
    for a, b, c in zip(x, m[0], m[1]):
        s = s + a * b * c
    return s

def check():
    differentiates(f, X, M)
"""),
    ("`for i, row in enumerate(X)`", """
def f(m):
    s = 0.0
    for i, row in enumerate(m):
        s = s + i * np.sum(row * row)
    for i, row in enumerate(m, 2):
        s = s + i * np.sum(row)
    return s

def check():
    differentiates(f, M)
"""),
    ("assigning to a `range` loop's variable", """
def f(x):
    s = 0.0
    for i in range(3):
        i = i + 1
        s = s + x[0] * i
    return s

def check():
    refused(f, X, text="use another name for the new value")
"""),
    ("`for a, b in pairs`", """
def f(x, m):
    pairs = [(x[0], m[0]), (x[1], m[1])]
    s = 0.0
    for a, b in pairs:
        s = s + a * np.sum(b)
    for i, (u, v) in enumerate(zip(x, m[0])):
        s = s + i * u * v
    return s

def check():
    differentiates(f, X, M)
"""),
    ("`for k, v in d.items()`", """
def f(d):
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * v)
    for v in d.values():
        s = s + np.sum(v)
    for k in d.keys():
        s = s + np.sum(d[k] ** 3)
    return s

def check():
    differentiates(f, {"a": X, "b": M})
"""),
    ("`for k in d` over a dict", """
def f(d):
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] * d[k])
    return s

def check():
    differentiates(f, {"a": X, "b": M})
"""),
    ("`for x in sorted(...)`", """
def f(d):
    s = 1.0
    for k in sorted(d):
        s = s * np.sum(d[k]) + 1.0
    return s

def check():
    differentiates(f, {"b": X, "a": M})
"""),
    ("`for h in reversed(hs)`", """
def f(x):
    hs = [x * 1.0, x * 2.0, np.sin(x)]
    s = 1.0
    for h in reversed(hs):
        s = s * 0.5 + np.sum(h)
    for t in reversed(range(3)):
        s = s + x[t] * t
    return s

def check():
    differentiates(f, X)
"""),
    ("the sequence a loop runs over", """
def f(x):
    xs = [x, x * 2.0]
    s = 0.0
    for v in xs:
        s = s + np.sum(v)
        xs = [v]
    return s

def check():
    differentiates(f, X)
    np.testing.assert_allclose(st.grad(f)(X), 3.0 * np.ones(3))   # both entries ran
"""),
    ("`for` over other iterables", """
def f(x):
    s = 0.0
    for i in np.ndindex(3):
        s = s + x[i]
    return s

def check():
    refused(f, X, text="loop over range(...)")
"""),
    ("`else` clause of a `for` or `while`", """
def f(x):
    s = 0.0
    for v in x:
        if v > 5.0:
            break
        s = s + v * v
    else:
        s = s * 2.0
    return s

def check():
    differentiates(f, X)
    np.testing.assert_allclose(st.grad(f)(X), 4 * X)
"""),
    # -- writing into arrays -----------------------------------------------------------------
    ("`y[i] = v`, `y[a:b] = v`", """
def f(x):
    y = np.zeros((2, 3))
    y[0] = x
    y[1, 0:2] = x[1:] * 2.0
    y[:, 2] = x[0]
    y[y > 1.0] = 0.5
    return np.sum(y * y)

def check():
    differentiates(f, X)
"""),
    ("`y[i] += v` and the other augmented assignments to a subscript", """
def f(x):
    y = x * 1.0
    y[0] += x[1]
    y[1:] *= x[0]
    return np.sum(y * y)

def check():
    differentiates(f, X)
"""),
    ("writing into an argument (`x[0] = v`", """
def f(x):
    x[0] = 1.0
    x[1:] += 2.0
    return np.sum(x * x)

def check():
    x = X.copy()
    differentiates(f, x)
    np.testing.assert_array_equal(x, X)          # the caller's array is unchanged
"""),
    ("writing entries into a dict argument", """
def f(x, bn):
    bn["mean"] = bn.get("mean", 0.0) * 0.9 + np.mean(x) * 0.1
    return np.sum(x * bn["mean"])

def check():
    differentiates(f, X, {"mean": 0.5}, wrt=0)
"""),
    ("writing into what may be a view of an argument", """
def f(x):
    y = x[1:]
    y[0] = 2.0
    return np.sum(y)

def check():
    refused(f, X, text="copy()")
"""),
    ("`a[i] = b[j] = v`", """
def f(x):
    a = x * 1.0
    b = x * 2.0
    a[0] = b[1] = x[2]
    return np.sum(a * b)

def check():
    refused(f, X, text="write into one named array at a time")
"""),
    ("a chain of subscripts", """
def f(x):
    params = {"W": x * 1.0}
    params["W"][0] += x[1]
    ys = [x * 1.0, x * 2.0]
    ys[1][2] = x[0] * 3.0
    return np.sum(params["W"] * ys[1])

def check():
    differentiates(f, X)
"""),
    ("an integer-array index that repeats a position", """
def f(x):
    y = np.zeros(3)
    y[np.array([1, 1])] = x[:2]
    z = x * 1.0
    z[np.array([0, 0, 2])] += x
    return np.sum(y * y) + np.sum(z * z)

def check():
    differentiates(f, X)
"""),
    ("`np.copyto(y, v)`, `y.fill(c)`", """
def f(x):
    y = np.zeros(3)
    np.copyto(y, x * 2.0)
    z = x * 1.0
    z.sort()
    w = np.zeros(3)
    np.add.at(w, np.array([0, 0, 1]), x)
    np.put(w, [2], x[0])
    return np.sum(y * z) + np.sum(w * w)

def check():
    differentiates(f, X)
"""),
    ("`out=` on any NumPy call", """
def f(x):
    y = np.zeros(3)
    np.sin(x, out=y)
    return np.sum(y)

def check():
    refused(f, X, text="assign the result instead")
"""),
    ("any other NumPy call whose result is unused", """
def f(x):
    y = x * 1.0
    y.partition(1)
    return np.sum(y)

def check():
    refused(f, X, text="in-place")
"""),
    ("calling a function of yours that writes into an argument", """
def fill(buf, v):
    buf[:] = v

def f(x):
    y = np.zeros(3)
    fill(y, x)
    return np.sum(y)

def shifted(buf, v):
    buf = buf.copy()             # the function's own array from here on
    buf[1:] += v[:2] * buf[:2]
    return buf

def g(x):
    return np.sum(shifted(x, x) ** 2)

def check():
    refused(f, X, text="fill")
    x = X.copy()
    differentiates(g, x)
    np.testing.assert_array_equal(x, X)
"""),
    ("changing an array in place (`y[i] = v`, `y[i] += v`, `y += v`) while another name", """
def f(x):
    u = np.sin(x)
    v = u
    v += 1.0
    return np.sum(u * v)

def check():
    refused(f, X, text="`v` is changed in place here while `u` may share its memory")
"""),
    ("storing into an array the function made (`y = np.zeros(3); y[i] = x[i]`", """
def f(x):
    y = np.zeros(3)
    y[0] = x[1]
    c, e = x * 1.0, x
    c += 1.0
    d = {}
    d["k"] = x
    return np.sum(y * c) + np.sum(d["k"] * e)

def check():
    differentiates(f, X)
"""),
    # -- expressions -------------------------------------------------------------------------
    ("names, constants, f-strings", """
def f(x):
    label = f"{x.shape}"
    return np.sum(x * 2.0) + len(label) * 0.0

def check():
    differentiates(f, X)
"""),
    ("`+ - * / ** @` and unary", """
def f(x, m):
    return np.sum(-(m @ x)) + np.sum((+x) * x / 2.0 - x ** 3 + 1.0)

def check():
    differentiates(f, X, M)
"""),
    ("comparisons `== != < <= > >= is is not in not in`", """
def f(x):
    mask = (x > 0) & (x != 1.0)
    k = 1.0 if 3 in (1, 2, 3) and mask is not None else 0.0
    return np.sum(x * mask) * k

def check():
    differentiates(f, X)
"""),
    ("`a if c else b`", """
def f(x):
    y = np.sin(x) if x[0] > 0 else np.log(x)      # the log of negatives never runs
    return np.sum(y)

def check():
    differentiates(f, X)
"""),
    ("`and`, `or`, `not`", """
def f(x, a, b):
    y = (a and x[0] * 2.0) or x[1] * 3.0
    return y * np.sum(x) if not b else 0.0

def check():
    differentiates(f, X, True, False, wrt=0)
    differentiates(f, X, False, False, wrt=0)
"""),
    ("calls, with positional and keyword arguments", """
def helper(a, b=1.0, *, c=2.0):
    return a * b + c

def f(x):
    return np.sum(helper(x, c=x) + helper(x, b=x) + np.clip(x, a_min=-1.0, a_max=1.5))

def check():
    differentiates(f, X)
"""),
    ("the builtins `sum` (of a list", """
def f(x):
    return sum([x[0], x[1]]) + sum(v * v for v in x) + max(x[0], x[2]) + min(x[1], 0.0) \\
        + abs(x[1]) + float(x[2])

def check():
    differentiates(f, X)
"""),
    ("`min(..., key=f)`", """
def f(x, m):
    rows = [m[0], m[1]]
    best = min(rows, key=lambda r: r[0])
    order = sorted([x[0], x[1], x[2]], key=abs, reverse=True)
    return np.sum(best * x) + order[0] * 2.0

def check():
    differentiates(f, X, M)
"""),
    ("attributes (`x.T`", """
class P(NamedTuple):
    w: np.ndarray
    b: float

def f(m, p):
    return np.sum(m.T @ p.w) * p.b + m.shape[0] * np.pi

def check():
    differentiates(f, M, P(np.array([1.0, 2.0]), 0.5))
"""),
    ("subscripts: integers, negative integers", """
def f(x, m):
    idx = np.array([0, 2, 2])
    return (x[-1] * np.sum(x[::-2]) + np.sum(m[..., 1]) + np.sum(x[None, :] * m)
            + np.sum(x[x > 0]) + np.sum(x[idx]) + m[1, 2])

def check():
    differentiates(f, X, M)
"""),
    ("subscripts of containers", """
def f(params, layers, items):
    return np.sum(params["W"] * layers[0]) + items[-1]

def check():
    differentiates(f, {"W": X}, [X * 2.0, X], (1.0, 2.5))
"""),
    ("tuple and list displays", """
def f(x):
    t = (x[0], x[1] * 2.0)
    xs = [x, x * x]
    return t[0] * t[1] + np.sum(xs[1])

def check():
    differentiates(f, X)
"""),
    ("`dict(W=W, b=b)`", """
def f(x, d):
    a = dict(W=x, b=x[0])
    b = dict([("W", x * 2.0), ("b", 1.0)])
    c = dict(zip(["p", "q"], [x, x * x]))
    e = dict(d.items())
    g = dict(d)
    p = dict(a, b=x[1])
    return np.sum(a["W"] * b["W"]) + np.sum(c["q"]) + np.sum(e["k"] * g["k"]) + p["b"]

def check():
    differentiates(f, X, {"k": X * 3.0})
"""),
    ("`d.get(k, default)`, `d.keys()`", """
def f(d):
    s = d.get("a", 0.0) * np.sum(d.get("z", d["b"]))
    n = len(d) + len(list(d.keys())) + len(d.values()) + len(d.items())
    return s * n if "a" in d else s

def check():
    differentiates(f, {"a": 0.5, "b": X})
"""),
    ("dict display with `**`", """
def f(d, x):
    e = {**d, "c": x * 2.0, 1: np.sin(x)}
    e["a"] = e["a"] * e[1]
    return np.sum(e["c"] * e["a"] + d["a"]) + np.sum(e["b"])

def g(d, x):
    e = {"c": x, **d}
    return np.sum(e["c"])

def check():
    differentiates(f, {"a": X, "b": X * 3.0}, X)
    refused(g, {"a": X}, X, text="build the dict with explicit keys", wrt=1)
"""),
    ("list comprehensions, generator expressions", """
def f(x, m):
    rows = [r * 2.0 for r in m if np.sum(r) > -10.0]
    pairs = [a * b for a in x for b in x[:2]]
    return np.sum(np.stack(rows)) + sum(p for p in pairs)

def check():
    differentiates(f, X, M)
"""),
    ("dict comprehensions `{k: f(v) for k, v in d.items()}`", """
def f(d):
    e = {k: np.sin(v) for k, v in d.items()}
    e["new"] = d["a"] * 2.0
    xs = [d["a"], d["a"] * 3.0]
    xs[0] = xs[1] * 2.0
    return np.sum(e["a"]) + np.sum(e["new"]) + np.sum(xs[0])

def check():
    differentiates(f, {"a": X})
"""),
    ("set displays and set comprehensions", """
def f(x):
    s = {1, 2}
    return np.sum(x) * len(s)

def check():
    refused(f, X, text="sets have no order to differentiate along")
"""),
    ("`lambda` other than as `name = lambda ...`", """
def f(x):
    return np.sum(np.apply_along_axis(lambda r: r * 2.0, 0, x))

def check():
    refused(f, X, text="assign the lambda to a name")
"""),
    ("`f(*t)`, `f(**d)` in a call, of a tuple, list or dict display", """
def helper(a, b, k=1.0):
    return a * b * k

def f(x):
    p = (x, x * 2.0)
    opts = dict(k=x[0])
    return np.sum(helper(*(x, x)) + helper(*p, **opts) + helper(x, x, **{"k": 3.0}))

def check():
    differentiates(f, X)
"""),
    ("the function's own `*args` passed on whole", """
def pieces(r, *args):
    return np.sum(r * r * args[0])

def huber(w, m, y, *args):
    return pieces(m @ w - y, *args)

def f(w, m, y, *args):
    return huber(w, m, y, *args)

def check():
    y, scale = np.array([1.0, -1.0]), np.array([0.5, 2.0])
    differentiates(f, X, M, y, scale, wrt=0)
    differentiates(f, X, M, y, scale, wrt=2)
    g = st.grad(f, wrt="args")(X, M, y, scale)
    assert isinstance(g, tuple) and g[0].shape == (2,)
    _, t = st.jvp(f, (X, M, y, scale), (None, None, None, np.ones(2)))   # forward too
    np.testing.assert_allclose(t, np.sum(g[0]))
"""),
    ("`f(*t)`, `f(**d)` of a length or keys the source does not fix", """
def f(x, *args):
    return np.sum(np.maximum(*args) * x)

def check():
    refused(f, X, X, X * 2.0, text="pass the arguments one by one", wrt=(0, "args"))
"""),
    # -- containers ----------------------------------------------------------------------------
    ("tuples, lists and dicts as arguments, locals and results", """
def f(p):
    w, bs = p["w"], p["bs"]
    return {"out": np.sum(w * bs[0][1]), "pair": (w * 2.0, [bs[1]])}

def check():
    differentiates(f, {"w": X, "bs": [(1.0, X * 3.0), X]})
"""),
    ("named tuples and dataclasses as arguments and results", """
@dataclasses.dataclass
class D:
    w: np.ndarray
    n: int

class T(NamedTuple):
    a: np.ndarray
    b: float

def f(d, t):
    return T(d.w * t.a * d.n, t.b * 2.0)

def check():
    differentiates(f, D(X, 2), T(X * 2.0, 0.5))
    g = st.grad(lambda_free, wrt=(0, 1))(D(X, 2), T(X * 2.0, 0.5))
    assert isinstance(g[0], D) and g[0].n is None and isinstance(g[1], T)

def lambda_free(d, t):
    return np.sum(f(d, t).a)
"""),
    ("`xs.append(v)` on a list the function made", """
def f(x):
    xs, ys = [], []
    h = x
    for i in range(3):
        h = np.tanh(h * 1.5)
        xs.append(h)
        ys.append(np.sum(h))
    return np.sum(np.stack(xs)) + sum(ys)

def check():
    differentiates(f, X)
"""),
    ("reading a list that grows later", """
def f(x):
    xs = [x]
    for i in range(3):
        xs.append(xs[-1] * 0.5 + np.sum(np.stack(xs)))
    return np.sum(xs[-1])

def check():
    differentiates(f, X)
"""),
    ("`xs[i] = v` on a list the function made", """
def f(x):
    xs = [x, x * 2.0]
    xs[0] = np.sum(x)           # another shape
    return xs[0] * np.sum(xs[1])

def g(x):
    xs = [x, x, x]
    xs[1:3] = [x * 2.0]
    return np.sum(xs[0])

def check():
    differentiates(f, X)
    refused(g, X, text="")
"""),
    ("`xs + ys`, `xs * 3` on lists or tuples", """
def f(x):
    xs = [x] + [x * 2.0]
    ts = (x[0],) * 3
    return np.sum(np.stack(xs)) + sum(ts)

def check():
    differentiates(f, X)
"""),
    ("a dict or a list of outputs, with `output_gradients=`", """
def f(x):
    return {"a": x * 2.0, "b": [np.sum(x)]}

def check():
    differentiates(f, X)
    g = st.grad(f)(X, output_gradients={"a": np.ones(3), "b": [2.0]})
    np.testing.assert_allclose(g, 4.0 * np.ones(3))
"""),
    ("an output with no derivative", """
def f(x):
    return int(np.sum(x))

def check():
    refused(f, X, text="has no derivative", error=st.NonDifferentiableError)
"""),
    # -- local functions ---------------------------------------------------------------------
    ("`def` at the top level of the function's body, `name = lambda ...`", """
def f(x):
    def inner(y):
        return y * x
    sq = lambda v: v * v
    return np.sum(inner(sq(x)))

def check():
    differentiates(f, X)
"""),
    ("a `def` inside a branch, a loop or another local function", """
def f(x):
    if x[0] > 0:
        def inner(y):
            return y
    return np.sum(x)

def check():
    refused(f, X, text="define it at the top of the function")
"""),
    ("`return` before the end of a local function", """
def f(x):
    def inner(y):
        if y[0] > 0:
            return y
        return -y
    return np.sum(inner(x))

def check():
    refused(f, X, text="assign the result to a name and return it at the end")
"""),
    ("`break`, `continue` in a local function", """
def f(x):
    def inner(y):
        s = 0.0
        for v in y:
            if v > 1.0:
                break
            s = s + v
        return s
    return inner(x)

def check():
    refused(f, X, text="define the function at module level")
"""),
    ("`*args` in a local function", """
def f(x):
    def inner(a, *ys):
        return a * ys[0] + np.sin(ys[-1]) * len(ys)
    return np.sum(inner(x, x * x, 0.5)) + np.sum(inner(x, x))

def g(x, *rest):
    def inner(*ys):
        return ys[0]
    return np.sum(inner(*rest) * x)

def check():
    differentiates(f, X)
    refused(g, X, X, text="pass each argument by itself")
"""),
    ("`**kwargs` in a local function", """
def f(x):
    def inner(**options):
        return options["y"]
    return np.sum(inner(y=x))

def check():
    refused(f, X, text="define the function at module level")
"""),
    ("a local `def` passed to `st.grad` or `st.jvp`", """
def f(x):
    def h(y):
        return np.sum(np.sin(x * y))
    g = st.grad(h)(x)
    _, t = st.jvp(h, (x,), (x,))
    return np.sum(g * g) + t

def check():
    differentiates(f, X)
"""),
    ("a local function passed as any other value", """
def f(x):
    def inner(r):
        return r * 2.0
    return np.sum(np.apply_along_axis(inner, 0, x))

def check():
    refused(f, X, text="at module level")
"""),
    ("a local function that calls itself", """
def f(x):
    def inner(n):
        return x if n == 0 else inner(n - 1) * 2.0
    return np.sum(inner(2))

def check():
    refused(f, X, text="calling itself")
"""),
    # -- signatures and methods --------------------------------------------------------------
    ("positional, positional-only, keyword-only parameters, defaults", """
def f(x, /, a, b=2.0, *, c=3.0):
    return np.sum(x * a * b * c)

def check():
    differentiates(f, X, 0.5)
    np.testing.assert_allclose(st.grad(f)(X, 0.5, c=1.0), 0.5 * 2.0 * np.ones(3))
"""),
    ("`*args`, `**kwargs` in a function of yours that the differentiated function calls", """
def helper(*args, **kwargs):
    return args[0] * args[1] * kwargs["k"]

def f(x):
    return np.sum(helper(x, x * 2.0, k=x[0]))

def check():
    differentiates(f, X)
"""),
    ("`*args`, `**kwargs` of the differentiated function itself", """
def f(x, *args, **kwargs):
    return np.sum(x * args[0]) * kwargs.get("k", 2.0)

def check():
    g = st.grad(f, wrt="args")(X, X * 2.0, k=3.0)
    assert isinstance(g, tuple) and len(g) == 1
    np.testing.assert_allclose(g[0], 3.0 * X)
    gk = st.grad(f, wrt="kwargs")(X, X * 2.0, k=3.0)
    assert isinstance(gk, dict)
    np.testing.assert_allclose(gk["k"], np.sum(X * X * 2.0))
    differentiates(f, X, X * 2.0, wrt=0)
    with pytest.raises(st.UsageError, match="args"):
        st.grad(f, wrt=1)(X, X * 2.0)
"""),
    ("calling the gradient with arguments the function's signature does not take", """
def f(x):
    return np.sum(x)

def check():
    refused(f, X, 1.0, text="f", error=st.CallError)
"""),
    ("a parameter named `output_gradients`", """
def f(x, output_gradients):
    return np.sum(x)

def check():
    refused(f, X, 1.0, text="output_gradients", error=st.SrcTransError)
"""),
    ("bound methods (`st.grad(model.loss)`)", """
class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(np.tanh(self.w * x))

def check():
    model = Model(X)
    differentiates(model.loss, X * 2.0)
"""),
    ("second derivatives of a bound method", """
class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(np.tanh(self.w * x) ** 2)

def check():
    model = Model(X)
    H = st.hessian(model.loss)(X)
    assert H.shape == (3, 3)
    st.check_grads(model.loss, (X,), order=2)
"""),
    ("calling an object or a function passed in", """
class Layer:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(x * self.w)

    def apply(self, x):
        return self(x) * 2.0

def f(model, x, act):
    return np.sum(act(model.apply(x)))

def check():
    differentiates(f, Layer(X), X * 0.5, np.sin, wrt=(0, 1))
"""),
    ("making a dataclass (all fields set by its generated `__init__`", """
@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float

class State(NamedTuple):
    h: np.ndarray
    c: np.ndarray

def f(x):
    p = Params(x * 2.0, b=x[0])
    s = State(np.tanh(p.w), x)
    return np.sum(s.h * s.c) + p.b

def check():
    differentiates(f, X)
"""),
    ("making an object of a class of yours whose `__init__` only stores", """
class Linear:
    def __init__(self, W, b):
        self.W, self.b = W, b

def f(x):
    layer = Linear(x * 2.0, x[0])
    return np.sum(layer.W * x) * layer.b

def check():
    differentiates(f, X)
"""),
    ("making an object of another class of yours from values that carry derivatives", """
class Scaled:
    def __init__(self, w):
        self.w = w * 2.0

def f(x):
    s = Scaled(x)
    return np.sum(s.w)

def check():
    refused(f, X, text="Scaled")
"""),
    ("`super()`", """
class Base:
    def __call__(self, x):
        return x * 2.0

class Child(Base):
    def __call__(self, x):
        return super().__call__(x) + 1.0

def f(m, x):
    return np.sum(m(x))

def check():
    refused(f, Child(), X, text="call the base class's method by name", wrt=1)
"""),
    ("reading a `property` of an object", """
class Model:
    def __init__(self, w):
        self.w = w

    @property
    def scale(self):
        return self.w * 2.0

def f(m, x):
    return np.sum(m.scale * x)

def check():
    refused(f, Model(X), X, text="property", error=st.SrcTransError)
"""),
    ("recursion (a function that calls itself", """
def power(x, n):
    return x if n == 0 else power(x, n - 1) * x

def f(x):
    return np.sum(power(x, 2))

def check():
    refused(f, X, text="recursion")
"""),
]

# Rows whose first cell is short, or a substring of another row's: matched by the whole cell.
EXACT = {
    "`break`, `continue`": """
def f(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        if v > 1.5:
            break
        s = s + v * v
    return s

def check():
    differentiates(f, X)
""",
    "`for j in range(a, b): acc = np.logaddexp(acc, x[:, j])`: a log-sum-exp added up slice by slice": """
def f(m):
    acc = m[:, 0]
    for j in range(1, m.shape[1]):
        acc = np.logaddexp(acc, m[:, j])
    return np.sum(acc * acc)

def check():
    assert "logaddexp_fold" in st.source(f, args=(M,))
    differentiates(f, M)
""",
    "`np.log(e / e.sum(axis=k, keepdims=True))` with `e = np.exp(a)`: the log of a softmax's probabilities": """
def f(m):
    e = np.exp(m - m.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(np.log(p) * m)

def check():
    assert "log_of_softmax" in st.source(f, args=(M,))
    differentiates(f, M)
""",
    "`while`": """
def f(x):
    s, n = 1.0, 0
    while n < 3:
        s = s * 0.5 + np.sum(x * x)
        n += 1
    t = x * 1.0
    while np.sum(t) < 5.0:
        t = t * 2.0
    return s + np.sum(t)

def check():
    differentiates(f, X)
""",
    "`//`": """
def f(x):
    k = x[0] // 0.3
    return np.sum(x * k)

def check():
    differentiates(f, X)
    assert float(st.grad(f)(X)[1]) == X[0] // 0.3 == 1.0     # a constant: no derivative
""",
    "`%`": """
def f(x):
    return np.sum(x % 0.75)

def check():
    differentiates(f, X * 0.9)
""",
    "`& \\| ^ ~ << >>`": """
def f(x, n):
    mask = (x > 0) & (x < 1.0) | ~(x > 1.5) ^ (x > 10.0)
    k = (n << 1) >> 1
    return np.sum(x * mask) * k

def check():
    differentiates(f, X, 3, wrt=0)
""",
    'dict display `{"W": W, "b": b}`': """
def f(w, b):
    p = {"W": w, "b": b}
    return np.sum(p["W"] * p["b"])

def check():
    differentiates(f, X, 0.5)
""",
    "`:=`": """
def f(x):
    if (n := np.sum(x)) > 0:
        return n
    return -n

def check():
    refused(f, X, text="assign with a separate `=` statement")
""",
    '`wrt="self"` on a bound method': """
class P(NamedTuple):
    w: np.ndarray
    b: float

    def loss(self, x):
        return np.sum(self.w * x) * self.b

def check():
    p = P(X, 0.5)
    g = st.grad(p.loss, wrt="self")(X * 2.0)
    assert isinstance(g, P)
    np.testing.assert_allclose(g.w, X * 2.0 * 0.5)
""",
}
