"""Every rule's batched form, against a loop of the unbatched call.

Each case of the rule table in test_jvp_rules.py (the cases whose keyword
arguments are constants) is called in a module srctrans builds (as in
test_rules_second_order.py), on three members drawn from the case's domains
(its seed and the next two). ``st.vmap`` of the call must equal the loop over
the members:

  * with every float argument batched along axis 0, and along its last axis;
  * with the first float argument unbatched (``in_axes`` None), where there
    are two or more;
  * under ``grad``: ``vmap(grad(total))``, where ``total`` sums ``sin`` of the
    call's float outputs (so the gradient depends on the values), and to
    second order: ``vmap`` of the JVP of that gradient (a Hessian-vector product),
    for every fourth case in the README's test command and for every case with
    ``SRCTRANS_VMAP_RULES=all python -m pytest tests/test_vmap_rules.py``.

A batched call that falls back to a loop over members warns
(``st.BatchingWarning``): ``LOOPED`` lists the cases that still do, each with
why; a case outside it that warns fails, and so does one inside it that no
longer warns.
"""

import importlib.util
import os
import tempfile
import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans import batch_api
from test_jvp_rules import CASES, _seed
from test_rules_second_order import _differentiable, _literal

MEMBERS = 3

# case id -> what its batched form (or that of its gradient, or of the gradient's JVP) still
# runs once per member: a call without a batching rule yet, an `if` on a batched value in a
# derivative helper, or a list argument batched (then the whole function runs per member)
LOOPED = {
    'append': 'a call of append',
    'append-axis': 'a call of append',
    'arange': 'a call of arange',
    'arange-start-stop': 'a call of arange',
    'array-of-arrays': 'a call of asarray_grad',
    'array-split': 'a call of concatenate',
    'asanyarray': 'a call of asarray_grad',
    'asarray': 'a call of asarray_grad',
    'ascontiguousarray': 'a call of asarray_grad',
    'block': 'a call of block',
    'block-flat': 'a call of block',
    'block-promoted': 'a call of block',
    'builtin-float': 'a call of float',
    'builtin-list': 'a call of list',
    'builtin-max': 'a call of max',
    'builtin-max-list': 'a call of max',
    'builtin-min-array': 'a call of min',
    'builtin-sum': 'a call of sum',
    'builtin-sum-broadcast': 'a call of sum',
    'builtin-sum-start': 'a call of sum',
    'builtin-tuple': 'a call of tuple',
    'cholesky': 'a call of tril_halved',
    'cholesky-batch': 'a call of tril_halved',
    'choose': 'a call of choose',
    'column_stack': 'a call of column_stack',
    'complex': 'a call of complex',
    'compress': 'a call of compress',
    'compress-flat': 'a call of compress',
    'concatenate': 'a call of concatenate',
    'concatenate-axis-none': 'a call of concatenate',
    'convolve': 'a call of convolve',
    'convolve-same': 'a call of convolve',
    'convolve-valid-swapped': 'a call of convolve',
    'correlate': 'a call of correlate',
    'correlate-full': 'a call of correlate',
    'correlate-same': 'a call of correlate',
    'cross': 'a call of cross',
    'cross-axes': 'a call of cross',
    'cross-axis': 'a call of cross',
    'cumprod': 'a call of stack',
    'cumprod-axis': 'a call of stack',
    'cumprod-zeros': 'a call of stack',
    'cumsum': 'a call of cumsum_grad',
    'det': 'a call of bool',
    'det-batch': 'a call of bool',
    'diag-matrix': 'a call of diag',
    'diag-vector': 'a call of diag',
    'diagflat': 'a call of diagflat',
    'diagonal': 'a call of diagonal_grad',
    'diagonal-offset-axes': 'a call of diagonal_grad',
    'dirichlet-logpdf': 'a call of dirichlet_gen.logpdf',
    'dirichlet-pdf': 'a call of dirichlet_gen.pdf',
    'dot-0d': 'a call of dot_lhs',
    'dot-3d-2d': 'a call of dot_lhs',
    'dsplit': 'a call of dsplit',
    'dstack': 'a call of dstack',
    'ediff1d': 'a call of ediff1d',
    'eig': '_is_zero: an identity or membership test of a batched value',
    'eig-batch': '_is_zero: an identity or membership test of a batched value',
    'eig-real-spectrum': '_is_zero: an identity or membership test of a batched value',
    'eigh': '_triangle_halved: a call through a value',
    'eigh-nonsymmetric-input': '_is_zero: an identity or membership test of a batched value',
    'eigh-upper-batch': '_is_zero: an identity or membership test of a batched value',
    'eigvals': 'a call of solve',
    'eigvals-batch': 'a call of solve',
    'eigvalsh': '_triangle_halved: a call through a value',
    'eigvalsh-upper-batch': '_triangle_halved: a call through a value',
    'einsum-batch-broadcast': 'a call of einsum',
    'einsum-diagonal': 'a call of einsum_grads',
    'einsum-matmul': 'a call of einsum_grads',
    'einsum-three': 'a call of einsum_grads',
    'extract': 'a call of extract',
    'fft-real': 'a call of pad_tangent',
    'fliplr': 'a call of fliplr',
    'flipud': 'a call of flipud',
    'full': 'a call of full',
    'full-broadcast': 'a call of full',
    'full_like': 'a call of full_like',
    'geomspace': 'a call of linspace_grads',
    'geomspace-arrays': 'a call of linspace_grads',
    'hsplit': 'a call of hsplit',
    'hstack': 'a call of hstack',
    'ihfft': 'a call of pad_tangent',
    'ihfft-padded': 'a call of pad_tangent',
    'inner': 'a call of inner',
    'interp': 'a call of interp',
    'interp-left-right': 'a call of interp',
    'kron': 'a call of kron',
    'kron-mixed-ndim': 'a call of kron',
    'linspace': 'a call of linspace_grads',
    'linspace-arrays': 'a call of linspace_grads',
    'linspace-one': 'a call of linspace_grads',
    'logspace': 'a call of linspace_grads',
    'logspace-base': 'a call of linspace_grads',
    'logsumexp': 'logsumexp_share: an identity or membership test of a batched value',
    'logsumexp-axis-keepdims': 'logsumexp_share: an identity or membership test of a batched value',
    'lstsq-matrix': 'a call of lstsq',
    'lstsq-vector': 'a call of lstsq',
    'math-erf': 'a call of erf',
    'math-erfc': 'a call of erfc',
    'math-gamma': 'a call of gamma',
    'math-lgamma': 'a call of lgamma',
    'math-lgamma-negative': 'a call of lgamma',
    'matmul-1d-batch': 'a call of matmul_lhs',
    'matmul-batch-broadcast': 'a call of matmul_lhs',
    'matrix_power': 'a call of sum',
    'matrix_power-batch': 'a call of sum',
    'matrix_power-inverse': 'a call of sum',
    'matrix_transpose': 'a call of matrix_transpose',
    'meshgrid': 'a call of meshgrid',
    'meshgrid-ij-three': 'a call of meshgrid',
    'multi_dot': 'a call of multi_dot',
    'multi_dot-vectors': 'a call of multi_dot',
    'mvn-logpdf': 'a call of multivariate_normal_gen.logpdf',
    'mvn-logpdf-nonsymmetric-cov': 'a call of multivariate_normal_gen.logpdf',
    'mvn-logpdf-one-point-diagonal': 'a call of multivariate_normal_gen.logpdf',
    'mvn-pdf-scalar-cov': 'a call of multivariate_normal_gen.pdf',
    'nanprod': 'a call of prod_grad_dx',
    'nanprod-with-nans': 'a call of prod_grad_dx',
    'outer': 'a call of outer_lhs',
    'pad': 'a call of pad_grad',
    'pad-edge': 'a call of pad_grad',
    'pad-reflect': 'a call of pad_grad',
    'pad-symmetric': 'a call of pad_grad',
    'pad-wrap': 'a call of pad_grad',
    'partition': 'a call of argpartition',
    'partition-axis': 'a call of argpartition',
    'polyval': 'a call of polyval',
    'polyval-scalar': 'a call of polyval',
    'prod': 'a call of prod_grad_dx',
    'prod-axis': 'a call of prod_grad_dx',
    'prod-keepdims': 'a call of prod_grad_dx',
    'prod-with-zeros': 'a call of prod_grad_dx',
    'qr': 'qr_grad: a call made for its effect on batched values',
    'qr-r': 'qr_grad: a call made for its effect on batched values',
    'qr-square-batch': 'qr_grad: a call made for its effect on batched values',
    'real-if-close': 'a call of real_if_close',
    'repeat': 'a call of repeat_grad',
    'repeat-axis': 'a call of repeat_grad',
    'reshape-order-f': 'a call of reshape',
    'rfft': 'a call of pad_tangent',
    'rfft-cropped': 'a call of pad_tangent',
    'rfft-odd-ortho': 'a call of pad_tangent',
    'rfft2': 'a call of pad_tangent',
    'rfftn': 'a call of pad_tangent',
    'roll': 'a call of roll',
    'rollaxis': 'a call of rollaxis',
    'rollaxis-start': 'a call of rollaxis',
    'row_stack': 'a call of row_stack',
    'select': 'a call of select',
    'sl-cho-factor': 'a call of cho_factor',
    'sl-cho-factor-lower-batch': 'a call of cho_factor',
    'sl-cho-solve': 'a call of cho_solve',
    'sl-cho-solve-lower-vector': 'a call of cho_solve',
    'sl-det': 'a call of det',
    'sl-expm': 'a call of expm',
    'sl-expm-batch': 'a call of expm',
    'sl-inv': 'a call of inv',
    'sl-inv-batch': 'a call of inv',
    'sl-inv-pos': 'a call of inv',
    'sl-lu-factor': 'a call of lu_factor',
    'sl-lu-factor-batch': 'a call of lu_factor',
    'sl-lu-solve': 'a call of lu_solve',
    'sl-lu-solve-trans-vector': 'a call of lu_solve',
    'sl-solve': 'a call of solve',
    'sl-solve-diagonal': 'a call of solve',
    'sl-solve-lower-triangular': 'a call of solve',
    'sl-solve-pos-lower': 'a call of solve',
    'sl-solve-sylvester': 'a call of solve_sylvester',
    'sl-solve-sym-nonsymmetric-input': 'a call of solve',
    'sl-solve-triangular': 'a call of solve_triangular',
    'sl-solve-triangular-batch': 'a call of solve_triangular',
    'sl-solve-triangular-lower-trans': 'a call of solve_triangular',
    'sl-solve-triangular-unit-vector': 'a call of solve_triangular',
    'sl-solve-tridiagonal-transposed': 'a call of solve',
    'sl-solve-vector-batch': 'a call of solve',
    'sl-sqrtm': 'a call of sqrtm',
    'solve': 'a call of solve_grads',
    'solve-batch-broadcast': 'a call of solve',
    'solve-batch-vector': 'a call of solve',
    'solve-matrix': 'a call of solve_grads',
    'sort': 'a call of sort_tangent',
    'sort-axis-0': 'a call of sort_tangent',
    'sort-flat': 'a call of sort_grad',
    'split': 'a call of concatenate',
    'split-indices-axis': 'a call of concatenate',
    'ss-convolve': 'a call of convolve',
    'ss-convolve-same-2d': 'a call of convolve',
    'ss-convolve-valid-fft': 'a call of convolve',
    'ss-convolve-valid-swapped': 'a call of convolve',
    'ss-correlate': 'a call of correlate',
    'ss-correlate-same-direct': 'a call of correlate',
    'ss-correlate-valid-2d': 'a call of correlate',
    'ssd-cdist': 'a call of cdist',
    'ssd-cdist-sq': 'a call of cdist',
    'ssd-pdist': 'a call of pdist',
    'ssd-pdist-sq': 'a call of pdist',
    'ssd-squareform-vector': 'a call of squareform',
    'stack': 'a call of stack',
    'svd-square': '_is_zero: an identity or membership test of a batched value',
    'svd-tall-reduced': '_is_zero: an identity or membership test of a batched value',
    'svd-values': '_is_zero: an identity or membership test of a batched value',
    'svd-wide-reduced-batch': '_is_zero: an identity or membership test of a batched value',
    'take': 'a call of take_grad',
    'tensordot': 'a call of tensordot',
    'tensordot-pairs': 'a call of tensordot',
    'tensorinv': 'a call of tensorinv',
    'tensorsolve': 'a call of tensorsolve',
    'tile': 'a call of tile',
    'tile-int': 'a call of tile',
    'trace': 'a call of trace_grad',
    'trace-offset-axes': 'a call of trace_grad',
    'tril': 'a call of tril',
    'triu-k-batch': 'a call of triu',
    'unwrap': 'a call of unwrap',
    'vdot': 'a call of vdot',
    'vdot-complex': 'a call of vdot',
    'vdot-mixed': 'a call of vdot',
    'vsplit': 'a call of vsplit',
    'vstack': 'a call of vstack',
}


