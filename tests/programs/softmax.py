"""Softmax and log-softmax with the maximum subtracted (test_invariance.py), and SciPy's
log-sum-exp read for its shares (test_shares.py)."""

import numpy as np
from scipy import special


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


def log_sum_exp_loss(z, labels):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(labels * (z - lse))


def log_sum_exp_squeezed(z, w):
    m = np.max(z, axis=-1)
    out = m + np.log(np.sum(np.exp(z - m[..., None]), axis=-1))
    return np.sum(w[:, 0] * out)


def log_sum_exp_expand_dims(z, w):
    m = np.amax(z, axis=1)
    s = np.sum(np.exp(z - np.expand_dims(m, 1)), axis=1)
    return np.sum(w[:, 0] * (np.log(s) + m))


def softmax_in_place(z, w):
    probs = np.exp(z - np.max(z, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    return np.sum(w * np.log(probs))


def shifted_by_the_mean(z, w):
    shifted = z - z.mean(axis=1, keepdims=True)     # any value constant along the axis
    e = np.exp(shifted)
    return np.sum(w * e / e.sum(axis=1, keepdims=True))


def shifted_by_a_scalar(z, w):
    e = np.exp(z - np.max(z))                        # one shift for every row
    return np.sum(w * (e / np.sum(e, axis=1, keepdims=True)))


def weighted_softmax(z, w):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True)) * w   # a weight of any rank, axis -1
    return np.sum(np.log(e / np.sum(e, axis=-1, keepdims=True)))


# the shift matters in each of these


def log_sum_exp_without_the_maximum(z, w):
    m = np.max(z, axis=1, keepdims=True)
    return np.sum(w * np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)))


def maximum_added_twice(z, w):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m + m
    return np.sum(w * lse)


def shifted_by_a_scalar_summed_by_row(z, w):
    m = np.max(z)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))     # m is not added back
    return np.sum(w * lse)


def widened_before_a_positive_axis(z, w):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m) * w[:, None]                    # (N, C) * (N, 1, C) -> (N, N, C)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * w)


def exponentials_summed_unscaled(z, w):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    return np.sum(w * (e + 1.0) / np.sum(e, axis=1, keepdims=True))


def shift_replaced_in_a_loop(z, w):
    m = np.max(z, axis=1, keepdims=True)
    t = z - m
    for _ in range(2):
        t = w                                        # t + m is w + m, not z
    return np.sum(w * (t + m))


def exponentials_scaled_unalike(z, w):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    u = e + e * e                                    # exp(-c) and exp(-2c): no common factor
    return np.sum(w * u / np.sum(u, axis=1, keepdims=True))


def softmax_of_a_negated_difference(z, w):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(-(m - z)), axis=1, keepdims=True)) + m   # -(m - z) is z - m
    return np.sum(w * lse)


def log_sum_exp_sliced_back(z, w):
    m = np.max(z, axis=1)
    lse = np.log(np.sum(np.exp(z - m[:, None]), axis=1)) + m     # positive axis brought back
    return np.sum(w[:, 0] * lse)


def log_sum_exp_kept_then_indexed(z, w):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1)) + m[:, 0]       # the kept axis indexed away
    return np.sum(w[:, 0] * lse)


def offset_indexed_at_another_axis(z, w):            # m[0] takes row 0's maximum, not axis 1
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1)) + m[0]
    return np.sum(w[:, 0] * lse)


def offset_brought_back_at_another_axis(z, w):       # m[None] puts it on axis 0, not 1
    square = z[:4] * 1.0
    m = np.max(square, axis=1)
    lse = np.log(np.sum(np.exp(square - m[None]), axis=1, keepdims=True)) + m[None]
    return np.sum(w[:4] * lse)


# -- SciPy's log-sum-exp read only for its gradient's shares (test_shares.py) ---------------

def scipy_log_sum_exp_summed(z, w):
    return np.sum(special.logsumexp(z * w, axis=1))


def scipy_log_sum_exp_kept(z, w):
    return np.sum(special.logsumexp(z - w, axis=-1, keepdims=True))


def scipy_log_sum_exp_of_everything(z, w):
    return 2.0 * special.logsumexp(z + w)


def scipy_log_sum_exp_weighted_after(z, w):
    return np.sum(w[:, 0] * special.logsumexp(z, axis=1))


def scipy_log_sum_exp_read_again(z, w):
    lse = special.logsumexp(z, axis=0)
    return np.sum(lse) + np.sum(lse * lse)


def scipy_log_sum_exp_with_weights(z, w):
    return np.sum(special.logsumexp(z, axis=1, b=w))


def scipy_log_sum_exp_in_a_loop(z, w):
    total = 0.0
    a = z
    for _ in range(2):
        s = special.logsumexp(a, axis=1)
        a = a * w
        total = total + np.sum(s)
    return total
