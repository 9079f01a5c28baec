"""Dataclasses and named tuples made inside differentiated functions (tests/test_records.py)."""

import collections
import dataclasses

import numpy as np


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float = 0.5
    steps: int = 0


State = collections.namedtuple("State", ["h", "c"])
Scaled = collections.namedtuple("Scaled", ["value", "scale"], defaults=[2.0])


@dataclasses.dataclass
class Validated:
    w: np.ndarray

    def __post_init__(self):
        if self.w.ndim != 1:
            raise ValueError("a vector")


class Plain:
    """Its __init__ only stores its parameter: made inside, a record of it."""

    def __init__(self, w):
        self.w = w


class Computing:
    """Its __init__ computes: not a record."""

    def __init__(self, w):
        self.w = w * 2.0


def keywords_and_defaults(x):
    p = Params(x * 2.0, b=np.sum(x), steps=3)
    q = Params(x)
    return np.sum(p.w * p.b) + p.steps + np.sum(q.w * q.b)


def returns_a_record(x):
    return Params(np.exp(x), np.sum(x))


def recurrent_state(x):
    s = State(np.tanh(x), x * x)
    for _ in range(3):
        s = State(np.tanh(s.h + s.c), s.c * 0.5)
    h, c = s
    return np.sum(h) + np.sum(c) + np.sum(s[0])


def named_tuple_default(x):
    scaled = Scaled(np.sin(x))
    return np.sum(scaled.value * scaled.scale)


def passed_to_a_helper(x):
    return _energy(Params(x, 1.5))


def _energy(p):
    return np.sum(p.w ** 2) * p.b


def post_init(x):
    return np.sum(Validated(x).w)


def plain_class(x):
    return np.sum(Plain(x * 2.0).w ** 2)


def computing_class(x):
    return np.sum(Computing(x).w)
