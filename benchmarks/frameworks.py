"""Other AD frameworks for comparison: autograd, JAX (plain and jitted), PyTorch on CPU,
TensorFlow (``GradientTape`` eager and inside ``tf.function``).

None of them is required. Each entry of ``FRAMEWORKS`` turns a ``models.Case`` into a
zero-argument ``run`` that computes the case's gradients and returns them as a tuple of
arrays ``np.asarray`` accepts, finished (JAX results are blocked on), so that timing
``run`` times the whole gradient. An entry raises ``NotInstalled`` when its framework
cannot be imported; any other exception means the framework failed on the case.

The user's function is reused as written: its global ``np`` is rebound to
``autograd.numpy``, ``jax.numpy``, ``tf.experimental.numpy`` (with NumPy behaviour on
tensors), or a small NumPy-like view of ``torch``.
"""

import importlib
import types

import numpy as np


class NotInstalled(Exception):
    """The framework cannot be imported."""


def rebind(fn, **names):
    """Return a copy of ``fn`` whose globals have ``names`` replaced."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise NotInstalled(name) from error


def autograd_runner(case):
    autograd = _import("autograd")
    anp = _import("autograd.numpy")
    gradient = autograd.grad(rebind(case.fn, np=anp), argnum=case.wrt)
    args = case.args
    return lambda: gradient(*args)


def _jax_gradient(case):
    jax = _import("jax")
    jax.config.update("jax_enable_x64", True)
    gradient = jax.grad(rebind(case.fn, np=jax.numpy), argnums=case.wrt)
    args = tuple(jax.device_put(a) for a in case.args)
    return jax, gradient, args


def jax_runner(case):
    jax, gradient, args = _jax_gradient(case)
    return lambda: jax.block_until_ready(gradient(*args))


def jax_jit_runner(case):
    jax, gradient, args = _jax_gradient(case)
    gradient = jax.jit(gradient)
    return lambda: jax.block_until_ready(gradient(*args))


def _torch_as_numpy(torch):
    """The part of the NumPy namespace the benchmark models use, on torch tensors."""

    def sum_(x, axis=None, keepdims=False):
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis, keepdim=keepdims)

    def max_(x, axis=None, keepdims=False):
        return torch.amax(x, dim=() if axis is None else axis, keepdim=keepdims)

    return types.SimpleNamespace(tanh=torch.tanh, exp=torch.exp, log=torch.log,
                                 sum=sum_, max=max_)


def torch_runner(case):
    torch = _import("torch")
    fn = rebind(case.fn, np=_torch_as_numpy(torch))
    args = [torch.from_numpy(np.array(a)) for a in case.args]
    leaves = [args[i].requires_grad_() for i in case.wrt]

    def run():
        return torch.autograd.grad(fn(*args), leaves)

    return run


def _tf_gradient(case, compiled):
    tf = _import("tensorflow")
    tnp = tf.experimental.numpy
    tnp.experimental_enable_numpy_behavior()      # x.T, x @ w on tensors
    fn = rebind(case.fn, np=tnp)
    args = [tf.constant(a) for a in case.args]

    def gradient(*args):
        watched = [args[i] for i in case.wrt]
        with tf.GradientTape() as tape:
            for value in watched:
                tape.watch(value)
            out = fn(*args)
        return tape.gradient(out, watched)

    if compiled:
        gradient = tf.function(gradient)
    return lambda: gradient(*args)        # eager tensors are computed when returned


def tensorflow_runner(case):
    return _tf_gradient(case, compiled=False)


def tf_function_runner(case):
    return _tf_gradient(case, compiled=True)


FRAMEWORKS = {
    "autograd": autograd_runner,
    "jax": jax_runner,
    "jax.jit": jax_jit_runner,
    "torch": torch_runner,
    "tensorflow": tensorflow_runner,
    "tf.function": tf_function_runner,
}
