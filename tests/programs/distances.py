"""Losses over pairwise distances, with scipy.spatial.distance (test_scipy.py)."""

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform


def rbf_weighted(A, B):
    D = cdist(A, B)
    return np.sum(np.exp(-D ** 2 / 2.0) * D) + np.sum(np.sin(cdist(A, B, "sqeuclidean")))


def pair_penalty(X):
    d = pdist(X)
    return np.sum(np.log1p(d)) + np.sum(squareform(d) * np.arange(16.0).reshape(4, 4))


def city_blocks(X):
    return np.sum(pdist(X, "cityblock"))
