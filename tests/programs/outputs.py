"""Functions whose outputs have no derivative, and functions returning (output, aux):
tests/test_outputs.py and tests/test_has_aux.py."""

import dataclasses

import numpy as np


def forgotten_return(x):
    y = np.sum(x * x)


def only_an_effect(x):
    np.sum(x)


def returns_none(x):
    return None


def returns_int(x):
    return int(np.sum(x > 0))


def returns_bool(x):
    return bool(np.sum(x) > 0)


def returns_int_array(x):
    return np.argsort(x)


def returns_string(x):
    return "done"


def returns_with_label(x):
    return np.sum(x), "label"


def returns_with_count(x):
    return np.sum(x * x), 3


def two_returns(x):
    if x[0] > 0:
        return np.sum(x * x)
    return 3


def lstsq_all(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


class Counter:
    """A model whose method returns a count."""

    def count(self, x):
        """The number of positive entries.

        (no derivative)"""
        if x.ndim != 1:
            raise ValueError("a vector")
        return np.count_nonzero(x > 0)


# -- has_aux ---------------------------------------------------------------------------

def loss_with_metrics(w, x, y):
    prediction = np.tanh(x @ w)
    error = prediction - y
    metrics = {"mse": np.mean(error ** 2), "hits": int(np.sum(np.abs(error) < 0.5)),
               "name": "tanh", "prediction": prediction}
    return np.sum(error ** 2), metrics


def loss_alone(w, x, y):
    prediction = np.tanh(x @ w)
    return np.sum((prediction - y) ** 2)


def pair_in_a_name(w, x, y):
    result = (loss_alone(w, x, y), x @ w)
    return result


def aux_of_branches(w, x, y):
    loss = loss_alone(w, x, y)
    if loss > 1.0:
        return loss, "large"
    return loss, None


@dataclasses.dataclass
class Stats:
    mean: np.ndarray
    steps: int


def aux_dataclass(w, x, y):
    z = x @ w
    total = 0.0
    steps = 0
    for row in z:
        total = total + np.sin(row) ** 2
        steps += 1
    return total, Stats(np.mean(z), steps)


def vector_with_aux(w):
    return np.tanh(w) * w, (np.argmax(w), w * 2.0)


def rosen_with_aux(x):
    value = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return value, {"x_max": np.max(x)}


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def three_values(w):
    return np.sum(w), 1, 2


def not_a_pair(w):
    total = np.sum(w * w)
    return total


def int_output_with_aux(w):
    return int(np.sum(w)), {"w": w}


def aux_is_the_argument(w):
    return np.sum(w * w), w


class Model:
    """A model whose loss method returns metrics beside the loss."""

    def __init__(self, scale):
        self.scale = scale

    def loss(self, w, x):
        """Scaled squared norm.

        Returns (loss, metrics)."""
        z = self.scale * (x @ w)
        return np.sum(z ** 2), {"z": z}
