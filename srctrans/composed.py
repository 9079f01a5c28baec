"""Matrices of derivatives composed from the two modes: Jacobians and batch Jacobians, and
the helpers that select arguments and assemble blocks (which :mod:`srctrans.second_order`
shares for Hessians).

Each is built from the generated functions of `api` and `forward_api`: a reverse Jacobian
runs the forward pass once and the pullback over the output's basis (one batched call where
:mod:`srctrans.batched_matrices` applies, else once per output element); a forward Jacobian
runs one JVP per input element.
"""

import functools
import itertools

import numpy as np

from srctrans import batched_matrices, cache
from srctrans.pytrees import is_tree, tree_leaves, tree_map
from srctrans.runtime.foreign import as_array, is_foreign
from srctrans.runtime.seeding import check_outputs, is_complex, is_float, split_aux_pair
from srctrans.normalize import auxiliary
from srctrans.reporting import calls_of, user_facing
from srctrans.errors import NonDifferentiableError, ShapeError, UsageError
from srctrans.hints import Function, JacobianMode, Wrt

_MODES = ("auto", "reverse", "forward")


@user_facing
def jacobian(f: Function, wrt: Wrt = 0, *, mode: JacobianMode = "auto",
             optimize: bool = True, has_aux: bool = False) -> Function:
    """The Jacobian of ``f`` as a new function.

    Args:
      f: a function of arrays returning an array, a number, or a container
        (or object) of them.
      wrt: an argument index or name, or a tuple of them.
      mode: ``"reverse"`` runs the forward pass once and the pullback once
        per output element; ``"forward"`` runs one JVP per input element;
        ``"auto"`` (default) picks the mode with fewer passes, reverse on a tie.
      optimize: run the optimisation passes (default True).
      has_aux: ``f`` returns ``(output, aux)``: the Jacobian is of ``output``
        alone, and the function returns ``(jacobian, aux)`` (JAX's convention).

    Returns:
      A function taking ``f``'s arguments and returning the Jacobian with
      shape ``out.shape + x.shape`` (TensorFlow's and JAX's layout) for the
      selected argument ``x``, or a tuple of them, one per entry of ``wrt``.
      A selected argument that is a container (a dict, list or tuple of
      arrays, a named tuple, a dataclass) gets a container of the same
      structure holding one such block per array, as JAX's ``jacrev``; its
      ints and strings are constants, with None. A container output nests
      the same way, outside: ``J["loss"]["W"]`` has shape
      ``loss.shape + W.shape``. Where the output does not depend on an
      argument the Jacobian is zero.

    >>> def f(x):
    ...     return x * x
    >>> jacobian(f)(np.array([1.0, 2.0]))                 # doctest: +SKIP
    array([[2., 0.],
           [0., 4.]])
    """
    _check_mode(mode)

    @functools.wraps(f, updated=())
    @user_facing(calls=calls_of(f))
    def jacobian_of_f(*args):
        fn, call_args, names, indices, single = _selected(f, args, wrt, "jacobian", has_aux)
        selected = [call_args[i] for i in indices]
        inputs = [_float_leaves(a) for a in selected]             # per argument, its arrays
        columns = sum(x.size for leaves_ in inputs for x in leaves_ if x is not None)
        ran = None if mode == "forward" else \
            batched_matrices.forward_pass(fn, call_args, names, optimize)
        blocks = None
        if ran is not None and (mode == "reverse" or columns >= ran[1].size):
            out, aux = ran[1], None                # one batched backward pass over its basis
            blocks = batched_matrices.reverse_rows(ran[0], ran[2], out, selected)
        if blocks is None:
            out, pullback, aux = _output(fn, call_args, names, optimize, mode)
            outputs = _output_leaves(out)                          # the output's arrays
            rows = sum(o.size for o in outputs if o is not None)
            if mode == "forward" or mode == "auto" and columns < rows:
                if not auxiliary.has_aux(fn):       # one batched JVP over each basis
                    blocks = batched_matrices.forward_columns(fn, call_args, indices, selected,
                                                              out, optimize)
                if blocks is None:
                    blocks = _forward_columns(fn, call_args, indices, selected, inputs, out,
                                              outputs, optimize)
            else:
                blocks = _reverse_rows(pullback, selected, inputs, out, outputs)
        outputs = _output_leaves(out)
        per_argument = [[_rebuilt(a, by_output[i]) for by_output in blocks]
                        for i, a in enumerate(selected)]
        result = [_rebuilt(out, [None if o is None else parts[m] for m, o in enumerate(outputs)])
                  for parts in per_argument]
        result = result[0] if single else tuple(result)
        return (result, aux) if has_aux else result

    return jacobian_of_f