def _float_output(value):
    return isinstance(value, (np.ndarray, np.generic, float, complex)) and \
        np.asarray(value).dtype.kind in "fc"


def _module_for(case, args, kwargs, out, directory):
    """A module with ``call`` (the case's float arguments in, the primal's output out), ``total``
    (a scalar of that output, nonlinear in it) and ``hv`` (the JVP of ``total``'s gradient)."""
    parameters, passed = [], []
    for i, value in enumerate(args):
        if _differentiable(value):
            parameters.append(f"a{i}")
            passed.append(f"a{i}")
        else:
            passed.append(_literal(value))
    passed += [f"{k}={_literal(v)}" for k, v in kwargs.items()]
    call = f"PRIMAL({', '.join(passed)})"
    if isinstance(out, (tuple, list)):
        terms = [f"np.sum(np.sin(np.real(out[{i}])))" for i, v in enumerate(out) if _float_output(v)]
    else:
        terms = ["np.sum(np.sin(np.real(out)))"] if _float_output(out) else []
    names = ", ".join(parameters)
    tangents = ", ".join(f"t{i}" for i in range(len(parameters)))
    text = ("import numpy as np\nimport srctrans as st\n\n\n"
            f"def call({names}):\n    return {call}\n\n\n"
            f"def total({names}):\n    out = {call}\n    return {' + '.join(terms or ['0.0'])}\n\n\n"
            f"def hv({names}, {tangents}):\n"
            f"    return st.jvp(GRADIENT, ({names},), ({tangents},))[1]\n")
    name = "vmap_rule_" + "".join(c if c.isalnum() else "_" for c in case.id)
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as handle:
        handle.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.PRIMAL = case.primal
    spec.loader.exec_module(module)
    module.GRADIENT = st.grad(module.total, wrt=tuple(range(len(parameters))))
    return module, bool(terms)


