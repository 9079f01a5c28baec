"""A second module for the export tests: a global named like one of exportable's, and a
function imported there under another name."""

import numpy as np

SCALE = 3.0


def scaled(x):
    return x * SCALE


def square(x):
    return x * x + np.sin(x)
