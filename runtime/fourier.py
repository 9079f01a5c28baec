"""Derivatives of ``np.fft``: the cotangents of the discrete Fourier transforms.

Every transform is linear, so its tangent is the transform of the tangent and its
cotangent is its transpose applied to the output's cotangent (for the pairing
``Re(sum(g * dy))``, docs/complex.md):

* the DFT matrix is symmetric, so the transpose of ``fft`` is ``fft`` (and of ``ifft``,
  ``ifft``), with the same ``norm``; the transpose of padding with zeros to ``n`` is
  cropping back, and of cropping, padding with zeros;
* ``rfft`` keeps the first ``n // 2 + 1`` entries of the ``fft`` of a real signal: its
  transpose pads the cotangent with zeros to ``n``, transforms and keeps the real part;
* ``irfft`` reads a half spectrum and its mirror image: each entry other than the zero
  frequency (and the Nyquist frequency of an even ``n``) stands for two, so its
  cotangent counts twice;
* ``hfft`` and ``ihfft`` are ``irfft`` and ``rfft`` of the conjugate with the opposite
  ``norm``, as NumPy computes them; the n-dimensional transforms are the 1-D ones
  along each axis in turn, and their transposes run the axes in the other order.

srctrans differentiates these helpers' source for second derivatives, so each has
one return.
"""

import numpy as np

from .complex_numbers import real_for

# norm of the transform in the other direction (hfft and ihfft are written with it)
SWAPPED_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def fft_grad(g, a, axis=-1, norm=None, inverse=False):
    """The cotangent of ``a`` for ``np.fft.fft(a, n, axis, norm)`` (``ifft`` with ``inverse``)."""
    return real_for(_fft_transpose(g, np.shape(a)[axis], axis, norm, inverse), a)


def fftn_grad(g, a, s=None, axes=None, norm=None, inverse=False):
    """The cotangent of ``a`` for ``np.fft.fftn(a, s, axes, norm)`` (``ifftn`` with
    ``inverse``; ``fft2`` and ``ifft2`` pass their axes)."""
    axes = transformed_axes(np.ndim(a), s, axes)
    if inverse:
        cotangent = np.fft.ifftn(g, axes=axes, norm=norm)
    else:
        cotangent = np.fft.fftn(g, axes=axes, norm=norm)
    for k in axes:
        cotangent = _fitted(cotangent, k, np.shape(a)[k])
    return real_for(cotangent, a)


def rfft_grad(g, a, n=None, axis=-1, norm=None):
    """The cotangent of the real ``a`` for ``np.fft.rfft(a, n, axis, norm)``."""
    length = np.shape(a)[axis]
    return _rfft_transpose(g, length, length if n is None else n, axis, norm)


def rfftn_grad(g, a, s=None, axes=None, norm=None):
    """The cotangent of the real ``a`` for ``np.fft.rfftn(a, s, axes, norm)`` (and ``rfft2``),
    which is ``rfft`` along the last axis, then ``fft`` along the others."""
    shape = np.shape(a)
    axes = transformed_axes(len(shape), s, axes)
    cotangent = g
    for k in axes[:-1]:
        cotangent = _fft_transpose(cotangent, shape[k], k, norm, False)
    return rfft_grad(cotangent, a, None if s is None else s[-1], axes[-1], norm)


def irfft_grad(g, a, n=None, axis=-1, norm=None):
    """The cotangent of the half spectrum ``a`` for ``np.fft.irfft(a, n, axis, norm)``."""
    length = np.shape(a)[axis]
    return real_for(_irfft_transpose(g, length, 2 * (length - 1) if n is None else n, axis,
                                     norm), a)


