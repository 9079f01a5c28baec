"""Derivative rules of complex numbers' parts: np.real, np.conj, np.imag, np.angle,
np.sign of complex numbers, and ``complex(re, im)``.

srctrans pairs a cotangent ``g`` with a tangent ``dz`` as ``Re(sum(g * dz))`` (the
convention of autograd and JAX, docs/complex.md), so a holomorphic function's rules
are its real rules, in rules/elementwise.py. The functions here are not holomorphic.
The real part and the conjugate are their own transposes; the others call
runtime/complex_numbers.py, whose helpers give, for real arguments, what these
functions' real derivatives are (the imaginary part and the angle of a real number
are constants, its sign a step function).
"""

import builtins

import numpy as np

from srctrans import runtime as rt
from srctrans.runtime import complex_numbers
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


@vjp(np.real)
def real(g, ans, val):
    return np.real(g)

@vjp(np.conjugate)                 # np.conj is np.conjugate
def conjugate(g, ans, x):
    return np.conjugate(g)

linear(np.real, np.conjugate)

@vjp(np.imag)
def imag(g, ans, val):
    return rt.imag_grad(g, val)

@jvp(np.imag)
def imag_jvp(dval, ans, val):
    return rt.imag_tangent(dval)

@vjp(np.angle, elementwise=True)
def angle(g, ans, z, deg=False):
    return rt.angle_grad(g, z, deg), None

@jvp(np.angle)
def angle_jvp(dz, ans, z, deg=False):
    return rt.angle_jvp(dz, z, deg)

@vjp(np.sign, elementwise=True)
def sign(g, ans, x):
    return rt.sign_grad(g, x)

@jvp(np.sign)
def sign_jvp(dx, ans, x):
    return rt.sign_jvp(dx, x)

@vjp(builtins.complex)
def complex_(g, ans, real=0, imag=0):
    return (*rt.complex_grads(g),)

@jvp(builtins.complex)
def complex_jvp(dreal, dimag, ans, real=0, imag=0):
    return dreal, 1j * dimag


# Their second derivatives: srctrans differentiates the helpers' source
REGISTRY.nondifferentiable(rt.is_complex_value)
REGISTRY.differentiate_through_module(complex_numbers,
                                     except_=(rt.is_complex_value, rt.real_only))
