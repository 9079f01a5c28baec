"""Random programs over the Python and NumPy srctrans supports, for the differential fuzzer.

:func:`generate` draws one program from a seeded ``random.Random``: a module
with a few helper functions and ``program(x, y, s, W)``, built statement by
statement. Each statement is run on sample inputs as it is added, so the
generator knows the shape of every name and combines only values whose shapes
broadcast; a statement that fails is dropped. The program mixes straight-line
arithmetic with broadcasting over two or more leading axes, reductions with
``axis``/``keepdims``, matmul, indexing and slicing, writes and augmented
writes into fresh arrays and into the argument ``x`` (repeated indices, masks, constants),
chained writes into a list of arrays (``hs[i][j] += v``), ``if``,
``for`` (over ``range``, rows, ``enumerate``, ``d.items()``) with ``break``
and ``continue``, sums over the rows of arrays (``zip``, ``range(len(...))``, two sums) and lists of
per-row values stacked, counted ``while`` loops (up and down, to int and float bounds, the counter
read in the body, after the loop, or bound with the carried value in one tuple
assignment), branches on the values of option arguments (``if c > 0.0 and mode == 'on'``), loops with an ``else`` block, early ``return``, input validation (``raise`` in a branch,
``assert``), a loop variable reused by a
later loop, lists, dicts and tuples (also as displays passed to a helper,
nested and through ``*rest``, and appended to a list; the list that
``np.array_split`` returns; a tuple packed and unpacked again, and a helper's
``(output, cache)`` unpacked), comprehensions, calls
of helper functions, a local function and a lambda, boolean masks, the builtins
``max``, ``min``, ``sum`` and ``float``, ``dict(...)``, ``d.get``, ``d.values()``,
``sorted`` and ``max``/``min`` with ``key=`` (a lambda or a function); the module's
small helpers and methods are inlined into the program (``normalize/callees.py``), one of
them reassigning its parameter in a branch an argument's ``None`` decides, and one with two
returns is called, its output summed (``optimise/callee_spreads.py``); SciPy (``special``,
``stats``' densities and distribution functions, ``signal.convolve``, and ``linalg``'s solves,
factorizations and ``expm`` of the matrix argument ``W``; NumPy's Cholesky factor and solves
against it, or its transpose), and calls through
values: a model object of the module called, its layers called by position and
their methods, functions called through a loop variable, and a dict built from
another, written into and iterated by key, a helper marked ``@st.checkpoint``, loops
marked ``st.checkpointed`` (carrying values, branching, growing a list, calling helpers),
and real values computed through complex ones (phases, parts, ``np.fft``, ``eigvals``),
``np.logaddexp`` folded over a stack's slices, the log of a softmax's probabilities
(shifted by the maximum or not, the probabilities read again or not), a softmax whose
exponentials are read again, contractions by ``np.einsum`` and differences by ``np.diff``,
a softplus written
the stable way, ``np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))``, and clips between a
bound and its negation.

Every operation is smooth where the fuzzer evaluates it (denominators and
logarithms kept away from zero), so finite differences are a fair reference.
"""

import random
import textwrap

import numpy as np

HELPERS = '''\
import collections
import dataclasses

import numpy as np
import scipy.linalg as sl
import scipy.signal as signal
import scipy.special as special
import scipy.stats as stats
import srctrans as st


def helper_mix(a, b):
    return np.tanh(a) * b + a


def helper_loop(a, n):
    total = a * 0.0
    for k in range(n):
        total = total + np.sin(a * (k + 1))
    return total


def helper_branch(a):
    if np.sum(a) > 0.0:
        return a * a
    return -a


@st.checkpoint
def helper_remat(a, b):
    return np.sin(a * b) * np.tanh(a) + b


def helper_keyed(a, scale=None):
    # inlined into its caller (a helper of the same module), where the shape key decides the
    # branch: the names it reassigns there are renamed as in straight-line code
    if scale is None:
        a = np.tanh(a)
        a = a * a + 0.5
    else:
        a = a * scale
    return a


def helper_star(a, *rest):
    return a * rest[0] + np.sin(rest[-1])


def helper_options(a, *rest):
    scale = rest[1] if len(rest) > 1 else 0.5
    return np.tanh(a * rest[0]) * scale


def helper_forward(a, *rest):
    return helper_star(a * 0.5, *rest)


def helper_fill(a):
    # writes only into an array it makes: inlined into its caller (normalize/callees.py)
    out = np.zeros_like(a)
    out[...] = np.sin(a) * 0.5
    return out * a + a


def helper_cached(a, b):
    # returns (output, cache), as course layers do; inlined, the caller's unpacking binds
    # the cache to this dict (normalize/packed_tuples.py)
    cache = {"t": np.tanh(a), "b": b}
    return cache["t"] * b + a, cache


def helper_density(a, c):
    # two returns: called, not inlined (normalize/callees.py); a caller that sums its output
    # calls its spread gradient, which skips the constant (optimise/callee_spreads.py)
    if c > 10.0:
        return a
    return np.log(np.cosh(c) + np.sinh(c)) - 0.5 * (c + 1.0) * np.log1p(a * a / c)


def helper_seq(xs, *rest):
    return xs[0] * np.cos(xs[1][0]) + rest[0][1] * xs[1][1]


class Affine:
    def __init__(self, scale, shift):
        self.scale, self.shift = scale, shift

    def __call__(self, a):
        return np.tanh(a * self.scale) + self.shift

    def apply(self, a, b):
        return self(a) * b


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, a):
        for layer in self.layers:
            a = layer(a)
        return a


MODEL = Stack([Affine(0.8, 0.1), Affine(1.3, -0.2)])


def _own_apply(a, b):
    return np.sin(a) * b + a


SHADOWED = Stack([Affine(0.8, 0.1), Affine(1.3, -0.2)])
SHADOWED.layers[1].apply = _own_apply      # its own attribute, which shadows Affine.apply


class Scaled:
    act = staticmethod(np.tanh)             # a library function the class holds

    def __init__(self, k):
        self.k = k

    def __call__(self, a):
        return self.act(a) * self.k


SCALED = Scaled(0.7)


class Looped:
    def __init__(self, k):
        self.k = k

    def step(self, a):
        return np.sin(a) * self.k

    def __call__(self, a):                  # a call through self at each step
        for _ in range(2):
            a = self.step(a) + a * 0.5
        return a


NOTES = []


def helper_note(a):                         # writes into a list of its module, its value unused:
    NOTES.append(float(np.sum(a)))          # called as it is, each call counted (effect_notes.py)
    del NOTES[:-4]


LOOPED = Looped(0.6)
LOOPED_OWN = Looped(0.9)
LOOPED_OWN.step = np.tanh                   # its own attribute, called at each step


def helper_layers(a):                       # one call site meeting both kinds of layer
    total = 0.0
    for layer in SHADOWED.layers:
        total = total + layer.apply(a, 0.5)
    return total


@dataclasses.dataclass
class Pair:
    first: object
    second: object
    weight: float = 0.5


Carry = collections.namedtuple("Carry", ["h", "c"])
'''

# the shapes of x (main), y (broadcasts against x), a scalar s, and W (matmul on x's last axis);
# () makes x and y Python floats (scalar programs, loops of numbers)
SHAPES = [((3,), (1,)), ((2, 3), (3,)), ((2, 3, 4), (3, 1)), ((4, 2, 3), (2, 3)),
          ((2, 2, 3, 2), (3, 1)), ((), ())]