def _members(case):
    """The case's arguments, and its float arguments for each of the members."""
    args, kwargs = case.build(_seed(case))
    floats = []
    for k in range(MEMBERS):
        member_args, _ = case.build(_seed(case) + k)
        floats.append([a for a in member_args if _differentiable(a)])
    return args, kwargs, floats


def _stacked(values, axis):
    """The members' values stacked along ``axis`` (list arguments entry by entry)."""
    if isinstance(values[0], list):
        return [_stacked([v[i] for v in values], axis) for i in range(len(values[0]))]
    return np.stack([np.asarray(v) for v in values], axis=axis)


def _close(got, want, what):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), what
        for g, w in zip(got, want):
            _close(g, w, what)
        return
    if want is None:
        assert got is None, f"{what}: {got!r} where the loop has None"
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, the loop's {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=what)


def _looped(fn, floats):
    """The loop ``vmap`` must equal: ``fn`` of each member, outputs stacked along axis 0 leaf
    by leaf (a tuple or list output stays one, None stays None)."""
    return _stacked_outputs([fn(*member) for member in floats])


def _stacked_outputs(outs):
    if isinstance(outs[0], (tuple, list)):
        return [_stacked_outputs([o[i] for o in outs]) for i in range(len(outs[0]))]
    if outs[0] is None:
        assert all(o is None for o in outs)
        return None
    if len({np.shape(o) for o in outs}) > 1:
        raise _Ragged
    return np.stack([np.asarray(o) for o in outs])