def irfftn_grad(g, a, s=None, axes=None, norm=None):
    """The cotangent of ``a`` for ``np.fft.irfftn(a, s, axes, norm)`` (and ``irfft2``), which
    is ``ifft`` along all axes but the last, then ``irfft`` along the last."""
    shape = np.shape(a)
    axes = transformed_axes(len(shape), s, axes)
    last = axes[-1]
    n = 2 * (shape[last] - 1) if s is None else s[-1]
    cotangent = _irfft_transpose(g, shape[last], n, last, norm)
    for k in axes[-2::-1]:
        cotangent = _fft_transpose(cotangent, shape[k], k, norm, True)
    return real_for(cotangent, a)


def hfft_grad(g, a, n=None, axis=-1, norm=None):
    """The cotangent of ``a`` for ``np.fft.hfft(a, n, axis, norm)``, which NumPy computes as
    ``irfft(conj(a), n, axis, SWAPPED_NORM[norm])``."""
    length = np.shape(a)[axis]
    return real_for(np.conj(_irfft_transpose(g, length, 2 * (length - 1) if n is None else n,
                                             axis, SWAPPED_NORM[norm])), a)


def ihfft_grad(g, a, n=None, axis=-1, norm=None):
    """The cotangent of the real ``a`` for ``np.fft.ihfft(a, n, axis, norm)``, which NumPy
    computes as ``conj(rfft(a, n, axis, SWAPPED_NORM[norm]))``."""
    length = np.shape(a)[axis]
    return _rfft_transpose(np.conj(g), length, length if n is None else n, axis,
                           SWAPPED_NORM[norm])


def transformed_axes(ndim, s=None, axes=None):
    """The axes an n-dimensional transform runs along, non-negative, as NumPy reads
    ``s`` and ``axes``: every axis when both are None, the last ``len(s)`` when only
    ``s`` is given."""
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return [k % ndim for k in axes]


def _fft_transpose(g, length, axis, norm, inverse):
    """The transpose of ``fft(x, n, axis, norm)`` (``ifft``) for an ``x`` of ``length``
    along ``axis``, applied to ``g``."""
    if inverse:
        transformed = np.fft.ifft(g, axis=axis, norm=norm)
    else:
        transformed = np.fft.fft(g, axis=axis, norm=norm)
    return _fitted(transformed, axis, length)


def _rfft_transpose(g, length, n, axis, norm):
    """The transpose of ``rfft(x, n, axis, norm)`` for a real ``x`` of ``length`` along
    ``axis``, applied to ``g``: ``g`` padded with zeros to ``n``, transformed, real."""
    return np.real(_fitted(np.fft.fft(g, n=n, axis=axis, norm=norm), axis, length))


def _irfft_transpose(g, length, n, axis, norm):
    """The transpose of ``irfft(y, n, axis, norm)`` for a ``y`` of ``length`` along ``axis``,
    applied to the real ``g``: each frequency counted as often as the mirrored spectrum
    holds it."""
    spectrum = np.moveaxis(np.fft.ifft(np.real(g), axis=axis, norm=norm), axis, -1)
    counted = np.moveaxis(spectrum[..., :n // 2 + 1] * _mirror_counts(n), -1, axis)
    return _fitted(counted, axis, length)


def _fitted(x, axis, length):
    """``x`` cropped, or padded with zeros at the end, along ``axis`` to ``length`` (the
    transpose of what a transform's ``n`` does to its input)."""
    have = np.shape(x)[axis]
    if have > length:
        x = np.moveaxis(np.moveaxis(x, axis, -1)[..., :length], -1, axis)
    elif have < length:
        widths = [(0, 0)] * np.ndim(x)
        widths[axis] = (0, length - have)
        x = np.pad(x, widths)
    return x


def _mirror_counts(n):
    """How many entries of the spectrum of a real signal of length ``n`` each of the first
    ``n // 2 + 1`` stands for: 1 for the zero frequency (and the Nyquist frequency of an
    even ``n``), 2 for the others."""
    counts = np.full(n // 2 + 1, 2.0)
    counts[0] = 1.0
    if n % 2 == 0:
        counts[-1] = 1.0
    return counts