UNARY = [
    "np.sin({a})", "np.cos({a})", "np.tanh({a})", "np.exp(np.tanh({a}))",
    "np.log(1.0 + {a} * {a})", "np.sqrt(1.0 + {a} * {a})", "{a} ** 2", "{a} ** 3", "-{a}",
    "np.log(np.cosh({a} - 0.5))", "np.sinh({a}) / np.cosh({a})",
    "1.0 / (1.5 + np.sin({a}))", "np.square({a})", "({a} > 0.2) * {a}",
    "np.where({a} > 0.1, {a}, 0.5 * {a})", "np.maximum({a}, 0.1 * {a})",
    "np.where(np.abs({a}) <= 0.5, 0.5 * {a} ** 2, 0.5 * (np.abs({a}) - 0.25))",
    "helper_mix({a}, {a})", "helper_remat({a}, 0.7)", "helper_loop({a}, 2)",
    "helper_branch({a})", "loc({a})", "helper_keyed({a})", "helper_keyed({a}, 0.7)",
    "helper_fill({a})", "np.maximum({a}, 0) + 0.5 * {a}",
    "np.maximum({a}, 0) - 0.5 * {a} + np.log1p(np.exp(-np.abs({a})))",
    "np.log(1.0 + np.exp(-np.abs({a}))) + np.maximum(0.0, {a})",
    "{a} * (1.0 / np.size({a})) + np.ndim({a})",
    "lam({a})", "np.clip({a}, -0.8, 0.8)", "np.clip({a}, -(0.5 + s * s), 0.5 + s * s)", "{a} * 2.0 + 1.0", "np.abs({a} + 3.0)",
    "np.hypot({a}, 0.5)", "np.cbrt(1.0 + {a} * {a})", "np.logaddexp2({a}, 0.3)",
    "np.deg2rad({a}) * 30.0", "np.sinc({a})", "np.fmax({a}, 0.2)",
    "np.polyval(np.array([0.5, -1.0, 0.3]), {a})",
    # SciPy
    "special.expit({a})", "special.erf({a})", "special.gammaln(1.5 + {a} * {a})",
    "stats.norm.logpdf({a}, 0.2, 1.5)", "stats.norm.logcdf({a})", "stats.t.logpdf({a}, 3.0)",
    "stats.norm.cdf({a}, s, 1.0 + s * s)", "stats.gamma.logpdf(1.0 + {a} * {a}, 2.0, scale=s)",
    "stats.beta.logpdf(0.5 + 0.3 * np.tanh({a}), 2.0, 3.0)",
    "signal.convolve({a}, np.array([0.5, -0.25, 0.125]), mode='same')",
    "{a} @ sl.expm(0.3 * W)", "{a} @ sl.solve(W + 3.0 * np.eye(len(W)), np.eye(len(W)))",
    "{a} @ sl.cho_solve(sl.cho_factor(W @ W.T + np.eye(len(W))), W)",
    "{a} @ sl.lu_solve(sl.lu_factor(W + 3.0 * np.eye(len(W))), W.T)",
    "{a} @ sl.solve_triangular(W + 3.0 * np.eye(len(W)), W, lower=True)",
    # NumPy's Cholesky factor and solves against it (optimise/cholesky_solves.py)
    "{a} @ np.linalg.solve(np.linalg.cholesky(W @ W.T + np.eye(len(W)) * (1.5 + np.sum({a} * {a}))), W)",
    "{a} @ np.linalg.solve(np.linalg.cholesky(W @ W.T + (1.5 + np.sum({a} * {a})) * np.eye(len(W))).T, W)",
    # a ridge penalty: a number times an identity (optimise/traces.py), a solve's cotangents
    "np.linalg.solve(W @ W.T + (1.5 + s * s) * np.eye(len(W)), ({a} @ W).T).T",
    # an inverse (specialised code calls NumPy's kernels: runtime/linalg_kernels.py)
    "{a} @ np.linalg.inv(W @ W.T + (1.5 + s * s) * np.eye(len(W)))",
    # objects called through values
    "MODEL({a})", "MODEL.layers[1].apply({a}, 0.5)", "MODEL.layers[0]({a}) * {a}",
    "helper_layers({a})", "SHADOWED.layers[1].apply({a}, 0.5)", "SCALED({a})",
    "LOOPED({a})", "LOOPED_OWN({a})",
]
BINARY = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + np.cos({b}))", "helper_mix({a}, {b})",
    "helper_remat({a}, {b})",
    "np.maximum({a}, {b} - 1.0)", "({a} > {b}) * {a} + ({a} < 1.0) * {b}",
    "np.where({a} > {b}, {a} * {b}, {a} + {b})",
]
REDUCTIONS = [
    "np.sum({a}, axis=0)", "np.sum({a}, axis=-1, keepdims=True)", "np.mean({a}, axis=0)",
    "np.sum({a})", "np.max({a}, axis=-1, keepdims=True)", "{a}.sum(axis=0)", "np.mean({a})",
    "np.sum(helper_density({a}, 1.5))", "-0.5 * np.sum(helper_density({a} + {a}, 0.7))",
    "np.prod(1.0 + 0.1 * {a}, axis=0)", "np.var({a}, axis=0)",
    "np.cumsum({a}, axis=-1)", "np.ptp({a}, axis=0)", "np.nansum({a}, axis=-1, keepdims=True)",
    "np.linalg.norm({a}, axis=-1, keepdims=True)", "np.flip({a}, axis=0)",
    "np.roll({a}, 1, axis=-1)", "np.cumprod(1.0 + 0.1 * {a}, axis=-1)",
    "np.linalg.norm({a}, ord=3, axis=-1)", "np.nanstd({a}, axis=0)", "np.linalg.norm({a})",
    "{a} / np.linalg.norm({a}, axis=0)", "np.var({a}, axis=-1, keepdims=True)",
    "np.average({a}, weights=np.exp({a}))", "np.kron({a}, np.array([1.0, -2.0]))",
    "special.logsumexp({a}, axis=-1, keepdims=True)", "special.softmax({a}, axis=0)",
    "special.logsumexp({a}, axis=0)", "special.logsumexp({a} * 2.0)",
    "special.logsumexp({a}, b=1.5 + np.cos({a}), return_sign=True)[0]",
    "stats.multivariate_normal.logpdf({a}, np.zeros({a}.shape[-1]), W @ W.T + np.eye(len(W)))",
    "np.gradient({a}, axis=-1)", "np.gradient({a}, 0.5 + s, axis=0, edge_order=2)",
    "stats.t._logpdf({a}, 3.0 + s)", "stats.norm._logcdf({a})",
    # what a computed mask picks (its shape is left out; the rest is specialised)
    "np.sum({a}[{a} > 0.1] ** 2)", "np.sum(np.tanh({a}[np.abs({a}) < 0.9]) * 2.0) + np.sum({a})",
    "np.sum(np.log(1.0 + ({a}[{a} > -0.3] + 0.5) ** 2)) * 3.0",     # a scaled sum of a pick
    "np.sum({a}[np.nonzero({a} > -0.2)] * 1.5)",
    "np.sum(({a}[({a} > -0.5) & ({a} < 0.8)] - 0.2) ** 2) / 2.0",   # (optimise/masked_picks.py)
    # a sum of a product with a factor that broadcasts (optimise/filled_products.py), a
    # reshape's cotangent (matrix_axes.reshaped_like), a negation through maps (negation.py)
    "np.sum({a} * np.arange(1.0, {a}.shape[-1] + 1.0))",
    "np.mean(({a} - 0.5) * np.linspace(-1.0, 1.0, {a}.shape[-1]))",
    "np.sum(np.tanh({a}.reshape(-1, 1)) * np.array([1.0, -0.5]))",
    "np.sum(np.maximum(0.0, 1.0 - np.cos({a}) * (W[0] @ W[0])))",
    # convolutions and polynomials whose one cotangent is read (optimise/picked_cotangents.py)
    "np.convolve({a}.ravel(), np.array([0.25, 0.5, 0.25]), mode='same')",
    "np.correlate({a}.ravel(), np.array([1.0, -0.5]), mode='valid')",
    "np.convolve({a}.ravel(), np.array([0.5, -1.0, 0.25]))",
    "np.sum(np.correlate(np.linspace(-1.0, 1.0, 7), {a}.ravel()[:2], 'full'))",
    "np.polyval({a}.ravel()[:3], np.linspace(-1.0, 1.0, 5))",
    "np.interp(np.linspace(-2.0, 2.0, 9), np.linspace(-1.5, 1.5, {a}.size), {a}.ravel())",
    # axes moved (specialised code calls the array's methods: optimise/matrix_axes.py)
    "np.moveaxis({a}, 0, -1)", "np.transpose({a})", "np.swapaxes({a}, 0, -1) * 0.5",
    "np.transpose(np.moveaxis({a}, -1, 0)) + 0.1",
]


class Program:
    """The text of one generated module and the arguments to call its ``program`` with."""

    def __init__(self, text, args, seed):
        self.text = text
        self.args = args
        self.seed = seed


def generate(rng, seed):
    """One random :class:`Program` (``rng`` a ``random.Random``; ``seed`` names it)."""
    return _Builder(rng, seed).build()


# how program_of_rows reads x out of its stack xs, by the kind of index k it is given
ROW_READS = [("int", "xs[k]"), ("int", "xs[k:k + 1][0]"), ("array", "xs[k][0]"),
             ("list", "xs[k[0]]"), ("mask", "xs[k][0]")]