@user_facing
def batch_jacobian(f: Function, wrt: Wrt = 0, *, mode: JacobianMode = "auto",
                   optimize: bool = True) -> Function:
    """The Jacobian of each batch row of ``f``'s output with respect to the same row of its input.

    Assumes what batched models guarantee: row ``b`` of the output depends
    only on row ``b`` of the input (no batch normalisation, no mixing across
    rows). Under that assumption the per-row Jacobians are found without the
    full Jacobian: one pullback per element of an output row (or, in forward
    mode, one JVP per element of an input row), each covering every row at once.
    With mixing across rows the result is wrong, not an error.

    Args:
      f: a function whose selected argument and output both have the batch
        axis first (for a container or an object, each of its arrays).
      wrt: one argument index or name.
      mode: ``"reverse"``, ``"forward"`` or ``"auto"``, as in [`jacobian`][srctrans.jacobian].

    Returns:
      A function returning an array of shape
      ``(batch,) + out.shape[1:] + x.shape[1:]``; for a container argument, a
      container of its structure holding one such block per array (None for
      its ints and strings).
    """
    _check_mode(mode)
    if isinstance(wrt, (tuple, list)):
        raise UsageError("batch_jacobian takes one argument in wrt", hint="call it once per argument")

    @functools.wraps(f, updated=())
    @user_facing(calls=calls_of(f))
    def batch_jacobian_of_f(*args):
        fn, call_args, names, indices, _ = _selected(f, args, wrt, "batch_jacobian")
        argument = call_args[indices[0]]
        inputs = _float_leaves(argument)          # its arrays (itself for an array)
        ran = None if mode == "forward" else \
            batched_matrices.forward_pass(fn, call_args, names, optimize)
        if ran is not None:
            out = ran[1]
        else:
            out, pullback, _ = _output(fn, call_args, names, optimize, mode)
        out_shape = _array_shape(out, "batch_jacobian")
        for x in inputs:
            if x is not None and (not out_shape or not x.shape or out_shape[0] != x.shape[0]):
                raise ShapeError(f"batch_jacobian needs the output and the argument to share "
                                 f"the batch axis, but they have shapes {out_shape} and "
                                 f"{x.shape}", hint="put the batch axis first in the output "
                                 "and in every array of the argument")
        batch, out_row = out_shape[0], out_shape[1:]
        out_size = int(np.prod(out_row))
        sizes = [None if x is None else int(np.prod(x.shape[1:])) for x in inputs]
        shapes = [None if x is None else (batch,) + out_row + x.shape[1:] for x in inputs]
        dtypes = [None if x is None else _float_dtype(out, x) for x in inputs]
        forward = mode == "forward" or mode == "auto" and sum(filter(None, sizes)) < out_size
        if type(argument) is np.ndarray:          # one batched pass over the row units
            block = _batched_block(fn, call_args, indices[0], argument, out, ran, forward,
                                   optimize)
            if block is not None:
                return block
        if ran is not None:
            out, pullback, _ = _output(fn, call_args, names, optimize, mode)
        if forward:
            blocks = []
            for leaf, x in enumerate(inputs):
                if x is None:
                    blocks.append(None)
                    continue
                columns = []
                for k in range(sizes[leaf]):
                    tangent = _tangent(argument, leaf, _row_unit(x.shape, k, x.dtype))
                    _, column = _jvp(fn, call_args, indices, [tangent], optimize)
                    columns.append(np.reshape(_broadcast(column, out_shape), (batch, out_size)))
                blocks.append(_assembled(columns, (batch, out_size), 2, shapes[leaf], dtypes[leaf]))
            return _rebuilt(argument, blocks)
        rows = [[] for _ in inputs]
        for o in range(out_size):
            (g,) = _pulled_back(pullback, _row_unit(out_shape, o, _float_dtype(out)))
            for leaf, (x, piece) in enumerate(zip(inputs, _aligned(argument, g))):
                if x is not None:
                    rows[leaf].append(np.reshape(_broadcast(piece, x.shape), (batch, sizes[leaf])))
        return _rebuilt(argument, [
            None if x is None else _assembled(rows[leaf], (batch, sizes[leaf]), 1, shapes[leaf], dtypes[leaf])
            for leaf, x in enumerate(inputs)])

    return batch_jacobian_of_f


