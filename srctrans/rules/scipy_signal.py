"""Derivative rules of ``scipy.signal.convolve`` and ``scipy.signal.correlate`` (real arrays
of any number of dimensions, every ``mode`` and ``method``).

Loaded on demand, once the user has imported ``scipy.signal`` (see
``scipy_special.py``); the formulas are in ``runtime/scipy_signal.py``. Both
functions are linear in each input, so the tangent is the same call with one
input replaced by its tangent, summed over the inputs.
"""


import scipy.signal as signal

from srctrans import runtime as rt
from srctrans.runtime import scipy_signal as formulas
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


@vjp(signal.convolve)
def convolve(g, ans, in1, in2, mode="full", method="auto"):
    return (*rt.scipy_signal.convolve_grads(g, in1, in2, mode, method), None, None)

@jvp(signal.convolve)
def convolve_jvp(din1, din2, ans, in1, in2, mode="full", method="auto"):
    return (rt.scipy_signal.signal.convolve(din1, in2, mode, method),
            rt.scipy_signal.signal.convolve(in1, din2, mode, method))

@vjp(signal.correlate)
def correlate(g, ans, in1, in2, mode="full", method="auto"):
    return (*rt.scipy_signal.correlate_grads(g, in1, in2, mode, method), None, None)

@jvp(signal.correlate)
def correlate_jvp(din1, din2, ans, in1, in2, mode="full", method="auto"):
    return (rt.scipy_signal.signal.correlate(din1, in2, mode, method),
            rt.scipy_signal.signal.correlate(in1, din2, mode, method))


REGISTRY.differentiate_through_module(formulas)