class _Builder:
    def __init__(self, rng, seed):
        self.rng = rng
        self.seed = seed
        # a stream of its own for the statements added last (a helper that writes), so that
        # the programs of a seed are otherwise the same as before them
        self.extra = random.Random(f"{seed}-extra")
        shape, other = rng.choice(SHAPES)
        values = np.random.default_rng(rng.randrange(2 ** 32))
        if shape == ():
            self.args = (float(0.7 * values.standard_normal()), float(0.7 * values.standard_normal()),
                         float(0.5 + values.random()), 0.5 * values.standard_normal((2, 2)))
        else:
            self.args = (0.7 * values.standard_normal(shape), 0.7 * values.standard_normal(other),
                         float(0.5 + values.random()),
                         0.5 * values.standard_normal((shape[-1], shape[-1])))
        self.namespace = {}
        exec(HELPERS, self.namespace)
        self.prelude = ["def loc(a):", "    return np.tanh(a * 2.0) + a",
                        "lam = lambda a: a * a * 0.5 + a"]
        exec("def loc(a):\n    return np.tanh(a * 2.0) + a\nlam = lambda a: a * a * 0.5 + a",
             self.namespace)
        self.namespace.update(x=self.args[0], y=self.args[1], s=self.args[2], W=self.args[3])
        self.names = ["x", "y", "s", "W"]
        self.lines = []
        self.counter = 0

    # -- the program ----------------------------------------------------------------
    def build(self):
        self.scalar_output = self.rng.random() > 0.2
        makers = [self._assign] * 6 + [self._write, self._if, self._for, self._while,
                                       self._container, self._rows, self._early_return,
                                       self._complex, self._checkpointed, self._release,
                                       self._normalised, self._standardised, self._factored,
                                       self._recurrence, self._unit, self._parts,
                                       self._summed, self._contracted]
        for _ in range(self.rng.randint(3, 9)):
            self.rng.choice(makers)()
        returned = self._returned()
        body = self.prelude + self.lines + [f"return {returned}"]
        text = HELPERS + "\n\ndef program(x, y, s, W):\n" + textwrap.indent("\n".join(body), "    ")
        if self.rng.random() < 0.25:       # the same program returning (output, aux) too
            early = [line + ", 'early'" if line.strip().startswith("return ")
                     and not self.lines[k - 1].startswith("def ") else line   # (a local def's)
                     for k, line in enumerate(self.lines)]
            body = self.prelude + early + [f"return {returned}, {self._aux()}"]
            text += "\n\ndef program_with_aux(x, y, s, W):\n" + textwrap.indent("\n".join(body), "    ")
        if self.rng.random() < 0.15:       # the same program taking y, s, W through *args
            # (copies: a function that writes into what its caller passed is refused)
            body = (["x = x * 1.0", "y = rest[0] * 1.0", "s = rest[1]", "W = rest[2] * 1.0"]
                    + self.prelude + self.lines + [f"return {returned}"])
            text += ("\n\ndef program_with_varargs(x, *args):\n    return program_spread(x, *args)"
                     "\n\n\ndef program_spread(x, *rest):\n" + textwrap.indent("\n".join(body), "    "))
        if self.rng.random() < 0.2:        # the same program reading x and y from a dict
            body = (["x = p['x'] * p.get('unit', 1.0)", "y = p['y'] * 1.0"] + self.prelude + self.lines
                    + [f"return {returned}"])
            text += "\n\ndef program_of_a_dict(p, s, W):\n" + textwrap.indent("\n".join(body), "    ")
        if self.extra.random() < 0.15:     # the same program reading x and y from a list
            reads = self.extra.choice([      # unpacked, or read from its end and by slices
                ["x, y = xy"], ["x, y = xy[-2], xy[-1]"], ["x = xy[0]", "y = xy[-1]"],
                ["x, = xy[:-1]", "y = xy[-1]"], ["y, x = xy[::-1]"], ["x = xy[:1][0]", "y = xy[1:][-1]"]])
            body = (reads + ["x = x * 1.0", "y = y * 1.0"] + self.prelude + self.lines
                    + [f"return {returned}"])
            text += "\n\ndef program_of_a_list(xy, s, W):\n" + textwrap.indent("\n".join(body), "    ")
        if self.rng.random() < 0.15:       # the same program as a method reading W from self
            body = ["W = self.weights()"] + self.prelude + self.lines + [f"return {returned}"]
            body = [line.replace("LOOPED.step(", "self.looped(")       # calls through self in
                    .replace("LOOPED_OWN.step(", "self.looped_own(")   # a loop
                    for line in body]
            text += ("\n\nclass Holder:\n    def __init__(self, W):\n        self.W = W\n\n"
                     "    def weights(self):\n        return self.W * 1.0\n\n"
                     "    def looped(self, a):\n        return LOOPED.step(a)\n\n"
                     "    def looped_own(self, a):\n        return LOOPED_OWN.step(a)\n\n"
                     "    def program_as_method(self, x, y, s):\n"
                     + textwrap.indent("\n".join(body), "        "))
        if self.rng.random() < 0.2:        # the same program picking x out of a stack by `k`
            kind, read = self.rng.choice(ROW_READS)
            body = [f"x = {read} * 1.0"] + self.prelude + self.lines + [f"return {returned}"]
            text += (f"\n\nROWS_INDEX = {kind!r}\n\n\ndef program_of_rows(xs, y, s, W, k):\n"
                     + textwrap.indent("\n".join(body), "    "))
        if self.rng.random() < 0.2:        # the same program under branches on options
            body = ["if c > 0.0 and mode == 'on':", "    x = x * c", "elif c < -1.0:",
                    "    x = x * (-c - 1.0)", "else:", "    x = x * 1.0"]
            body += self.prelude + self.lines + [f"return {returned}"]
            text += ("\n\ndef program_with_options(x, y, s, W, c, mode):\n"
                     + textwrap.indent("\n".join(body), "    "))
        return Program(text + "\n", self.args, self.seed)

    def _aux(self):
        """An auxiliary value: a dict of some of the program's values, a count and a label,
        or one value (has_aux=True: returned unchanged, never differentiated)."""
        values = self.rng.sample(self._values(), min(2, len(self._values())))
        if self.rng.random() < 0.3:
            return values[0]
        entries = ", ".join(f"{v!r}: {v}" for v in values)
        return "{" + entries + ", 'count': len(W), 'label': 'aux'}"

    def _fresh(self):
        self.counter += 1
        return f"v{self.counter}"

    def _try(self, lines, stand_in=None):
        """Run ``lines`` on the sample values; keep them when they run and give finite values.
        ``stand_in``: lines computing the same values that run where ``lines`` cannot (a
        derivative of code exec made, which has no source)."""
        namespace = dict(self.namespace)
        try:
            with np.errstate(all="raise"):
                exec("\n".join(stand_in or lines), namespace)
        except Exception:
            return False
        for name, value in namespace.items():
            if name not in self.namespace or self.namespace[name] is not value:
                if isinstance(value, (np.ndarray, float, np.floating)) and not (
                        np.all(np.isfinite(value)) and np.all(np.abs(value) < 1e4)):
                    return False
        self.namespace = namespace
        self.lines.extend(lines)
        for line in lines:
            head = line.strip().split("=")[0].strip()
            if head.isidentifier() and head not in self.names and not line.startswith(" "):
                self.names.append(head)
        return True

    def _arrays(self):
        return [n for n in self.names if isinstance(self.namespace.get(n), np.ndarray)
                and self.namespace[n].dtype.kind == "f"]

    def _values(self):
        return [n for n in self.names if isinstance(self.namespace.get(n), (np.ndarray, float))
                and np.asarray(self.namespace[n]).dtype.kind == "f"]

    def _pick(self, pool=None):
        pool = pool if pool is not None else self._values()
        return self.rng.choice(pool)

    def _shape(self, name):
        return np.shape(self.namespace[name])

    def _compatible(self, a):
        """A value whose shape broadcasts with ``a``'s."""
        options = []
        for b in self._values():
            try:
                np.broadcast_shapes(self._shape(a), self._shape(b))
                options.append(b)
            except ValueError:
                pass
        return self.rng.choice(options)

    def _expression(self, depth=0):
        a = self._pick()
        kind = self.rng.random()
        if kind < 0.35 or depth > 1:
            return self.rng.choice(UNARY).format(a=a)
        if kind < 0.7:
            return self.rng.choice(BINARY).format(a=a, b=self._compatible(a))
        if kind < 0.85 and np.ndim(self.namespace[a]) >= 1:
            return self.rng.choice(REDUCTIONS).format(a=a)
        if kind < 0.92 and np.ndim(self.namespace[a]) >= 1 \
                and self._shape(a)[-1] == self.args[3].shape[0]:
            if np.ndim(self.namespace[a]) == 2 and self.extra.random() < 0.3:   # a stack @ W
                return f"np.sum(np.tanh(np.stack([{a}, {a} * 0.5 - 1.0]) @ W), axis=0)"
            if self.extra.random() < 0.2:    # a solve with a symmetric matrix (a Gaussian's)
                return (f"0.5 * np.sum({a}.T * np.linalg.solve(W @ W.T + np.eye(len(W)), "
                        f"{a}.T))")
            return f"np.tanh({a} @ W)"
        if np.ndim(self.namespace[a]) >= 2:
            return self.rng.choice([f"{a}[0]", f"{a}[1:]", f"{a}[..., ::2]", f"{a}[-1, ...] * 2.0",
                                    f"{a}.T", f"{a}[np.array([0, 1, 0])]",
                                    f"{a}[np.array([1, 0, 1])].sum(axis=0)",   # rows summed
                                    f"{a}[1:].mean(axis=0)"])
        return f"max(np.sum({a}), np.sum({a} * {a}) * 0.5) + min(float(np.sum({a})), 1.0)"

    # -- statements -------------------------------------------------------------------
    def _assign(self):
        if self.extra.random() < 0.04 and self.names:    # a helper that writes, run as it is
            self._try([f"helper_note({self.extra.choice(self.names)})"])
        if self.rng.random() < 0.15:
            return self._assign_in_parallel()
        for _ in range(5):
            if self._try([f"{self._fresh()} = {self._expression()}"]):
                return

    def _assign_in_parallel(self):
        """``a, b = e1, e2``: two fresh names, or two names already bound, each value reading
        the other's old value (Python evaluates both before it assigns either)."""
        values = [v for v in self._values() if v != "W"]     # the twins read len(W)
        for _ in range(5):
            if len(values) >= 2 and self.rng.random() < 0.5:
                a, b = self.rng.sample(values, 2)
                line = (f"{a}, {b} = {b} * 0.5 + np.sum({a}) * 0.1, "
                        f"np.tanh({a}) - 0.1 * np.sum({b})")
                if self._try([line]):
                    return
            else:
                first, second = self._fresh(), self._fresh()
                if self._try([f"{first}, {second} = {self._expression()}, {self._expression()}"]):
                    self.names += [first, second]
                    return

    def _write(self):
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1
                  and self._shape(a)[0] >= 2]
        if not arrays:
            return self._assign()
        a = self.rng.choice(arrays)
        z = self._fresh()
        start = self.rng.choice([f"{z} = np.zeros_like({a})", f"{z} = {a} * 1.0", f"{z} = {a}.copy()"])
        index = self.rng.choice(["0", "1:", "-1", "np.array([1, 1])", "np.array([0, 1, 0])",
                                 f"{a} > 0.0", "..."])
        value = self.rng.choice([f"np.sin({a}[{index}])", f"{a}[{index}] * {a}[{index}]", "2.0",
                                 f"np.tanh({a}[{index}]) + 1.0"])
        op = self.rng.choice(["=", "+=", "*=", "-="])
        lines = [start, f"{z}[{index}] {op} {value}"]
        if self._shape(a)[-1] >= 3 and self.rng.random() < 0.15:   # np.put_along_axis, a repeat
            shape = self._shape(a)
            index = f"np.zeros({shape[:-1] + (3,)}, dtype=int) + np.array([2, 0, 2])"
            lines = [start, f"np.put_along_axis({z}, {index}, np.sin({a}[..., :3]), axis=-1)"]
        if a == "x" and not self.lines and self.rng.random() < 0.6:
            z, lines = "x", [f"x[{index}] {op} {value}"]   # into the argument, before any view
        if self.rng.random() < 0.3:
            lines += [f"for i in range({self._shape(a)[0]}):",
                      f"    {z}[i] += {self.rng.choice(['1.0', '2.0 * np.pi', f'np.cos({a}[i])'])}"]
        elif self.rng.random() < 0.2:           # a recurrence through the array's last row
            rows = self._shape(a)[0]
            lines += [f"for i in range(1, {rows}):",
                      self.rng.choice([f"    {z}[i] = np.tanh({a}[i] * 0.5 + {z}[i - 1] * 0.8)",
                                       f"    {z}[i] = np.tanh({a}[i] * 0.5) * {z}[0]"])]
        if self.rng.random() < 0.2:             # a chain of subscripts, into a list of arrays
            hs, rows = self._fresh(), self._shape(a)[0]
            lines += [f"{hs} = [{z} * 0.5, {z} * 0.25]",
                      "for i in range(2):", f"    {hs}[i][{rows - 1}] {op} np.sin({a}[0]) * 0.5",
                      f"{z} = {hs}[0] + {hs}[1]"]
        self._try(lines)

    def _if(self):
        a, target = self._pick(), self._fresh()
        value = self._expression()
        other = value.replace("np.sin", "np.cos") if "np.sin" in value else f"({value}) * 0.5 + 1.0"
        test = self.rng.choice([f"np.sum({a}) > 0.0", f"np.mean({a}) < 0.3", "s > 0.8"])
        lines = [f"if {test}:", f"    {target} = {value}"]
        if self.rng.random() < 0.5:
            lines += [f"elif np.sum({a}) < -1.0:", f"    {target} = ({value}) * 2.0"]
        lines += ["else:", f"    {target} = {other}"]
        self._try(lines)

    def _for(self):
        a, acc = self._pick(), self._fresh()
        if np.ndim(self.namespace["W"]) == 2 and self.rng.random() < 0.15:
            # data (a constant) through a stack of layers: the backward loop's cotangent of
            # the layers' input is not computed at its last step (optimise/last_steps.py)
            n = self._shape("W")[0]
            self._try([f"{acc} = np.linspace(0.5, 1.0, {n})",
                       f"for {acc}_w in [W, W * 0.5, np.tanh(W)][:{self.rng.randint(1, 3)}]:",
                       f"    {acc} = np.tanh({acc}_w @ {acc})",
                       f"{acc} = np.sum({acc}) * {a}"])
            return
        rows = [n for n in self._arrays() if np.ndim(self.namespace[n]) >= 1
                and 2 <= len(self.namespace[n]) <= 6]
        if rows and self.rng.random() < 0.2:
            # a pair potential: a sum of squares read only by the derivative (the fused
            # gradient's dot product: optimise/derivative_only.py), or by a branch too
            a, d, r2 = self.rng.choice(rows), self._fresh(), self._fresh()
            square = self.rng.choice([f"np.sum(({a}[i] - {a}[j]) ** 2)", f"np.sum({d} * {d})",
                                      f"({d} ** 2).sum()"])
            energy = self.rng.choice([f"1.0 / (1.0 + {r2})", f"np.sqrt(1.0 + {r2})",
                                      f"{r2} * {r2} * 0.1", f"np.exp(-{r2}) if {r2} < 2.0 else 0.0"])
            self._try([f"{acc} = 0.0", f"for i in range(len({a})):",
                       f"    for j in range(i + 1, len({a})):",
                       f"        {d} = {a}[i] - {a}[j]", f"        {r2} = {square}",
                       f"        {acc} += {energy}"])
            return
        step = self.rng.choice([f"np.tanh({acc} * 0.9 + {a} * i)", f"{acc} + np.sin({a} + i)",
                                f"{acc} * 0.5 + helper_mix({a}, {acc})"])
        augmented = self.rng.random() < 0.3
        start = "s * 1.0" if self.rng.random() < 0.25 else f"{a} * 1.0"   # may change shape
        bounds = self.rng.choice([f"{self.rng.randint(1, 4)}", f"1, {self.rng.randint(2, 5)}",
                                  f"0, {self.rng.randint(2, 6)}, 2", f"{self.rng.randint(1, 3)}, 6, 2"])
        lines = [f"{acc} = {start}", f"for i in range({bounds}):"]
        jump = self.rng.random()
        if jump < 0.25:
            lines += ["    if i == 1:", "        continue"]
        elif jump < 0.5:
            lines += [f"    if np.sum({acc}) > 2.0:", "        break"]
        lines += [f"    {acc} += np.sin({a} * i) * 0.5" if augmented else f"    {acc} = {step}"]
        if self.rng.random() < 0.3:              # runs when no break ended the loop
            lines += ["else:", f"    {acc} = {acc} * 0.5 + np.cos({acc}) * 0.5"]   # bounded
        self._try(lines)

    def _release(self):
        """A temporary released with ``del`` after its one use (a ``del`` srctrans drops);
        the names read after it never include it (its value is gone)."""
        tmp, name = self._fresh(), self._fresh()
        self._try([f"{tmp} = {self._expression()}", f"{name} = {tmp} * 0.5 + np.tanh({tmp})",
                   f"del {tmp}"])

    def _checkpointed(self):
        """A loop marked ``st.checkpointed``: carried values, a branch, a list it grows or an
        array it writes into, a helper call, over a range or the rows of a list."""
        a, acc, aux = self._pick(), self._fresh(), self._fresh()
        snapshots = self.rng.choice(["1", "2", "None", "snapshots=3"])
        steps = self.rng.randint(0, 5)
        over = self.rng.random()
        if over < 0.6:
            header, index = f"for i in st.checkpointed(range({steps}), {snapshots}):", "i"
        else:
            header = (f"for i, w in st.checkpointed(enumerate([{a} * 0.5, np.sin({a}), {a} + 1.0]"
                      f"[:{steps}]), {snapshots}):")
            index = "i"
        body = self.rng.choice([
            [f"    {acc} = np.tanh({acc} * 0.9 + {a} * {index})"],
            [f"    {aux} = np.sin({acc}) * {a}", f"    {acc} = {acc} * 0.5 + {aux} * {aux}"],
            [f"    if np.sum({acc}) > 0.5:", f"        {acc} = {acc} * 0.8 + np.cos({a})",
             "    else:", f"        {acc} = helper_mix({acc}, {a})"],
            [f"    {aux}.append({acc} * 0.5)", f"    {acc} = np.sin({acc}) + {aux}[-1] * {a}"],
            [f"    {acc} = {acc} + helper_loop({acc}, 2) * 0.3"],
        ])
        if over >= 0.6:
            body = body + [f"    {acc} = {acc} + w * 0.25"]
        lines = [f"{acc} = {a} * 1.0", f"{aux} = []" if any(".append" in b for b in body)
                 else f"{aux} = {a} * 0.0", header] + body
        if any(".append" in b for b in body):
            lines.append(f"{acc} = {acc} + sum({aux}) * 0.5" if steps else f"{acc} = {acc} * 1.0")
        self._try(lines)

    def _while(self):
        """A counted ``while`` loop: most become ``range`` loops (normalize/counted_loops.py),
        those whose counter is read after them or starts in a tuple stay ``while`` loops."""
        a, acc, k = self._pick(), self._fresh(), self._fresh()
        step = f"    {acc} = {acc} * 0.9 + np.sin({acc})"
        form = self.rng.randrange(6)
        if form == 0:                      # started in one tuple assignment: kept
            lines = [f"{acc}, {k} = {a} * 0.5, 0", f"while {k} < {self.rng.randint(1, 3)}:",
                     step, f"    {k} += 1"]
        elif form == 1:                    # a float bound, the counter read in the body
            lines = [f"{acc} = {a} * 0.5", f"{k} = 0", f"while {k} <= {self.rng.choice(['1.5', '0.5', '2'])}:",
                     f"    {acc} = {acc} * 0.9 + np.sin({acc}) * ({k} + 1) * 0.3",
                     f"    {k} = {k} + 1"]
        elif form == 2:                    # counting down from a length
            lines = [f"{acc} = {a} * 0.5", f"{k} = len(W) - {self.rng.randint(1, 3)}",
                     f"while {k} >= 0:", step, f"    {k} -= 1"]
        elif form == 3:                    # counting down by two from a float, to a bound
            lines = [f"{acc} = {a} * 0.5", f"{k} = 3.5", f"while 0 < {k}:",
                     f"    {acc} = {acc} * 0.8 + np.cos({acc}) * {k} * 0.2", f"    {k} -= 2"]
        elif form == 4:                    # the counter read after the loop: kept
            lines = [f"{acc} = {a} * 0.5", f"{k} = 0", f"while {k} < 2:", step, f"    {k} += 1",
                     f"{acc} = {acc} * {k} * 0.5"]
        else:
            lines = [f"{acc} = {a} * 0.5", f"{k} = 0", f"while {k} < {self.rng.randint(1, 3)}:",
                     step, f"    {k} += 1"]
        if self.rng.random() < 0.3 and form != 4:       # (the loop's last line: its step)
            lines += ["else:", f"    {acc} = np.tanh({acc}) + 0.5"]
        self._try(lines)

    def _step_dicts(self, a, b, t, parts):
        """States kept in dicts by step (names after normalize/step_dicts.py, or dicts)."""
        form = self.rng.randrange(5)
        if form == 0:                  # the last step read after the loop
            return [f"{parts} = {{}}", f"{parts}[-1] = {a} * 1.0", f"{t} = {b} * 0.0",
                    "for k in range(3):",
                    f"    {parts}[k] = np.tanh({parts}[k - 1] * {b}) + {parts}[k - 1] * 0.5",
                    f"    {t} = {t} + {parts}[k] * {parts}[k - 1]",
                    f"{t} = {t} + {parts}[2]"]
        if form == 1:                  # two dicts made together, a fresh entry written into
            other = self._fresh()
            return [f"{parts}, {other} = {{}}, {{}}", f"{parts}[-1] = {a} * 1.0",
                    f"{t} = {b} * 0.0", "for k in range(2):",
                    f"    {other}[k] = np.zeros(np.shape({a} * {b}))",
                    f"    {other}[k][...] = np.cos({parts}[k - 1]) * {b}",
                    f"    {parts}[k] = np.tanh({other}[k] + {parts}[k - 1] * 0.5)",
                    f"    {t} = {t} + {parts}[k] * {other}[k]"]
        if form == 2:                  # a range from 1, the step before written at 0
            return [f"{parts} = {{}}", f"{parts}[0] = np.sin({a})", f"{t} = {b} * 0.0",
                    "for k in range(1, 3):", f"    {parts}[k] = {parts}[k - 1] * {b} + 0.25",
                    f"    {t} = {t} + np.cos({parts}[k]) * {parts}[k - 1]"]
        if form == 4:                  # the step of enumerate
            return [f"{parts} = {{}}", f"{parts}[-1] = np.cos({a})", f"{t} = {a} * 0.0",
                    f"for k, u in enumerate([{b}, {a} * 0.5]):",
                    f"    {parts}[k] = np.tanh({parts}[k - 1] * u) + u",
                    f"    {t} = {t} + {parts}[k] * {parts}[k - 1]"]
        return [f"{parts} = {{}}", f"{parts}[-1] = {a} * 1.0", f"{t} = {b} * 0.0",   # stays a dict
                "for k in range(2):", f"    {parts}[k] = {parts}[k - 1] * {b}",
                f"    {parts}[k] = np.sin({parts}[k]) + {t}", f"    {t} = {t} + {parts}[k]"]

    def _container(self):
        a = self._pick()
        b = self._compatible(a)
        t, parts = self._fresh(), self._fresh()
        choice = self.rng.randrange(30)
        if choice == 29 and self._shape(a):   # the log of a softmax's probabilities (one call)
            other = self._fresh()
            shift = self.rng.choice([f" - np.max({a}, axis=-1, keepdims=True)",
                                     f" - {a}.max(axis=-1, keepdims=True)", ""])
            total = self.rng.choice([f"np.sum({parts}, axis=-1, keepdims=True)",
                                     f"{parts}.sum(axis=-1, keepdims=True)"])
            lines = [f"{parts} = np.exp({a}{shift})", f"{other} = {parts} / {total}",
                     f"{t} = np.log({other}) * {b}"]
            if self.rng.random() < 0.3:                 # the probabilities read again
                lines.append(f"{t} = {t} + {other} * {other}")
        elif choice == 28:             # np.logaddexp folded over a stack's slices (one call)
            start = self.rng.choice([f"{t} = {parts}[0]", f"{t} = -np.inf"])
            first = 1 if start.endswith("[0]") else 0
            fold = self.rng.choice([f"np.logaddexp({t}, {parts}[j])",
                                    f"np.logaddexp({parts}[j], {t})"])
            slices = [f"{a} * 1.0", f"np.sin({a})", f"np.cos({a}) * 0.5", f"np.tanh({a})",
                      f"{a} * {a} * 0.3", f"np.exp(-{a} * {a})"][:self.rng.choice([3, 6])]
            lines = [f"{parts} = np.stack([{', '.join(slices)}])", start,         # (six: read
                     f"for j in range({first}, {len(slices)}):", f"    {t} = {fold}"]  # at once)
        elif choice == 27:             # a tuple packed, then unpacked (bound to its entries)
            other = self._fresh()
            lines = self.rng.choice([
                [f"{t}, {parts} = helper_cached({a}, {b})",
                 f"{t} = {t} + {parts}['t'] * {parts}['b']"],
                [f"{parts} = helper_cached({a}, {b})", f"{t}, {other} = {parts}",   # also indexed
                 f"{t} = {t} * {parts}[0] + {other}['t']"],
                [f"{parts} = (np.sin({a}), {b} * 2.0)", f"{other} = {parts}",
                 f"{t}, {other} = {other}", f"{t} = {t} * {other}",
                 f"{other}, {t} = {parts}", f"{t} = {t} + {other}"],
            ])
        elif choice == 26:             # a cache dict written and read at constant keys
            other = self._fresh()
            copy = (f"dict({parts}, s=np.sin({a}))" if self.rng.random() < 0.5
                    else f"{{**{parts}, 's': np.sin({a})}}")
            lines = [f"{parts} = {{'z': {a} * {b}}}", f"{other} = {copy}",
                     f"{t} = {other}['z'] * {other}['s']", f"{other}['z'] = np.tanh({t})",
                     f"{parts}['y'] = {other}['z'] + {parts}['z']",
                     f"{t} = {t} + {parts}['y'] * {other}['s']"]
        elif choice == 25:
            lines = self._step_dicts(a, b, t, parts)
        elif choice == 24:             # a dict's matrix read by rows in a loop, a row twice
            lines = [f"{parts} = {{'w': W, 'b': {a}}}", f"{t} = 0.0", "for j in range(3):",
                     f"    {t} = {t} + np.sum(np.tanh({parts}['w'][j % 2] * 0.5)) * {parts}['b']"]
        elif choice == 23:             # the nested derivative of a closure over the program's values
            lines = [f"def {parts}(u):", f"    return np.sum(np.sin(u * {a}) * u)",
                     f"{t} = st.grad({parts})({a} * 1.0) * {a}"]
            # (st.grad cannot read code exec runs: the sample values come from the formula)
            return self._try(lines, stand_in=[
                f"{t} = (np.sin({a} * {a}) + {a} * {a} * np.cos({a} * {a})) * {a}"])
        elif choice == 22 and self.rng.random() < 0.4:    # a dict state, each entry read twice
            lines = [f"{parts} = {{'h': {a}, 'c': np.sin({b})}}", "for _ in range(2):",
                     f"    {parts} = {{'h': np.tanh({parts}['h']) * {parts}['c'], "
                     f"'c': {parts}['c'] * 0.5 + {parts}['h']}}",
                     f"{t} = {parts}['h'] + {parts}['c']"]
        elif choice == 22 and self.rng.random() < 0.3:    # a state with a step counter, over
            lines = [f"{parts} = Carry({a}, 0)", "for _ in range(3):",     # its cotangent's fast
                     f"    {parts} = Carry(np.tanh({parts}.h) * {b} + {parts}.h, {parts}.c + 1)",
                     f"{t} = {parts}.h * {parts}.c"]                   # paths (runtime/reshaping)
        elif choice == 22:             # a named tuple carried through a loop
            lines = [f"{parts} = Carry({a}, np.sin({b}))", "for _ in range(2):",
                     f"    {parts} = Carry(np.tanh({parts}.h) * {parts}.c, {parts}.c * 0.5)",
                     f"{t} = {parts}.h + {parts}[1]"]
        elif choice == 21 and self.rng.random() < 0.5:    # a layer made inside, then called
            lines = [f"{parts} = Affine(np.cos({a}), {b} * 0.5)", f"{t} = {parts}({a}) * 0.5"]
        elif choice == 21:           # a dataclass made inside, keyword and default fields
            lines = [f"{parts} = Pair({a}, second=np.cos({b}))",
                     f"{t} = {parts}.first * {parts}.weight + {parts}.second"]
        elif choice == 20:             # a dict copied with keys added, as a statement
            other = self._fresh()
            lines = [f"{parts} = {{'p': {a}, 'name': 'layer'}}",
                     f"{other} = dict({parts}, q={parts}['p'] * {b}, r=2.0)",
                     f"{t} = {other}['q'] * {other}['r'] + {other}['p']"
                     + (f" + {parts}['p'] * 0.5" if self.rng.random() < 0.5 else "")]
        elif choice == 19:           # a module imported where it is used
            lines = ["import math", "from numpy import tanh as th",
                     f"{t} = th({a}) * math.pi + {b} * math.e"]
        elif choice == 18:           # a list iterated once as built, rebound inside the loop
            lines = [f"{parts} = [{a}, np.sin({b}), {a} * {b}]", f"{t} = {a} * 0.5",
                     f"for u in {parts}:", f"    {t} = {t} * 0.5 + u * {b}",
                     f"    {parts} = [{t}, {t}, {t}]"]
        elif choice == 17:           # reversed(...) of a list, of a slice and of a range
            lines = [f"{parts} = [{a}, np.sin({b}) * 2.0, {a} * {a}]", f"{t} = {b} * 0.5",
                     f"for u in reversed({parts}):", f"    {t} = {t} * 0.7 + u * np.cos({t})",
                     f"for k, u in enumerate(reversed({parts}[1:])):", f"    {t} = {t} + u * k",
                     "for k in reversed(range(1, 3)):", f"    {t} = {t} * 0.5 + {parts}[k]"]
        elif choice == 16 and self.rng.random() < 0.4:    # states kept in a dict by step
            lines = self._step_dicts(a, b, t, parts)
        elif choice == 16:             # a dict built from another, written, iterated by key
            other = self._fresh()
            lines = [f"{parts} = {{'p': {a}, 'q': np.sin({b})}}",
                     f"{other} = {{k: v * 2.0 for k, v in {parts}.items()}}",
                     f"{other}['p'] = {other}['q'] * {a}",
                     f"{t} = {parts}['p'] * 0.5",
                     f"for key in {other}:", f"    {t} = {t} + {other}[key] * {parts}['q']"]
        elif choice == 15:             # functions called through a loop variable
            lines = [f"{t} = {a} * 0.5",
                     "for act in [np.sin, helper_branch, np.tanh]:",
                     f"    {t} = {t} + act({b}) * {a}"]
        elif choice == 14:             # nested tuple targets of a loop
            lines = [f"{t} = {a} * 0.0",
                     f"for k, (u, w) in enumerate(zip([{a}, {b}], [np.sin({b}), {a} * 2.0])):",
                     f"    {t} = {t} + u * w * (k + 1.0)"]
        elif choice == 13:             # dict(...) forms and the dict methods
            lines = [f"{parts} = dict(p={a}, q=np.sin({b}))",
                     f"{parts} = dict(zip(['r', 'p'], [{parts}['q'] * 2.0, {parts}.get('p', {b})]))",
                     f"{t} = {parts}.get('z', 0.5) * {parts}['r'] + sum(list({parts}.values()))",
                     f"for key, val in dict({parts}).items():", f"    {t} = {t} + val * 0.25"]
        elif choice == 12:           # sorted(...) by a key, and a dict's keys in order
            lines = [f"{parts} = sorted([{a}, {b} * 2.0, np.sin({a})], key=lambda v: float(np.sum(v)))",
                     f"{t} = {parts}[0] * 2.0 + {parts}[-1]",
                     f"for key in sorted({{'q': {a}, 'p': {b}}}):", f"    {t} = {t} * 0.5 + len(key)"]
        elif choice == 11:           # max and min with key=
            lines = [f"{t} = max([{a}, {b} + 0.5, -{a}], key=lambda v: float(np.sum(v * v)))",
                     f"{t} = {t} * min({a}, {b}, key=np.sum)"]
        elif choice == 10:           # concatenated and repeated sequences, an entry replaced
            lines = [f"{parts} = [{a}] + [{b} * 2.0] + list(({a}, {b})[1:])",
                     f"{parts}[0] = {parts}[0] * {parts}[1]",
                     f"{t} = ({parts}[0], np.sin({b})) * 2",
                     f"{t} = {t}[0] + {t}[3] * {parts}[-1]"]
        elif choice == 9:            # a list read while it grows: its last entries, all of it
            lines = [f"{parts} = [{a}]", "for k in range(3):",
                     f"    {parts}.append(np.sin({parts}[-1]) * {b} + np.sum(np.stack({parts}), axis=0) * 0.1 + {parts}[k - 1] * 0.5)",
                     f"{t} = {parts}[-1] * {parts}[-2]"]
        elif choice == 8:            # a NumPy function returning a list, read more than once
            lines = [f"{parts} = np.array_split({a}, 2, axis=-1)",
                     f"{t} = np.sum({parts}[0] * {parts}[0]) + np.sum(np.sin({parts}[-1]) * {parts}[0][..., :1])"]
        elif choice == 6:            # displays passed to a helper, nested and through *rest
            lines = [self.rng.choice([
                f"{t} = helper_seq([{a}, ({b}, {a} * 2.0)], ({a}, np.sin({b})))",
                f"{t} = helper_forward({a}, {b}, {a} * s)",
                f"{t} = helper_options({a}, {b}) + helper_options({a}, {b}, s)"])]  # by len(rest)
        elif choice == 7:          # displays appended to a list
            lines = [f"{parts} = []", f"{parts}.append([{a}, {b} * 2.0])",
                     f"{parts}.append(({a} * {a},))", f"{t} = {parts}[0][1] * {parts}[1][0]"]
        elif choice == 0:
            lines = [f"{parts} = [{a}, {b} * 2.0]", f"{t} = {parts}[0] * {parts}[1] + {parts}[-1]"]
        elif choice == 1:
            lines = [f"{parts} = {{'p': {a}, 'q': np.sin({b})}}", f"{t} = {parts}['p'] * {parts}['q']",
                     f"for key, val in {parts}.items():", f"    {t} = {t} + val * 0.5"]
        elif choice == 2:
            lines = [f"{parts}, {t} = {a} * 2.0, np.cos({b})", f"{t} = {t} * {parts}"]
        elif choice == 3:
            lines = [f"{t} = sum([np.sum({a} * k) for k in range(3)])"]
        elif choice == 4 and self.rng.random() < 0.5:    # two lists made by one statement
            other = self._fresh()
            lines = [f"{parts}, {other} = [], []", "for k in range(3):",
                     f"    {parts}.append({a} * (k + 1.0))", f"    {other}.append(np.sin({b}) * k)",
                     f"{t} = np.stack({parts}) + {other}[-1]"]
        elif choice == 4:
            lines = [f"{parts} = []", "for k in range(3):", f"    {parts}.append({a} * (k + 1.0))",
                     f"{t} = np.stack({parts})"]
        else:
            lines = [f"{parts} = ({a}, {b})", f"{t} = {parts}[0] + {parts}[1] * {parts}[0]"]
        self._try(lines)

    def _complex(self):
        """A real value computed through complex ones: phases, parts, FFTs, eigenvalues."""
        a = self._pick()
        b, t, z = self._compatible(a), self._fresh(), self._fresh()
        choices = [
            [f"{z} = np.exp(1j * {a}) * ({b} + 0.5j)",
             f"{t} = np.abs({z}) + np.angle({z} + 2.0) * np.real({z})"],
            [f"{z} = {a} * (1.0 + 0.5j) + {b}.astype(complex)",
             f"{t} = (np.conj({z}) * {z}).real + np.imag({z} ** 2) * 0.5 + abs(complex(1.0, 0.5))"],
            [f"{z} = np.sqrt({a} + 3.0j) / ({b} + 2.0 - 1.0j)",
             f"{t} = np.abs({z}) ** 2 + np.var(np.atleast_1d({z}))"],
        ]
        if np.ndim(self.namespace[a]) >= 1:
            n = self._shape(a)[-1]
            choices += [
                [f"{z} = np.fft.rfft({a}, axis=-1, norm='ortho') * np.exp(-0.3j * np.arange({n // 2 + 1}))",
                 f"{t} = np.fft.irfft({z}, n={n}, axis=-1, norm='ortho') + np.sum(np.abs({z}) ** 2)"],
                [f"{z} = np.fft.fft({a} + 0.5j * {b}, n={n + 1}, axis=-1)",
                 f"{t} = np.real(np.fft.ifft(np.fft.fftshift({z}, axes=-1), axis=-1))[..., :{n}]"],
            ]
        if np.ndim(self.namespace[a]) == 0:
            choices.append([f"{z} = np.linalg.eigvals(W + {a} * np.array([[0.0, 1.0], [-1.0, 0.0]])[:W.shape[0], :W.shape[0]])",
                            f"{t} = np.sum(np.abs({z})) + np.max(np.real({z}))"])
        self._try(self.rng.choice(choices))

    def _factored(self):
        """A Cholesky factor's two solves and log-diagonal: a Gaussian likelihood
        (normalize/cholesky_terms.py), summed or not, its solves nested or in two statements."""
        a = self._pick()
        factor, b, t = self._fresh(), self._fresh(), self._fresh()
        lines = [f"{factor} = np.linalg.cholesky(W @ W.T + (1.5 + np.sum({a} * {a})) * np.eye(len(W)))",
                 f"{b} = W[:, 0] * np.cos(np.sum({a})) + 0.5"]
        if self.rng.random() < 0.5:
            lines.append(f"{t} = np.linalg.solve({factor}.T, np.linalg.solve({factor}, {b}))")
        else:
            inner = self._fresh()
            lines += [f"{inner} = np.linalg.solve({factor}, {b})",
                      f"{t} = np.linalg.solve({factor}.T, {inner})"]
        lines.append(f"{t} = {b} @ {t} * 0.5 + " + self.rng.choice([
            f"np.sum(np.log(np.diag({factor})))", f"np.log(np.diag({factor})).sum()",
            f"np.log(np.diag({factor})) @ {b}"]))
        self._try(lines)

    def _recurrence(self):
        """A scalar recurrence filling a vector of its own: long enough (20 entries) that both
        passes of its fused gradient run on lists of floats (optimise/float_lists.py), or
        short, or dividing, so that its loops keep the entry they write for the next step
        (optimise/carried_entries.py); from 0, its first step reads the last entry."""
        a = self._pick()
        w, acc, t = self._fresh(), self._fresh(), self._fresh()
        n = self.rng.choice([20, 20, 6, 12])
        start = self.rng.choice([1, 1, 1, 0])
        lines = [f"{w} = np.linspace(0.5, 1.5, {n}) * np.sum({a})", f"{acc} = np.zeros({n})",
                 f"{acc}[0] = {w}[0]", f"for k in range({start}, {n}):",
                 f"    {acc}[k] = 0.3 * {w}[k] + "
                 + self.rng.choice([f"0.7 * {acc}[k - 1]", f"(1.0 - 0.3 * s) * {acc}[k - 1]",
                                    f"{acc}[k - 1] / 1.5"]),
                 self.rng.choice([f"{t} = np.sum(({w}[1:] - {acc}[:-1]) ** 2)",
                                  f"{t} = {acc}[-1] * np.sum({a})"])]
        self._try(lines)

    def _rows(self):
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 2]
        if not arrays:
            return self._for()
        a, acc = self.rng.choice(arrays), self._fresh()
        kind = self.rng.random()
        if kind < 0.08:       # an array made, then filled entry by entry in nested loops
            lines = [f"{acc} = np.zeros_like({a})", f"for i in range({a}.shape[0]):",
                     f"    for j in range({a}.shape[1]):",
                     f"        {acc}[i, j] = np.tanh({a}[i, j]) * 0.5 + {a}[i, 0] * {a}[0, j]"]
            if self.rng.random() < 0.5:       # its entries only read through a product
                lines.append(f"{acc} = np.sum({acc} * {a})")
        elif kind < 0.2:      # a recurrence filling a preallocated array (smoothing, RNNs);
            start = self.rng.choice([1, 1, 0])        # from 0, acc[t - 1] is the last row first
            lines = [f"{acc} = np.zeros_like({a})", f"{acc}[0] = {a}[0]",
                     f"for t in range({start}, len({a})):",
                     f"    {acc}[t] = 0.3 * {a}[t] + "
                     + self.rng.choice(["0.7", "(1.0 - 0.3 * s)"])      # (s: loop-invariant)
                     + f" * np.tanh({acc}[t - 1])"]
        elif kind < 0.35:     # a loop over pairs of rows (pairwise energies)
            lines = [f"{acc} = 0.0", f"for i in range(len({a})):",
                     f"    for j in range(i + 1, len({a})):",
                     f"        {acc} = {acc} + np.sum(np.sin({a}[i] - {a}[j]) ** 2)"]
        elif kind < 0.45:     # a loop over (index, index, value) triples
            lines = [f"{acc} = 0.0",
                     f"for i, j, r in [(0, 1, 0.5), (1, 0, -1.0), (0, 0, 2.0)]:",
                     f"    {acc} = {acc} + (r - np.sum({a}[i] * {a}[j])) ** 2"]
        elif kind < 0.55:     # a per-example loop over a list of (input, target) pairs
            b = self._compatible(a)
            lines = [f"{acc}_pairs = [({a}[0], {b}), ({a}[-1] * 0.5, {b} + 1.0), ({a}[0] - 1.0, {b})]",
                     f"{acc} = 0.0", f"for u, v in {acc}_pairs:",
                     f"    {acc} = {acc} + np.sum(np.tanh(u * v) ** 2)"]
            if self.rng.random() < 0.3:       # or off a stack, into a name that starts as None
                lines = [f"{acc}_stack = [{a}[0], {b} + 1.0, {a}[-1] * {b}]", f"{acc}_top = None",
                         f"{acc} = 0.0", "for k in range(3):", f"    {acc}_top = {acc}_stack.pop()",
                         f"    {acc} = {acc} + np.sum(np.tanh({acc}_top) ** 2)"]
        elif kind < 0.7:      # a sum over rows (batched as one step: optimise/row_loops.py)
            lines = self.rng.choice([
                [f"{acc} = 0.0", f"for row in {a}:", f"    {acc} = {acc} + np.sum(row * row)"],
                [f"{acc} = s * 0.5", f"for u, v in zip({a}, np.tanh({a}) + 0.5):",
                 "    e = np.sin(u * 2.0) - v", f"    {acc} += np.sum(e * e) * s"],
                [f"{acc} = 0.0", f"for i in range(len({a})):",
                 f"    {acc} = np.sum(np.exp(-{a}[i] ** 2) * {a}[i]) + {acc}"],
                [f"{acc} = 0.0", f"for i, row in enumerate({a}):",
                 f"    {acc} = {acc} + np.exp(-0.3 * i) * np.sum(np.cos(row))"],
                # a method called through a global object at each step, one kind or two (its
                # check of the kind is made before the loop: optimise/loop_checks.py)
                [f"{acc} = {a}[0] * 1.0", f"for row in {a}:",
                 f"    {acc} = {self.rng.choice(['LOOPED', 'LOOPED_OWN'])}.step({acc}) + row"],
                [f"{acc} = {a}[0] * 0.0", f"{acc}_n = 0.0", f"for row in {a}:",
                 "    h = np.tanh(row * 0.7)", f"    {acc} = {acc} + h * row",
                 f"    {acc}_n = {acc}_n + np.sum(h)", f"{acc} = {acc} * {acc}_n"],
                # a list a value a row appended to, then stacked (batched, its axis moved)
                [f"{acc}_list = []", f"for k in range({a}.shape[0]):",
                 f"    {acc}_list.append(np.tanh({a}[k] * 0.5) - s)",
                 f"{acc} = np.stack({acc}_list, axis={self.rng.choice([0, 1, -1])})"],
                [f"{acc}_list = []", f"for row in {a}:",
                 f"    {acc}_list.append(np.sum(np.sin(row) * row))", f"{acc} = np.array({acc}_list)"],
            ])
        elif kind < 0.78 and self._shape(a)[-1] >= 2:    # a step's slices through gates
            half = self._shape(a)[-1] // 2
            lines = [f"{acc} = {a}[0] * 0.0", f"for t in range(len({a})):",
                     f"    pre = {a}[t] * 1.5 + {acc}",
                     f"    {acc} = np.concatenate([np.tanh(pre[..., :{half}]), "
                     f"1.0 / (1.0 + np.exp(-pre[..., {half}:]))], axis=-1)"]
        else:
            lines = [f"{acc} = 0.0", f"for i, row in enumerate({a}):",
                     f"    {acc} = {acc} + np.sum(np.tanh(row)) * i"]
        self._try(lines)

    def _unit(self):
        """A value divided by its Euclidean norm, the norm written as people write it (a fused
        gradient checks a sum of squares it divides by once, and computes it as a dot product:
        optimise/derivative_only.py)."""
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1]
        if not arrays:
            return self._assign()
        a, n, t = self.rng.choice(arrays), self._fresh(), self._fresh()
        norm = self.rng.choice([f"np.sqrt(np.sum({a} * {a}))", f"np.sqrt(({a} ** 2).sum())",
                                f"np.sqrt(np.sum({a} ** 2) + 0.5)", f"np.linalg.norm({a})"])
        self._try([f"{n} = {norm}", f"{t} = {a} / {n}"])

    def _parts(self):
        """An array read in parts along its last axis, as gates, entries, overlapping
        windows or a split's pieces are (a fused gradient assigns parts apart into its
        cotangent, and keeps the sums of parts that overlap: optimise/placed_writes.py; it
        reads a split as slices: optimise/split_slices.py)."""
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1
                  and self._shape(a)[-1] >= 2]
        if not arrays:
            return self._assign()
        a, h, v = self.rng.choice(arrays), self._fresh(), self._fresh()
        lead = ":, " * (np.ndim(self.namespace[a]) - 1)
        n = self._shape(a)[-1]
        forms = [
            [f"{h} = {a}.shape[-1] // 2",                                        # gates
             f"{v} = np.tanh({a}[{lead}:{h}]) * (1.0 + np.sin({a}[{lead}{h}:2 * {h}]))"],
            [f"{h} = {a}.shape[-1] // 2",                                        # and the rest
             f"{v} = np.sum(np.cos({a}[{lead}{h}:]) * 0.5) + np.sum({a}[{lead}:{h}] ** 2)"],
            [f"{v} = {a}[{lead}0] * 2.0 + np.sin({a}[{lead}-1]) * {a}[{lead}1]"],   # entries
            [f"{v} = ({a}[{lead}1:] - {a}[{lead}:-1] ** 2) ** 2"],                 # overlapping
            [f"{h} = len({a}) - 1" if not lead else f"{h} = {a}.shape[-1] - 1",      # a size - 1
             f"{v} = np.sum({a}[{lead}:{h}] * 3.0) - np.sum(np.exp({a}[{lead}{h}:]))"],
        ]
        if n >= 3:
            forms.append([f"{v} = {a}[{lead}2] - {a}[{lead}0] * {a}[{lead}-1]"])    # -1 is 2?
        u = self._fresh()                   # splits (read as slices), their pieces joined
        forms.append([f"{h}, {u} = np.array_split({a}, 2, axis=-1)",
                      f"{v} = np.sum(np.tanh({h}) ** 2) + np.sum({u} * 0.5)"])
        if n % 2 == 0:
            forms.append([f"{h}, {u} = np.split({a}, 2, axis={np.ndim(self.namespace[a]) - 1})",
                          f"{v} = np.concatenate([{u} * {h}, np.sin({h})], axis=-1)"])
        self._try(self.rng.choice(forms))

    def _summed(self):
        """Values summed over a display of names by a generator, a list or a loop (a
        regulariser's ``sum(np.sum(W * W) for W in (W1, W2))``), written out as their items
        (normalize/written_out.py, normalize/unrolled_loops.py), or not (items that are
        Python floats, a condition)."""
        a, b = self._pick(), self._pick()
        w, v, t = self._fresh(), self._fresh(), self._fresh()
        forms = [
            [f"{v} = sum(np.sum({w} * {w}) for {w} in ({a}, {b}))"],
            [f"{v} = sum([np.sum(np.tanh({a})), np.mean({b} * {b})], 0.5)"],
            [f"{v} = max(np.sum({w} ** 2) for {w} in ({a}, {b}, 1.5))"],
            [f"{t} = [np.sin({w}) * 2.0 for {w} in ({a}, {b})]",
             f"{v} = {t}[0] + np.sum({t}[1])"],
            [f"{v} = sum(float(np.sum({w})) * 0.5 for {w} in ({a}, {b}))"],   # Python floats
            [f"{v} = sum(np.sum({w}) for {w} in ({a}, {b}) if np.ndim({w}) < 3)"],
            [f"{v} = 0.5",                                     # a loop over the display
             f"for {w} in ({a}, {b}):",
             f"    {v} = {v} + np.sum(np.tanh({w}) * {w})"],
            [f"{v} = {a} * 1.0",                              # a value carried through it
             f"for {w}, {t} in (({b}, 0.5), (2.0, {a})):",
             f"    {v} = np.sin({v}) * {t} + np.sum({w})"],
        ]
        self._try(self.rng.choice(forms))

    def _contracted(self):
        """Values contracted by ``np.einsum`` (with ``...``, an implicit output, an operand
        twice, a diagonal; specialised code writes an operand's cotangent as the einsum it
        is: optimise/einsum_cotangents.py) or differenced by ``np.diff`` (rt.diff_grad)."""
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1]
        if not arrays:
            return self._assign()
        a, b, v = self.rng.choice(arrays), self.rng.choice(arrays), self._fresh()
        specs = {(1, 1): ["i,i->", "i,j->ij", "i,i->i", "i,i"],
                 (2, 1): ["ij,j->i", "ij,i->j", "ij,j"],
                 (2, 2): ["ij,kj->ik", "ij,ij->", "ij,ij", "ij,ik->jk", "ij,ij->i"],
                 (3, 2): ["bij,jk->bik", "...j,jk->...k"], (3, 1): ["...j,j->...", "bij,j->bi"]}
        ranks = (np.ndim(self.namespace[a]), np.ndim(self.namespace[b]))
        forms = [[f"{v} = np.einsum('{spec}', {a}, np.tanh({b}))"] for spec in specs.get(ranks, [])]
        forms += [[f"{v} = np.einsum('...i,...i->...', {a}, {a} * 0.5)"],
                  [f"{v} = np.diff({a}, axis=-1) * {a}[..., 1:]"],
                  [f"{v} = np.sum(np.diff(np.sin({a}), 2, axis=0) ** 2)"]]
        if ranks[0] == 2 and self._shape(a)[0] == self._shape(a)[1]:
            forms.append([f"{v} = np.einsum('ii->i', {a}) * 2.0 + np.einsum('ii', {a})"])
        self._try(self.rng.choice(forms))

    def _normalised(self):
        """A softmax, log-softmax or log-sum-exp with an offset subtracted, written one of the
        ways people write it; sometimes the offset is seen again (it must be differentiated)."""
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1]
        if not arrays:
            return self._assign()
        a, m, e, t = self.rng.choice(arrays), self._fresh(), self._fresh(), self._fresh()
        axis = self.rng.choice([-1, 0] if np.ndim(self.namespace[a]) > 1 else [-1])
        offset = self.rng.choice([
            f"np.max({a}, axis={axis}, keepdims=True)", f"{a}.max(axis={axis}, keepdims=True)",
            f"np.mean({a}, axis={axis}, keepdims=True)", f"np.max({a})", f"np.amax({a})"])
        kept = f"axis={axis}, keepdims=True"
        forms = [
            [f"{t} = np.log(np.sum(np.exp({a} - {m}), {kept})) + {m}"],
            [f"{t} = {a} - {m} - np.log(np.sum(np.exp({a} - {m}), {kept}))"],
            [f"{e} = np.exp({a} - {m})", f"{t} = {e} / np.sum({e}, {kept})"],
            [f"{e} = np.exp({a} - {m})", f"{e} /= {e}.sum({kept})", f"{t} = np.log({e})"],
            [f"{e} = np.exp({a} - {m}) * (1.5 + np.cos(y))",
             f"{t} = {e} / np.sum({e}, {kept})"],
            # the offset is seen: these depend on it
            [f"{t} = np.log(np.sum(np.exp({a} - {m}), {kept}))"],
            [f"{t} = np.log(np.sum(np.exp({a} - {m}), {kept})) + 2.0 * {m}"],
            [f"{e} = np.exp({a} - {m})", f"{t} = ({e} + {e} * {e}) / np.sum({e}, {kept})"],
            [f"{e} = np.exp({a})",            # a softmax whose exponentials are read again
             f"{t} = {e} / {e}.sum({kept}) + np.sqrt({e}) * 0.5"],
        ]
        if "keepdims" in offset:          # the kept axis indexed away when it is added back
            dropped = "[..., 0]" if axis == -1 else "[0]"
            forms.append([f"{t} = np.log(np.sum(np.exp({a} - {m}), axis={axis})) + {m}{dropped}"])
        if offset.startswith(("np.max", f"{a}.max")) and "keepdims" in offset:
            reduced = f"np.max({a}, axis={axis})"
            inserted = "[..., None]" if axis == -1 else "[None]"
            forms.append([f"{t} = np.log(np.sum(np.exp({a} - {m}{inserted}), axis={axis})) + {m}"])
            forms.append([f"{t} = np.log(np.sum(np.exp({a} - np.expand_dims({m}, {axis})), "
                          f"axis={axis})) + {m}"])
            if self.rng.random() < 0.5:
                offset = reduced
                forms = forms[-2:]
        self._try([f"{m} = {offset}"] + self.rng.choice(forms))

    def _standardised(self):
        """A batch or layer normalisation as people write it: the mean and the variance
        along an axis (kept or not; a function or a method), the array centred and scaled;
        the scale is sometimes computed again (a value the gradient computes once), the
        centred array too."""
        arrays = [a for a in self._arrays() if np.ndim(self.namespace[a]) >= 1]
        if not arrays:
            return self._assign()
        a, m, v, t = self.rng.choice(arrays), self._fresh(), self._fresh(), self._fresh()
        kept = np.ndim(self.namespace[a]) > 1 and self.rng.random() < 0.5
        along = f"axis={-1 if kept else 0}" + (", keepdims=True" if kept else "")
        mean = self.rng.choice([f"np.mean({a}, {along})", f"{a}.mean({along})"])
        ddof = self.rng.choice(["", ", ddof=1"]) if len(self.namespace[a]) > 1 else ""
        var = self.rng.choice([f"np.var({a}, {along}{ddof})", f"{a}.var({along}{ddof})"])
        lines = [f"{m} = {mean}", f"{v} = {var}", f"{t} = ({a} - {m}) / np.sqrt({v} + 0.1)"]
        again = self.rng.choice(["", f" + 0.5 * np.sqrt({v} + 0.1)", f" * ({a} - {m})"])
        lines[-1] += again
        self._try(lines)

    def _early_return(self):
        a = self._pick()
        if self.scalar_output and self.rng.random() < 0.5:
            self.lines += [f"if np.sum({a}) > 4.0:", f"    return np.sum({a} * {a})"]
        elif self.rng.random() < 0.5:          # input validation, as real code does it
            check = self.rng.choice([f"np.any(np.isnan({a}))", f"np.ndim({a}) > 3"])
            self.lines += [f"if {check}:", f"    raise ValueError(f\"bad input: {{np.shape({a})}}\")"]
        else:
            self.lines += [f"assert np.all(np.isfinite({a})), \"{a} must be finite\""]

    def _returned(self):
        values = self._values()
        chosen = self.rng.sample(values, min(len(values), self.rng.randint(1, 3)))
        if not self.scalar_output:
            arrays = [v for v in chosen if np.ndim(self.namespace[v]) >= 1]
            if arrays:
                return f"np.tanh({arrays[0]}) * 2.0"        # a non-scalar output
        # a plain sum or mean seeds an adjoint with a scalar, which the specialiser spreads
        forms = ["np.sum(np.tanh({v}) * {v})"] * 3 + ["np.sum({v})", "np.mean(np.sin({v}))"]
        return " + ".join(self.rng.choice(forms).format(v=v) for v in chosen)
