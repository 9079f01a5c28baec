"""Fit through the Fourier transform, with complex numbers and eigenvalues.

Run it with ``python samples/spectral.py``. Three small fits, each a loss in plain
NumPy that srctrans differentiates (docs/complex.md):

* the width of a Gaussian blur, applied with ``np.fft.rfft`` and ``irfft``, fitted to a
  blurred signal by gradient descent on the log width;
* a complex gain ``g`` that maps one spectrum to another, fitted by gradient descent with
  the conjugate of ``st.grad`` (srctrans's gradient of a real loss of ``z = x + iy`` is
  ``dL/dx - i dL/dy``), against the least-squares answer;
* the damping that makes an oscillator's slowest mode decay at a given rate, through
  ``np.linalg.eigvals`` of its (real) system matrix, whose eigenvalues are complex.

Each loss's derivatives are also checked against finite differences, to second order.
"""

import numpy as np

import srctrans as st


def blurred(signal, log_width):
    """``signal`` convolved (circularly) with a Gaussian of width ``exp(log_width)``."""
    frequencies = np.fft.rfftfreq(signal.shape[0])
    width = np.exp(log_width)
    response = np.exp(-2.0 * (np.pi * frequencies * width) ** 2)
    return np.fft.irfft(np.fft.rfft(signal) * response, n=signal.shape[0])


def blur_misfit(log_width, signal, observed):
    return np.sum((blurred(signal, log_width) - observed) ** 2)


def gain_misfit(gain, source, target):
    """How far ``gain * source`` is from ``target``, two complex spectra."""
    return np.sum(np.abs(gain * source - target) ** 2)


def slowest_decay(damping, stiffness):
    """The decay rate of the slowest mode of ``x'' = -stiffness x - damping x'``."""
    n = stiffness.shape[0]
    system = np.block([[np.zeros((n, n)), np.eye(n)], [-stiffness, -damping * np.eye(n)]])
    return -np.max(np.real(np.linalg.eigvals(system)))


def decay_misfit(damping, stiffness, rate):
    return (slowest_decay(damping, stiffness) - rate) ** 2


def fit_blur(rng):
    t = np.arange(64)
    signal = np.sin(2 * np.pi * t / 16) + (t > 20) * (t < 40)
    observed = blurred(signal, np.log(2.0)) + rng.normal(0.0, 0.01, t.shape)
    log_width = 0.0
    step = st.value_and_grad(blur_misfit)
    for _ in range(60):
        value, gradient = step(log_width, signal, observed)
        log_width -= 0.02 * gradient
    st.check_grads(blur_misfit, (log_width, signal, observed), order=2, wrt=0)
    print(f"blur width: fitted {np.exp(log_width):.3f} (true 2.000), misfit {value:.5f}")


def fit_gain(rng):
    source = np.fft.fft(rng.normal(size=32))
    target = (0.8 + 0.6j) * source + rng.normal(0.0, 0.05, 32) * (1 + 1j)
    gain = 0j
    rate = 0.4 / np.sum(np.abs(source) ** 2)          # below 1 / the curvature
    for _ in range(40):
        gain -= rate * np.conj(st.grad(gain_misfit)(gain, source, target))
    best = np.sum(np.conj(source) * target) / np.sum(np.abs(source) ** 2)
    st.check_grads(gain_misfit, (gain, source, target), order=2, wrt=0)
    print(f"complex gain: fitted {gain:.4f} (least squares {best:.4f})")


def fit_damping():
    stiffness = np.array([[2.0, -1.0], [-1.0, 2.0]])
    damping = 0.1
    for _ in range(200):
        damping -= 2.0 * st.grad(decay_misfit)(damping, stiffness, 0.25)
    st.check_grads(decay_misfit, (damping, stiffness, 0.25), order=2, wrt=0)
    print(f"damping {damping:.4f}: slowest decay rate {slowest_decay(damping, stiffness):.4f} "
          f"(wanted 0.2500)")


def main():
    rng = np.random.default_rng(0)
    fit_blur(rng)
    fit_gain(rng)
    fit_damping()
    print("derivatives checked against finite differences: passed")


if __name__ == "__main__":
    main()
