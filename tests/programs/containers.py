"""Programs over tuples, lists, dicts, named tuples and dataclasses (test_containers.py)."""

import collections
import dataclasses

import numpy as np

Layer = collections.namedtuple("Layer", ["W", "b"])


@dataclasses.dataclass
class Params:
    W: np.ndarray
    b: np.ndarray
    steps: int = 2


def dict_params(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2)


def list_of_layers(layers, x):
    h = x
    for W in layers:
        h = np.tanh(h @ W)
    return np.sum(h)


def tuple_argument(pair, x):
    a, b = pair
    return np.sum(a * x + b)


def nested_containers(params, x):
    first = params["layers"][0]
    second = params["layers"][1]
    return np.sum(np.tanh(x @ first) @ second) + params["scale"] * np.sum(x)


def collect_and_stack(x, W):
    states = []
    h = x
    for i in range(4):
        h = np.tanh(h @ W)
        states.append(h)
    return np.sum(np.stack(states) ** 2)


def collect_and_concatenate(x):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0))
    return np.sum(np.concatenate(parts) ** 2)


def returns_dict(x, y):
    return {"sum": np.sum(x * y), "diff": x - y}


def returns_list(x):
    return [np.sin(x), np.cos(x) * 2.0]


def namedtuple_argument(layer, x):
    return np.sum(np.tanh(x @ layer.W + layer.b))


def dataclass_argument(p, x):
    h = x
    for i in range(p.steps):
        h = np.tanh(h @ p.W + p.b)
    return np.sum(h)


def builds_a_tuple(x):
    pair = (x * 2.0, np.sin(x))
    first, second = pair
    return np.sum(first * second)


def indexes_a_list(x, y):
    items = [x, y, x * y]
    return np.sum(items[0] * items[-1]) + np.sum(items[1])


def list_comprehension(x, W):
    rows = [np.tanh(x[i] @ W) for i in range(x.shape[0])]
    return np.sum(np.stack(rows) ** 2)


def comprehension_over_rows(X, w):
    return sum([np.sum(row * w) ** 2 for row in X if np.sum(row) > -10.0])


def generator_in_builtin_sum(xs):
    return sum(np.sum(x ** 2) for x in xs)


def builtin_min_max_abs_float(a, b):
    return max(a, b) * 2.0 + min(a * a, b) + abs(a - b) + float(a) * b


def weighted(*terms, scale=1.0, **named):
    total = 0.0
    for term in terms:
        total = total + np.sum(term * term)
    return scale * total + np.sum(named["extra"] ** 3)


def calls_varargs(x, y):
    return weighted(x, y * 2.0, scale=0.5, extra=x * y)


class Model:
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.name = "model"

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)


def local_def_and_closure(x, W):
    scale = 2.0

    def layer(h, bias=0.5):
        z = h @ W + bias
        return np.tanh(z) * scale

    h = layer(x)
    h = layer(h @ W.T, bias=-0.5)
    return np.sum(h ** 2)


def local_lambda(x, y):
    square = lambda v: v * v
    mix = lambda a, b=1.0: a * y + b
    return np.sum(square(x) + mix(x, b=2.0) + mix(square(y)))


def local_function_in_loop(x):
    step = lambda h: np.sin(h) + h
    for i in range(3):
        x = step(x)
    return np.sum(x)


class Recurrent:
    def __init__(self, W):
        self.W = W

    def loss(self, xs):
        h = xs[0]
        for t in range(1, xs.shape[0]):
            h = np.tanh(h @ self.W + xs[t])
        return np.sum(h)


def appends_to_argument(xs, x):
    xs.append(x * 2.0)
    return np.sum(np.stack(xs))


def unpacks_into_dict(d, x):
    return np.sum({**d, "x": x}["x"])


def loops_over_dict_items(params, x):
    total = 0.0
    for name, W in params.items():
        total = total + np.sum(np.tanh(x @ W)) * (2.0 if name == "a" else 1.0)
    for W in params.values():
        total = total + np.sum(W * W)
    return total


def dict_comprehension(params, x):
    scaled = {name: W * 2.0 for name, W in params.items()}
    squares = {k: np.sum(v ** 2) for k, v in scaled.items() if k != "skip"}
    return squares["a"] + np.sum(x @ scaled["b"])