def _batched_block(fn, call_args, position, x, out, ran, forward, optimize):
    """``st.batch_jacobian``'s block for the array argument ``x`` from one batched JVP over
    its row units (``forward``) or one batched backward pass over the output's (after the
    forward pass ``ran``); None where that does not apply."""
    if not forward:
        return None if ran is None else batched_matrices.batch_rows(ran[0], ran[2], out, x)
    found = batched_matrices.jvp_along(fn, call_args, position, optimize)
    if found is None or not isinstance(out, np.ndarray):
        return None
    return batched_matrices.batch_columns(found[1], call_args, found[2], x, out.shape)


# -- helpers ---------------------------------------------------------------------

def _check_mode(mode):
    if mode not in _MODES:
        raise UsageError(f"mode must be one of {', '.join(map(repr, _MODES))}, not {mode!r}")


def _selected(f, args, wrt, matrix=None, with_aux=False):
    """(function, call arguments, selected names, their indices in the call arguments, single).

    ``matrix`` names a transform that returns a matrix of derivatives (``"jacobian"``):
    it refuses complex arguments (below). ``with_aux``: the function is the variant of
    ``f`` that returns ``(output, aux)`` (``has_aux=True``)."""
    from srctrans.selection import check_differentiable, unwrap
    fn, bound_self = unwrap(f)
    if with_aux:
        fn = auxiliary.variant_with_aux(fn)
    key = (wrt if not isinstance(wrt, list) else tuple(wrt), len(args), bound_self is not None)
    memo = _selections.setdefault(fn, {})
    found = memo.get(key)
    if found is None:
        found = memo[key] = _selection(fn, bound_self, args, wrt)
    names, indices, single = found
    call_args = tuple(args) if bound_self is None else (bound_self,) + tuple(args)
    for name, index in zip(names, indices):
        check_differentiable(call_args[index], name)
        if matrix is not None and is_complex(call_args[index]):
            raise NonDifferentiableError(
                f"argument {name!r} is complex: st.{matrix} builds a matrix of derivatives, "
                f"which exists for complex arguments only where the function is holomorphic",
                hint="use st.jvp or st.vjp (docs/complex.md), or pass the real and imaginary "
                     "parts as real arguments")
    return fn, call_args, names, indices, single


_selections = cache.memo()    # function -> {(wrt, argument count, bound): selection}


def _selection(fn, bound_self, args, wrt):
    from srctrans.selection import Selection
    signature_fn = fn if bound_self is None else functools.partial(fn, bound_self)
    selection = Selection(signature_fn, wrt)
    shift = 0 if bound_self is None else 1       # indices count from the bound object, if any
    indices = []
    for index, name, _ in selection.places:
        if index is None or index >= len(args):
            raise UsageError(f"the selected argument {name!r} must be passed positionally")
        indices.append(index + shift)
    return selection.names, tuple(indices), selection.single


def _output(fn, call_args, names, optimize, mode):
    """``(out, pullback, aux)``: the pullback only when reverse mode may be used (``mode`` is
    not ``"forward"``); its forward pass gives ``out``, else a plain call does. ``aux`` is
    None but for the variant of a function returning ``(out, aux)`` (``has_aux``)."""
    from srctrans.api import vjp
    with_aux = auxiliary.has_aux(fn)
    if mode == "forward":
        out, aux = fn(*call_args), None
        if with_aux:
            out, aux = split_aux_pair(out)
        check_outputs(out)
        return out, None, aux
    found = vjp(fn, *call_args, wrt=names, unconnected_gradients="zero", optimize=optimize,
                has_aux=with_aux)
    return found if with_aux else (*found, None)


