"""Programs calling np.gradient every way NumPy takes it: tests/test_stencils.py."""

import numpy as np


def sum_of_squares(f):
    return np.sum(np.gradient(f) ** 2)


def along_axis(f):
    return np.sum(np.sin(np.gradient(f, axis=1)))


def second_order_edges(f, h):
    return np.sum(np.gradient(f, h, edge_order=2) ** 3)


def every_axis(f):
    gx, gy = np.gradient(f)
    return np.sum(gx * gy)


def coordinates(f, x, y):
    gx, gy = np.gradient(f, x, y, edge_order=2)
    return np.sum(np.tanh(gx) * gy)


def negative_axes(f, x):
    return np.sum(np.gradient(f, x, axis=-2) ** 2)


def positional_spacing_per_axis(f, x):
    gx, gy = np.gradient(f, x, 0.5)
    return np.sum(gx ** 2 + np.cos(gy))


def velocity_of_a_trajectory(positions, times):
    """A physics-style use: speeds from sampled positions and their times."""
    velocity = np.gradient(positions, times, axis=0)
    return np.sum(np.sqrt(np.sum(velocity ** 2, axis=1) + 1e-3))
