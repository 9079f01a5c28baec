"""Derivative rules of ``np.fft``: fft, ifft, rfft, irfft, hfft, ihfft, their 2-D and
n-D forms, fftshift and ifftshift, with ``n``/``s``, ``axis``/``axes`` and ``norm``.

The transforms are linear: the tangent is the transform of the tangent (``linear``),
and the cotangent is the transform's transpose (runtime/fourier.py, which says how
each is made). ``rfft`` and ``ihfft`` read real signals; ``irfft`` and ``hfft`` give
real ones. Complex values follow docs/complex.md.
"""


import numpy as np

from srctrans import runtime as rt
from srctrans.runtime import fourier
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
linear = REGISTRY.linear


@vjp(np.fft.fft)
def fft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.fft_grad(g, a, axis, norm)

@vjp(np.fft.ifft)
def ifft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.fft_grad(g, a, axis, norm, True)

@vjp(np.fft.fft2, np.fft.fftn)
def fftn(g, ans, a, s=None, axes=None, norm=None):
    return rt.fftn_grad(g, a, s, axes, norm)

@vjp(np.fft.ifft2, np.fft.ifftn)
def ifftn(g, ans, a, s=None, axes=None, norm=None):
    return rt.fftn_grad(g, a, s, axes, norm, True)

@vjp(np.fft.rfft)
def rfft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.rfft_grad(g, a, n, axis, norm)

@vjp(np.fft.rfft2, np.fft.rfftn)
def rfftn(g, ans, a, s=None, axes=None, norm=None):
    return rt.rfftn_grad(g, a, s, axes, norm)

@vjp(np.fft.irfft)
def irfft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.irfft_grad(g, a, n, axis, norm)

@vjp(np.fft.irfft2, np.fft.irfftn)
def irfftn(g, ans, a, s=None, axes=None, norm=None):
    return rt.irfftn_grad(g, a, s, axes, norm)

@vjp(np.fft.hfft)
def hfft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.hfft_grad(g, a, n, axis, norm)

@vjp(np.fft.ihfft)
def ihfft(g, ans, a, n=None, axis=-1, norm=None):
    return rt.ihfft_grad(g, a, n, axis, norm)

# a shift moves entries: its transpose moves them back
@vjp(np.fft.fftshift)
def fftshift(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes)

@vjp(np.fft.ifftshift)
def ifftshift(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes)

linear(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn,
       np.fft.rfft, np.fft.rfft2, np.fft.rfftn, np.fft.irfft, np.fft.irfft2, np.fft.irfftn,
       np.fft.hfft, np.fft.ihfft, np.fft.fftshift, np.fft.ifftshift)

# Their second derivatives: srctrans differentiates the helpers' source
REGISTRY.differentiate_through_module(fourier)