def _jvp(fn, call_args, indices, tangents, optimize, with_output=False):
    """``(None, out_tangent)`` of ``fn`` along ``tangents`` of the arguments at ``indices``
    (from code that computes only the tangent); ``with_output``: ``(out, out_tangent)``."""
    from srctrans.forward_api import run_jvp
    full = [None] * len(call_args)
    for index, tangent in zip(indices, tangents):
        full[index] = tangent
    if with_output:             # (a has-aux gradient function's output holds any aux)
        return run_jvp(fn, None, tuple(call_args), tuple(full), {}, optimize, checked=False)
    tangent = run_jvp(fn, None, tuple(call_args), tuple(full), {}, optimize, tangent_only=True)
    return None, tangent[0] if auxiliary.has_aux(fn) else tangent    # (output, aux): output's


def _gradient_function(fn, names, call_args):
    """The generated gradient of ``fn`` (a tuple per selected name) for these arguments.

    The gradient specialised on the arguments' shapes when srctrans can make
    one (no generic helpers, so its JVP is plain NumPy), else the generic one. It takes
    only the branches the key decides (``guess`` off: no branch taken as the measuring
    call took it, which a derivative of it would hold on alone).
    """
    found = cache.instance(fn, names, True, True).for_call(fn, call_args, {}, now=True,
                                                           guess=False)
    if found.grad is not None:
        return found.grad
    return cache.gradient_instance(fn, names).grad


def _forward_columns(fn, call_args, indices, selected, inputs, out, outputs, optimize):
    """The Jacobian blocks, ``blocks[output leaf][argument][leaf]``, one JVP per input element."""
    blocks = [[[None] * len(leaves_) for leaves_ in inputs] for _ in outputs]
    for position, (argument, leaves_) in enumerate(zip(selected, inputs)):
        for leaf, x in enumerate(leaves_):
            if x is None:
                continue
            columns = [[] for _ in outputs]
            for k in range(x.size):
                tangents = [None] * len(inputs)
                tangents[position] = _tangent(argument, leaf, _unit(x.shape, k, _float_dtype(x)))
                _, column = _jvp(fn, call_args, indices, tangents, optimize)
                for pieces, piece in zip(columns, _aligned(out, column)):
                    pieces.append(piece)
            for m, o in enumerate(outputs):
                if o is not None:
                    blocks[m][position][leaf] = _assembled(columns[m], o.shape, -1,
                                                        o.shape + x.shape, _float_dtype(o, x))
    return blocks


def _reverse_rows(pullback, selected, inputs, out, outputs):
    """The Jacobian blocks, ``blocks[output leaf][argument][leaf]``, one pullback per
    output element."""
    blocks = []
    for m, o in enumerate(outputs):
        by_leaf = [[[] for _ in leaves_] for leaves_ in inputs]
        for row in range(0 if o is None else o.size):
            gradients = _pulled_back(pullback, _tangent(out, m, _unit(o.shape, row,
                                                                      _float_dtype(o))))
            for pieces, g, argument in zip(by_leaf, gradients, selected):
                for leaf_pieces, leaf_g in zip(pieces, _aligned(argument, g)):
                    leaf_pieces.append(leaf_g)
        blocks.append([[None if x is None or o is None else
                        _assembled(p, x.shape, 0, o.shape + x.shape, _float_dtype(o, x))
                        for p, x in zip(pieces, leaves_)]
                       for pieces, leaves_ in zip(by_leaf, inputs)])
    return blocks


def _pulled_back(pullback, cotangent):
    """The gradients a row of the Jacobian is made of: ``pullback(cotangent)``, or, for a
    complex output of real arguments, ``pullback(e) - 1j * pullback(1j * e)``. A real
    argument's cotangent is the real part of the row (docs/complex.md), so the imaginary
    part takes a second pullback."""
    gradients = pullback(cotangent)
    if not is_complex(cotangent):
        return gradients
    turned = pullback(tree_map(lambda leaf: 1j * leaf, cotangent))
    return tuple(None if g is None else tree_map(lambda a, b: a - 1j * b, g, t)
                 for g, t in zip(gradients, turned))