class _Ragged(Exception):
    """The members' outputs have different shapes: no batch holds them."""


def _batched_arguments(floats, in_axes):
    """The batched arguments: each float argument stacked over the members along its entry
    of ``in_axes`` (an int, or -1: its last axis), or member 0's where the entry is None."""
    out = []
    for i, ax in enumerate(in_axes):
        column = [member[i] for member in floats]
        out.append(column[0] if ax is None else _stacked(column, ax))
    return out


def _checked(case, directory):
    args, kwargs, floats = _members(case)
    if not floats[0]:
        pytest.skip("no float argument")
    with np.errstate(all="ignore"):
        try:
            out = case.primal(*args, **kwargs)
        except Exception:               # noqa: BLE001 -- the domains are the rule tests' own
            pytest.skip("the primal fails on this build")
    module, has_total = _module_for(case, args, kwargs, out, directory)
    return module, has_total, floats


def _ones(value):
    return [_ones(v) for v in value] if isinstance(value, list) else np.ones_like(value)


def _is_complex(value):
    return any(map(_is_complex, value)) if isinstance(value, list) else np.iscomplexobj(value)


def _unbatched_first(floats):
    """The members with the first float argument the same for all of them (member 0's)."""
    return [[floats[0][0]] + member[1:] for member in floats]


