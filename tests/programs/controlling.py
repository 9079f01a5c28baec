"""Functions that control their gradients (tests/test_gradient_control.py, docs/controlling.md).

The examples of docs/controlling.md come first; a test checks that the
doc's copies of them, and of the code srctrans generates for them, are
current.
"""

import math

import numpy as np

import srctrans as st
import srctrans as autodiff

try:
    from scipy import special
except ImportError:                       # the tests that need SciPy are skipped
    special = None


# -- docs/controlling.md ---------------------------------------------------------

def stopped(x, y):
    return x ** 2 + st.stop_gradient(y ** 2)


def not_recorded(x, y):
    x_sq = x * x
    with st.stop_recording():
        y_sq = y * y
    return x_sq + y_sq


@st.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return dy * min(1.0, 0.5 / np.linalg.norm(dy))
    return y, backward


def clipped_square(v):
    return clip_gradients(v * v)


def log1pexp(x):
    return np.log1p(np.exp(x))


def softplus_loss(w, x):
    return np.sum(log1pexp(x @ w))


def rnn(xs, W, U, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
        with st.grad_of(h) as dh:
            dh = np.clip(dh, -0.1, 0.1)
    return np.sum(h * h)


def two_sources(x0, x1):
    y0 = np.sin(x0)
    y1 = 1.0 / (1.0 + np.exp(-x1))
    return np.sum(y0 + y1)


def model(W, x):
    return np.tanh(x @ W)


def squared_error(y, target):
    return np.sum((y - target) ** 2)


def model_loss(W, x, target):
    return squared_error(model(W, x), target)


def rounded(x):
    return np.sum(np.round(x * 4.0) / 4.0 * x)


# -- stop_gradient and stop_recording ----------------------------------------------

def stopped_array(x, y):
    return np.sum(x * st.stop_gradient(x * y))


def stopped_alias(x):
    return autodiff.stop_gradient(x) * x


def recorded_partly(x, y):
    a = x * y
    with st.stop_recording():
        b = a * y
        c = np.sin(b)
    return a + c * x


def not_recorded_in_loop(x, n):
    s = x * 0.0
    for i in range(n):
        s = s + x * x
        with st.stop_recording():
            scale = np.sum(s * s)
        s = s / scale
    return np.sum(s)


def not_recorded_write(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    with st.stop_recording():
        y[1] = x[1] * 3.0
    y[2] = x[2] * 4.0
    return np.sum(y * x)


# -- custom_gradient ----------------------------------------------------------------

@st.custom_gradient
def scaled_product(a, b):
    def backward(dy):
        return dy * b * 10.0, None            # 10 times the true da, none for b
    return a * b, backward


def calls_product(a, b):
    return np.sum(scaled_product(a, b))


def calls_product_by_name(a, b):
    return np.sum(scaled_product(a, b=b))


@st.custom_gradient
def straight_through_round(x):
    def backward(dy):
        return dy
    return np.round(x), backward


def quantised(x):
    return np.sum(straight_through_round(x * 3.0) * x)


def product_in_loop(a, b, n):
    total = 0.0
    for i in range(n):
        total = total + np.sum(scaled_product(a, b))
    return total


@st.custom_gradient
def not_a_pair(x):
    return x * 2.0


def calls_not_a_pair(x):
    return not_a_pair(x)


@st.custom_gradient
def wrong_shape(x):
    def backward(dy):
        return np.ones(7)
    return x * 1.0, backward


def calls_wrong_shape(x):
    return np.sum(wrong_shape(x))


@st.custom_gradient
def keyword_only(x, *, scale):
    def backward(dy):
        return dy * scale
    return x * scale, backward


def calls_keyword_only(x, s):
    return np.sum(keyword_only(x, scale=s))


# -- register_vjp, register_jvp, nondifferentiable -------------------------------------------

def cube(x):
    return x ** 3


def calls_cube(x, y):
    return np.sum(cube(x) * y)


def calls_cube_by_name(x):
    return np.sum(cube(x=x))


vectorized_square = np.vectorize(lambda a: a * a)


def calls_vectorized(x):
    return np.sum(vectorized_square(x) * x)


def calls_remainder(x):
    return math.remainder(x, 0.3) * 2.0


def pick_and_scale(x, k):
    return x * k


def calls_pick(x):
    return np.sum(pick_and_scale(x, 2.0))


def two_out_rule(x, y):
    return x * y


def calls_two_out(x, y):
    return np.sum(two_out_rule(x, y))


def has_a_try(x):
    try:
        return np.exp(x)
    except FloatingPointError:
        return x


def calls_has_a_try(x):
    return np.sum(has_a_try(x))


def bucket(x):
    return np.floor(x * 2.0) / 2.0 + 0.1 * x


def calls_bucket(x):
    return np.sum(bucket(x) * x + x)


def sin_sum(x):
    return np.sum(np.sin(x))


def calls_i0e(x):
    return np.sum(special.i0e(x) * x)


# -- grad_of --------------------------------------------------------------------------

def hook_scales(x):
    h = np.sin(x)
    with st.grad_of(h) as dh:
        dh = dh * 3.0
    return np.sum(h * h)


def hook_on_parameter(x):
    with st.grad_of(x) as dx:
        dx = dx * 2.0
    return np.sum(x * x)


def hook_on_output(x):
    y = x * x
    with st.grad_of(y) as dy:
        dy = dy * 5.0
    return y


def hook_synthetic(x, target):
    h = x * 2.0
    with st.grad_of(h) as dh:
        dh = h - target
    return np.sum(np.sin(x))


def hook_logs(x, log):
    h = np.tanh(x)
    with st.grad_of(h) as dh:
        log.append(np.linalg.norm(dh))
        print("norm of dh:", np.linalg.norm(dh))
    return np.sum(h * 2.0)


def hook_with_branch(x, flag):
    if flag:
        h = x * 2.0
        with st.grad_of(h) as dh:
            dh = -dh
    else:
        h = x * 3.0
    return np.sum(h * h)


def hook_twice(x):
    h = x * x
    with st.grad_of(h) as first:
        first = first * 2.0
    h = h * 3.0
    with st.grad_of(h) as second:
        second = second + 1.0
    return np.sum(h)


def hook_body_control_flow(x):
    h = np.sin(x)
    with st.grad_of(h) as dh:
        norm = np.linalg.norm(dh)
        if norm > 1.0:
            dh = dh / norm
        total = 0.0
        for g in dh:
            total = total + g
    return np.sum(h * 4.0)


def hook_unused_value(x, y):
    h = y * 2.0
    with st.grad_of(h) as dh:
        dh = dh * 100.0
    return np.sum(h + x)


def rnn_reference(xs, W, U, h0, limit):
    """The gradient of rnn's output with respect to W, with dh clipped at every step (by hand)."""
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(xs[t] @ W + hs[-1] @ U))
    dh = 2.0 * hs[-1]
    dW = np.zeros_like(W)
    for t in reversed(range(xs.shape[0])):
        dh = np.clip(dh, -limit, limit)
        da = dh * (1.0 - hs[t + 1] ** 2)
        dW = dW + np.outer(xs[t], da)
        dh = da @ U.T
    return dW


# -- integer casts and random draws -------------------------------------------------------

def int_cast(x):
    k = (x * 3.0).astype(int)
    return np.sum(x * k)


def int_cast_by_name(x):
    k = x.astype(dtype="int32")
    return np.sum(x * k + x)


def float_cast(x):
    return np.sum(x.astype(np.float32) * x)


def bool_mask(x):
    keep = (x > 0.5).astype(bool)
    return np.sum(np.where(keep, x * x, x))


def random_draws(x, rng):
    noise = rng.normal(size=x.shape)
    more = np.random.normal(x)
    return np.sum(x * noise + more)


def draws_around_x(x, rng):
    return np.sum(rng.normal(x, 1.0))  # marker: local-generator


GENERATOR = np.random.default_rng(3)


def global_generator(x):
    return np.sum(x + GENERATOR.normal(x))


def rounding_functions(x):
    return np.sum(x * np.sign(x) + np.floor(x) + np.ceil(x) + round(float(x[0])))


def unconnected(x, y):
    return x * 2.0


# -- misuse (each rejected at the line of its marker) -----------------------------------------

def with_other_context(x, lock):
    with lock:  # marker: other-with
        y = x * 2.0
    return y


def stop_recording_as(x):
    with st.stop_recording() as recording:  # marker: recording-as
        y = x * 2.0
    return y


def grad_of_expression(x):
    h = x * 2.0
    with st.grad_of(h * 2.0) as dh:  # marker: grad-of-expression
        dh = dh * 2.0
    return h


def grad_of_without_as(x):
    h = x * 2.0
    with st.grad_of(h):  # marker: grad-of-without-as
        print(h)
    return h


def hook_after_a_use(x):
    h = x * 2.0
    y = h * h  # marker: use-before-hook
    with st.grad_of(h) as dh:
        dh = dh * 2.0
    return y + h


def hook_without_assignment(x):
    h = x * 2.0
    for i in range(3):
        with st.grad_of(h) as dh:  # marker: hook-without-assignment
            dh = dh * 2.0
    return h


def hook_writes_into_gradient(x):
    h = x * 2.0
    with st.grad_of(h) as dh:
        dh[0] = 0.0  # marker: hook-writes
    return h


def hook_assigns_forward_name(x):
    h = x * 2.0
    y = x * 3.0
    with st.grad_of(h) as dh:
        y = dh * 2.0  # marker: hook-assigns-forward
    return h + y


def hook_gradient_used_outside(x):
    h = x * 2.0
    with st.grad_of(h) as dh:  # marker: gradient-used-outside
        print(dh)
    dh = 3.0
    return h * dh


def hook_returns(x):
    h = x * 2.0
    with st.grad_of(h) as dh:
        return dh  # marker: hook-returns
    return h


def stop_recording_breaks(x):
    for i in range(3):
        with st.stop_recording():
            break  # marker: recording-breaks
    return x


def nested_hooks(x):
    h = x * 2.0
    with st.grad_of(h) as dh:
        with st.stop_recording():  # marker: nested-with
            dh = dh * 2.0
    return h


@st.checkpoint
def remat_block(h, W):
    return np.tanh(h @ W) * np.sin(h @ W)


def plain_block(h, W):
    return np.tanh(h @ W) * np.sin(h @ W)


def checkpointed_steps(W, x):
    h = x
    for _ in range(5):
        h = remat_block(h, W)
    return np.sum(h * h)


def plain_steps(W, x):
    h = x
    for _ in range(5):
        h = plain_block(h, W)
    return np.sum(h * h)


def checkpointed_rnn(W, xs, h):
    for t in st.checkpointed(range(len(xs)), snapshots=4):
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


def unconnected_through_a_reused_loop_name(x, y):
    """``y`` reaches ``u`` and ``v`` of the first loop only; the second binds them afresh."""
    total = 0.0
    for u, v in [(x[0], y), (x[1], y * 2.0)]:
        total = total + u * v
    out = 0.0
    for u, v in zip(x, np.tanh(x)):
        out = out + u * v
    return out