def _output_leaves(out):
    """The output's arrays, None for its ints and strings (an array output is its one leaf)."""
    return _float_leaves(out) if is_tree(out) else [as_array(out)]


# -- pytrees: a selected argument may be a container of arrays (its leaves) -----------

def _float_leaves(argument):
    """The leaves of ``argument`` (itself for an array or a number) as arrays, None for the
    leaves that are not floats (ints and strings of a dict of parameters are constants)."""
    return [as_array(leaf) if is_float(leaf) else None for leaf in _leaves_of(argument)]


def _leaves_of(value):
    return tree_leaves(value) if is_tree(value) else [value]


def _aligned(argument, derivative):
    """The leaves of ``derivative`` (of ``argument``'s structure) in the order of
    ``argument``'s, zeros where it has none (an object's gradient lists only the
    attributes the function read)."""
    if not is_tree(argument):
        return [derivative]

    def piece(leaf, part):
        if not is_float(leaf):
            return None                   # a string's or an int's derivative holds no leaf
        return _zero_of(leaf) if part is None else part
    return tree_leaves(tree_map(piece, argument, derivative, as_dicts=True))


def _rebuilt(argument, blocks):
    """``argument``'s structure holding ``blocks``, one per leaf in order (for an array, its
    one block): a derivative nested like the argument, as JAX's ``jacrev`` and ``hessian``
    (an object's as a dict of its attributes, as its gradient is)."""
    if not is_tree(argument):
        return blocks[0]
    found = iter(blocks)
    return tree_map(lambda _: next(found), argument, as_dicts=True)


def _tangent(argument, position, unit):
    """A tangent of ``argument``: ``unit`` at leaf ``position``, zeros at its other float
    leaves, None at the others."""
    if not is_tree(argument):
        return unit
    counter = itertools.count()

    def leaf_tangent(leaf):
        index = next(counter)
        return unit if index == position else _zero_of(leaf)
    return tree_map(leaf_tangent, argument, as_dicts=True)


def _zero_of(leaf):
    """A zero derivative for the leaf ``leaf``: zeros of its shape for a float, else None."""
    return np.zeros_like(as_array(leaf), dtype=_float_dtype(leaf)) if is_float(leaf) else None


def _broadcast(piece, shape):
    """``piece`` (a derivative, possibly a broadcastable zero) with exactly ``shape``."""
    return piece if np.shape(piece) == shape else np.broadcast_to(as_array(piece), shape)


def _assembled(pieces, piece_shape, axis, shape, dtype):
    """The ``pieces`` (each of ``piece_shape`` once broadcast) stacked along ``axis`` and
    reshaped to ``shape``, as ``dtype``: in the array library of the pieces (a Jacobian of
    Dask arrays is a Dask array)."""
    if not pieces:
        return np.zeros(shape, dtype=dtype)
    stacked = np.stack([_broadcast(as_array(p, dtype), piece_shape) for p in pieces], axis=axis)
    return np.reshape(stacked, shape)


def _array_shape(out, what):
    if isinstance(out, (tuple, list, dict)):
        raise UsageError(f"{what} needs a function returning one array or number, not a "
                         f"{type(out).__name__}", hint="differentiate each output separately")
    return np.shape(out)


def _unit(shape, k, dtype=np.float64):
    e = np.zeros(shape, dtype=dtype)
    e.reshape(-1)[k] = 1
    return e


def _row_unit(shape, k, dtype):
    """Ones at element ``k`` of every batch row."""
    e = np.zeros(shape, dtype=dtype)
    e.reshape(shape[0], -1)[:, k] = 1
    return e


def _float_dtype(*values):
    kinds = [v.dtype if is_foreign(v) else np.asarray(v).dtype for v in values]
    return np.result_type(*[k if k.kind in "fc" else np.float64 for k in kinds])