def dict_builtin_forms(params, x, y):
    """dict(...) of keywords, of pairs, of zip(...), of d.items() and of a dict (a copy)."""
    named = dict(w=x, v=y)
    pairs = dict([("w", x * 2.0), ("v", y)])
    zipped = dict(zip(["a", "b"], [params["a"], params["b"] * x]))
    copied = dict(params)
    viewed = dict(zipped.items())
    return (np.sum(named["w"] * pairs["v"]) + np.sum(zipped["b"] * copied["a"])
            + np.sum(viewed["a"] ** 2) + len(copied))


def dict_methods(params, x):
    """d.get with and without the key, keys(), values(), items(), len and in."""
    scale = params.get("scale", 1.0)
    bias = params.get("bias", 0.5 * x)
    total = np.sum(scale * x + bias)
    for value in params.values():
        total = total + np.sum(value * value)
    names = params.keys()
    pairs = params.items()
    if "scale" in params:
        total = total * 1.5
    return total + len(names) + np.sum(list(pairs)[0][1]) + np.sum(list(params.values())[-1])


def sorted_and_keyed(x, y, z):
    """sorted(...) of arrays by a key, sorted numbers, a dict's keys in sorted order, and
    max/min with key= (a lambda, and a function)."""
    rows = sorted([x, y, z], key=lambda r: float(np.sum(r)), reverse=True)
    numbers = sorted([x[0], y[1], z[2]])
    scores = {"b": y, "a": x}
    total = 0.0
    for name in sorted(scores):
        total = 0.5 * total + np.sum(scores[name] * rows[0])
    largest = max(x, y, z, key=np.sum)
    smallest = min([x, y, z], key=lambda r: np.sum(r * r))
    return (total + numbers[0] * 3.0 + numbers[2] + np.sum(rows[1] * rows[2])
            + np.sum(largest * smallest))


def max_with_default(x):
    return np.sum(max([x, 2.0 * x], key=np.sum, default=x))


def nested_loop_targets(a, b, d):
    """Nested tuple targets: enumerate(zip(...)), a dict's items, a list of pairs, a
    comprehension."""
    total = 0.0
    for i, (u, v) in enumerate(zip(a, b)):
        total = total + (i + 1.0) * np.sum(u * v)
    for name, (p, q) in d.items():
        total = total + np.sum(p * q) * len(name)
    for first, second in [(a[0], b[1]), (b[0], a[1])]:
        total = total + np.sum(first * np.sin(second))
    return total + sum([np.sum(u * v) * k for k, (u, v) in enumerate(zip(a, b), 1)])


def written_after_building(d, xs, x):
    """Containers the function built from others (a comprehension, dict(...), list(...)),
    written into while the values they were built from are read later."""
    scaled = {k: v * x for k, v in d.items()}
    scaled["w"] = scaled["a"] * 2.0
    copy = dict(d)
    copy["a"] = copy["b"] * x
    rows = list(xs)
    rows[0] = rows[1] * 3.0
    rows.append(x)
    return np.sum(scaled["w"] * scaled["b"] + copy["a"] * d["a"]) + np.sum(rows[0] * rows[2] * xs[0])


def iterates_a_dict(d, x):
    """``for k in d``: over a dict the function made, and over an argument indexed by key."""
    weights = {"p": 2.0, "q": -1.0}
    total = 0.0
    for k in weights:
        total = total + weights[k] * np.sum(x)
    for k in d:
        total = total + np.sum(d[k] * x) * len(k)
    return total


def iterates_a_dict_without_reading_it(d, x):
    total = 0.0
    for k in d:
        total = total + len(k) * np.sum(x)
    return total


def sorted_keys_of_dicts(d, x, y):
    """``sorted`` of a dict display and of a dict argument, beside a loop over ``d.keys()``:
    ``list`` of a dict is its keys, which carry no derivative (to second order too)."""
    v = y * 1.0
    for key in d.keys():
        v = v + d[key] * x
    for key in sorted({"q": v, "p": y}):
        v = v * 0.5 + len(key)
    for key in sorted(d):
        v = v + np.sin(d[key]) * y
    return np.sum(v * v)


def pops_a_stack(x, y):
    """``top`` starts as None and is only ever popped: a float, not an int."""
    stack = [x * 2.0, y, x * y]
    top = None
    total = 0.0
    for _ in range(3):
        top = stack.pop()
        total = total + np.sum(top * top)
    return total
