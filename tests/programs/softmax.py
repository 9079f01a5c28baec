"""Softmax and log-softmax with the maximum subtracted (test_invariance.py)."""

import numpy as np


def log_softmax_loss(z, labels):
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels * logp)


def softmax_loss(z, w):
    shifted = z - z.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=-1, keepdims=True)
    return np.sum(w * p)


def shifted_value_also_used(z, w):
    shifted = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(shifted) / np.sum(np.exp(shifted), axis=1, keepdims=True)
    return np.sum(w * p) + np.sum(shifted * w)        # the shift matters here


def normalised_along_another_axis(z, w):
    shifted = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(shifted)
    return np.sum(w * (e / np.sum(e, axis=0, keepdims=True)))   # not invariant


def maximum_also_returned(z, w):
    m = np.max(z, axis=1, keepdims=True)
    shifted = z - m
    e = np.exp(shifted)
    return np.sum(w * (e / np.sum(e, axis=1, keepdims=True))) + np.sum(m)
