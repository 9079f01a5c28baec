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

from srctrans import cache, forward_api
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
    def forward(found):
        if found.build.tape_index is not None or found.bwd is None or found.build.sites:
            return None
        out, residuals = found.fwd(*call_args)
        if not plain_arrays(out) or out.size == 0:
            return None
        return found, out, residuals
    found = cache.instance(fn, names, optimize)
    return found.run_for_call(fn, call_args, {}, forward) if optimize else forward(found)


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


def jvp_columns(jvp, call_args, keyword, y, outputs):
    """The columns over ``y``'s basis of each of the JVP's outputs, from one batched JVP (in
    chunks): a list with one block of shape ``x.shape + y.shape`` per output ``x`` in
    ``outputs`` (a Hessian's: the selected arguments, whose shapes the gradient has; a
    forward Jacobian's: the function's output), or None. Each block is an array of its own."""
    if not plain_arrays(y, *outputs) or is_complex(y) or not plain_call(call_args):
        return None
    parts = [[] for _ in outputs]
    for start, stop in _chunks(y.size, max(y.size, sum(x.size for x in outputs))):
        tangents = _basis(start, stop, y.shape, y.dtype)
        columns = batched_call(jvp, tuple(call_args), tuple(False for _ in call_args),
                               {keyword: tangents})
        if not isinstance(columns, tuple):
            columns = (columns,)
        for part, column, x in zip(parts, columns, outputs):
            if not isinstance(column, (np.ndarray, float, np.floating)):
                return None                   # (a has-aux or container output)
            part.append(batched_column(np.asarray(column), stop - start, x.shape))
    blocks = [block_of_columns(p, x.shape, y.shape, np.result_type(x, y), None)
              for p, x in zip(parts, outputs)]
    for i, block in enumerate(blocks):      # (a JVP may return one array for two arguments)
        if any(np.may_share_memory(block, earlier) for earlier in blocks[:i]):
            blocks[i] = block.copy()
    return blocks


def batched_column(column, count, shape):
    """``column`` with its batch axis of ``count`` (broadcast, read-only, when the JVP gave one
    value for all: a block that does not depend on the tangent)."""
    batched = (count,) + tuple(shape)
    return column if column.shape == batched else np.broadcast_to(column, batched)


def block_of_columns(columns, x_shape, y_shape, dtype, basis):
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
    :func:`jvp_columns` ran for it in one chunk: the batched JVP as a plain function of
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


def specialised_jvp(fn, call_args, tangents, optimize):
    """``(instance, jvp, keywords)``: the tangent-only JVP of ``fn`` (a user's function or a
    generated gradient) along ``tangents`` (None, or an array of a call's argument's shape,
    at each position), its generic instance, the JVP specialised on this call's shapes where
    it can be, and the keyword of each given tangent by position; None when it has no JVP to
    batch (``*args``, calls through values, whose kinds are learnt run by run)."""
    plan = forward_api.current_plan(fn, None, tuple(call_args), tuple(tangents), optimize, True)
    found = plan.instance
    if found.jvp is None or plan.starred is not None:
        return None
    keywords = dict(plan.tangents)
    if found.build.specialisable:
        found = found.for_call(fn, call_args,
                               {keyword: tangents[i] for i, keyword in keywords.items()}, now=True)
    if found.build.sites:
        return None
    return plan.instance, found.jvp, keywords


def jvp_along(fn, call_args, position, optimize):
    """``(instance, jvp, keyword)``: :func:`specialised_jvp` along the argument at
    ``position`` alone, or None."""
    tangents = [None] * len(call_args)
    tangents[position] = np.zeros_like(call_args[position])
    found = specialised_jvp(fn, call_args, tangents, optimize)
    return None if found is None else (found[0], found[1], found[2][position])


def forward_columns(fn, call_args, indices, selected, out, optimize):
    """The forward Jacobian's blocks as ``composed`` nests them, ``[[[block of argument i]]]``,
    each argument's from one batched JVP of ``fn`` over its basis (:func:`jvp_columns`), or
    None (then one JVP per column): for plain array arguments and a float array (or
    number) output ``out``."""
    if type(out) in (float, np.float64, np.float32):
        out = np.asarray(out)
    if not plain_call(call_args) or not plain_arrays(*selected, out):
        return None
    blocks = []
    for position, x in zip(indices, selected):
        found = jvp_along(fn, call_args, position, optimize)
        columns = None if found is None else jvp_columns(found[1], call_args, found[2], x, [out])
        if columns is None:
            return None
        blocks.append(columns)
    return [blocks]


def batch_rows(found, residuals, out, x):
    """``st.batch_jacobian``'s block ``(batch,) + out.shape[1:] + x.shape[1:]`` from one
    batched backward pass over the row units of the output (one seed per element of an
    output row, ones at it in every row; in chunks), after :func:`forward_pass`; None where
    that does not apply."""
    if not plain_arrays(out, x):
        return None
    batch, row = out.shape[0], out.shape[1:]
    size = int(np.prod(row, dtype=np.int64))
    parts = []
    for start, stop in _chunks(size, max(out.size, x.size)):
        g = batched_call(found.bwd, (residuals, _row_units(out.shape, out.dtype, start, stop)),
                         (False, True))[0]
        parts.append(np.zeros((stop - start,) + x.shape) if g is None else
                     batched_column(g, stop - start, x.shape))
    rows = parts[0] if len(parts) == 1 else np.concatenate(parts)   # (row element, batch, ...)
    return np.moveaxis(rows.reshape((size, batch, -1)), 0, 1).reshape(
        (batch,) + row + x.shape[1:]).astype(np.result_type(out, x), copy=False)


def batch_columns(jvp, call_args, keyword, x, out_shape):
    """``st.batch_jacobian``'s forward block from one batched JVP over the row units of the
    argument ``x`` (in chunks), or None."""
    if not plain_arrays(x) or not plain_call(call_args):
        return None
    size = int(np.prod(x.shape[1:], dtype=np.int64))
    parts = []
    for start, stop in _chunks(size, max(x.size, int(np.prod(out_shape, dtype=np.int64)))):
        column = batched_call(jvp, tuple(call_args), (False,) * len(call_args),
                              {keyword: _row_units(x.shape, x.dtype, start, stop)})
        if not isinstance(column, np.ndarray):
            return None                            # (a container output)
        parts.append(batched_column(column, stop - start, out_shape))
    columns = parts[0] if len(parts) == 1 else np.concatenate(parts)   # (x row element, ...)
    batch, row = out_shape[0], tuple(out_shape[1:])
    return np.moveaxis(columns.reshape((size, batch) + row), 0, -1).reshape(
        (batch,) + row + x.shape[1:]).astype(np.result_type(columns, x), copy=False)


def _row_units(shape, dtype, start, stop):
    """Ones at element ``k`` of every batch row, for ``k`` from ``start`` to ``stop - 1``:
    ``(stop - start,) + shape``."""
    size = int(np.prod(shape[1:], dtype=np.int64))
    units = np.zeros((stop - start, shape[0], size), dtype=dtype)
    units[np.arange(stop - start), :, np.arange(start, stop)] = 1
    return units.reshape((stop - start,) + tuple(shape))