def _vmap_equals_loop(fn, floats, in_axes, what):
    batched = _batched_arguments(floats, in_axes)
    try:
        want = _looped(fn, floats)
    except _Ragged:                 # the members' results differ in shape: vmap says so
        with pytest.raises(st.ShapeError, match="different shapes"):
            st.vmap(fn, in_axes=tuple(in_axes))(*batched)
        return
    got = st.vmap(fn, in_axes=tuple(in_axes))(*batched)
    _close(got, want, what)


DIRECTORY = tempfile.mkdtemp(prefix="srctrans-vmap-rules-")


def _constant_keywords(case):
    _, kwargs = case.build(_seed(case))
    return all(isinstance(v, (int, float, str, bool, tuple, type(None))) for v in kwargs.values())


APPLICABLE = [case for case in CASES if _constant_keywords(case)]


# the second-order check runs for every fourth case in CI (the README's test command keeps
# to five minutes); SRCTRANS_VMAP_RULES=all runs it for every case
SECOND_ORDER_FOR_ALL = os.environ.get("SRCTRANS_VMAP_RULES") == "all"


@pytest.mark.parametrize("index, case", list(enumerate(APPLICABLE)), ids=[c.id for c in APPLICABLE])
def test_batched_rule_equals_a_loop(index, case):
    second_order = SECOND_ORDER_FOR_ALL or index % 4 == 0
    module, has_total, floats = _checked(case, DIRECTORY)
    n = len(floats[0])
    batch_api._warned.clear()        # each construct warns once a process: once a case here
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always", st.BatchingWarning)
        _vmap_equals_loop(module.call, floats, [0] * n, "in_axes 0")
        last = [-1 if isinstance(a, list) or np.ndim(a) else 0 for a in floats[0]]
        _vmap_equals_loop(module.call, floats, last, "in_axes at the last axis")
        if n > 1:
            same = _unbatched_first(floats)
            _vmap_equals_loop(module.call, same, [None] + [0] * (n - 1), "first argument None")
        if has_total and not any(_is_complex(a) for a in floats[0]):
            gradient = st.grad(module.total, wrt=tuple(range(n)))
            _vmap_equals_loop(gradient, floats, [0] * n, "vmap(grad)")
            if second_order:
                tangents = [[_ones(a) for a in member] for member in floats]
                both = [m + t for m, t in zip(floats, tangents)]
                _vmap_equals_loop(module.hv, both, [0] * (2 * n), "vmap of the gradient's JVP")
    looped = [str(w.message) for w in caught if issubclass(w.category, st.BatchingWarning)]
    if case.id in LOOPED:
        # (what loops may be in the second-order code alone: unchecked when it did not run)
        assert looped or not second_order, f"{case.id} is batched now: take it out of LOOPED"
    else:
        assert not looped, looped[0]
