"""Jacobians and Hessians in one batched call: the pullback (or pushforward) of every basis
vector at once, by the batched form of the generated derivative (``st.vmap``'s transform).

Requires: the generated backward pass, JVP or JVP of a gradient of one function, and
arguments that are NumPy arrays or numbers (containers, objects and other libraries' arrays
take the per-vector path of ``composed``).
Guarantees: each function returns the blocks ``composed`` would assemble from one call per
basis vector, equal to rounding, or None when the batched form does not apply (a container
or complex value, or no generated function to batch): the caller then loops as before.
The basis is pushed through in chunks of at most ``CHUNK_ELEMENTS`` elements in all.
"""

import numpy as np

from srctrans import cache
from srctrans.normalize import auxiliary
from srctrans.batch_api import batched_call, direct_function
from srctrans.runtime.seeding import is_complex

CHUNK_ELEMENTS = 1 << 24      # elements of one chunk's basis vectors (128 MiB of float64)


def plain_arrays(*values):
    return all(type(v) is np.ndarray and v.dtype.kind == "f" for v in values)


def plain_call(call_args):
    """Arguments that are all NumPy arrays or Python numbers: no object a call goes through,
    no array of another library (their derivatives take the per-vector path)."""
    return all(type(a) in (np.ndarray, float, int, bool) for a in call_args)


def _chunks(count, row_size):
    step = max(1, min(count, CHUNK_ELEMENTS // max(row_size, 1)))
    return [(start, min(start + step, count)) for start in range(0, count, step)]


def _basis(start, stop, shape, dtype):
    """Unit vectors ``start..stop-1`` of the flattened ``shape``, stacked: ``(stop - start,) +
    shape``."""
    size = int(np.prod(shape))
    rows = np.zeros((stop - start, size), dtype=dtype)
    rows[np.arange(stop - start), np.arange(start, stop)] = 1
    return rows.reshape((stop - start,) + tuple(shape))


def forward_pass(fn, call_args, names, optimize):
    """``(instance, out, residuals)``: the forward pass of the reverse derivative whose
    backward pass :func:`reverse_rows` batches, run once, or None where it does not apply
    (arguments or an output that are not plain arrays, a tape, has_aux)."""
    if not plain_call(call_args) or auxiliary.has_aux(fn):   # (has_aux seeds (out, aux))
        return None
    found = cache.instance(fn, names, optimize)
    if optimize:
        found = found.for_call(fn, call_args, {})
    if found.build.tape_index is not None or found.bwd is None or found.build.sites:
        return None
    out, residuals = found.fwd(*call_args)
    if not plain_arrays(out) or out.size == 0:
        return None
    return found, out, residuals


def reverse_rows(found, residuals, out, selected):
    """The reverse Jacobian's blocks as ``composed`` nests them, ``[[[block of argument i]]]``
    (one output, one leaf per argument), from one batched backward pass over the output's
    basis (after :func:`forward_pass`), or None."""
    if not plain_arrays(*selected):
        return None
    parts = [[] for _ in selected]
    for start, stop in _chunks(out.size, out.size):
        seeds = _basis(start, stop, out.shape, out.dtype)
        gradients = batched_call(found.bwd, (residuals, seeds), (False, True))
        for part, g, x in zip(parts, gradients, selected):
            if g is None:
                g = np.zeros((stop - start,) + x.shape, dtype=np.result_type(out, x))
            part.append(np.broadcast_to(g, (stop - start,) + x.shape))
    return [[[(p[0] if len(p) == 1 else np.concatenate(p)).reshape(out.shape + x.shape).astype(
        np.result_type(out, x), copy=False)] for p, x in zip(parts, selected)]]


def hessian_columns(jvp, call_args, keyword, y, others):
    """The columns ``H[:, leaf y]`` of each selected argument from one batched JVP of the
    gradient over ``y``'s basis: a list with one block of shape ``x.shape + y.shape`` per
    selected argument ``x`` in ``others``, or None."""
    if not plain_arrays(y, *others) or is_complex(y) or not plain_call(call_args):
        return None
    parts = [[] for _ in others]
    for start, stop in _chunks(y.size, y.size):
        tangents = _basis(start, stop, y.shape, y.dtype)
        columns = batched_call(jvp, tuple(call_args), tuple(False for _ in call_args),
                               {keyword: tangents})
        if not isinstance(columns, tuple):
            columns = (columns,)
        for part, column, x in zip(parts, columns, others):
            part.append(batched_column(column, stop - start, x.shape))
    blocks = [hessian_block(p, x.shape, y.shape, np.result_type(x, y), None)
              for p, x in zip(parts, others)]
    for i, block in enumerate(blocks):      # (a JVP may return one array for two arguments)
        if any(np.may_share_memory(block, earlier) for earlier in blocks[:i]):
            blocks[i] = block.copy()
    return blocks


def batched_column(column, count, shape):
    """``column`` with its batch axis of ``count`` (broadcast, read-only, when the JVP gave one
    value for all: a block that does not depend on the tangent)."""
    batched = (count,) + tuple(shape)
    return column if column.shape == batched else np.broadcast_to(column, batched)


def hessian_block(columns, x_shape, y_shape, dtype, basis):
    """The block ``x_shape + y_shape`` of the Hessian, of ``dtype``, from the batched JVP's
    outputs for an argument ``x`` over the basis of an argument ``y``, chunk by chunk
    (``columns``: a list of arrays, each batched along axis 0). A copy where it would share
    memory with ``basis`` (a JVP that returns its tangent) or be a read-only broadcast; else
    a view of the one chunk's output."""
    column = columns[0] if len(columns) == 1 else np.concatenate(columns)
    block = np.moveaxis(column, 0, -1).reshape(x_shape + y_shape)
    if block.dtype != dtype:
        return block.astype(dtype)
    if not block.flags.writeable or (basis is not None and np.may_share_memory(block, basis)):
        return block.copy()
    return block


def hessian_kernel(jvp, call_args, keyword, y):
    """``(kernel, basis)`` for a guard of later Hessians of calls shaped like this one, after
    :func:`hessian_columns` ran for it in one chunk: the batched JVP as a plain function of
    the call's arguments and ``keyword=basis``, and ``y``'s whole basis, read-only; None when
    the batched JVP is not that plain function (a fallback, a select that may fall back)."""
    if len(_chunks(y.size, y.size)) != 1:
        return None
    basis = _basis(0, y.size, y.shape, y.dtype)
    kernel = direct_function(jvp, tuple(call_args), tuple(False for _ in call_args),
                             {keyword: basis})
    if kernel is None:
        return None
    basis.flags.writeable = False
    return kernel, basis
