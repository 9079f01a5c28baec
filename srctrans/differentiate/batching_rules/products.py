"""Batching rules of products: ``@``, ``np.dot``, ``np.einsum``, ``np.outer``, ``np.linalg.solve``.

Written out for the per-example ranks where they are known (a batched product, an
``einsum`` with a batch index), through ``rt.batch`` helpers where they are not.
"""


import gast

from srctrans.differentiate.batching_rules.calls import aligned, flag_constant, lift, same_func


def matmul(call, a, b):
    """``a @ b`` per member, written for the ranks when they are known."""
    fa, fb = call.flag(a), call.flag(b)
    ra, rb = call.rank_of(a), call.rank_of(b)
    t = call.template
    if ra is not None and rb is not None:
        if fa and not fb and (rb <= 2 or ra >= rb):
            return t("A @ B", A=a, B=b)        # the batch axis meets no axis of b
        if fb and not fa and rb >= 2 and rb >= ra:
            return t("A @ B", A=a, B=b)
        if fb and not fa and rb == 1 and ra <= 2:
            # (a @ b.T).T rather than b @ a.T: the same values, and a's gradient through it
            # is a product of its own, where through a.T it would be a transposed view
            return t("B @ A", A=a, B=b) if ra == 1 else t("(A @ B.T).T", A=a, B=b)
        if fa and fb and ra == 1 and rb == 1:    # (rules faster to differentiate than einsum's)
            return t("np.sum(A * B, axis=-1)", A=a, B=b)
        return _matmul_of_stacks(call, a, b, ra, rb)
    return t("rt.batch.matmul(A, B, FA, FB)", A=a, B=b, FA=flag_constant(call, a),
             FB=flag_constant(call, b))

def _matmul_of_stacks(call, a, b, ra, rb):
    """``a @ b`` for any known ranks: a vector made a matrix (a row on the left, a column on
    the right), each batched operand given axes after its batch axis up to the other's
    rank (so that its batch axis meets no axis of the other), and the vector's axis
    taken out of the product again."""
    t = call.template
    top = max(ra, rb, 2)
    left = a if ra > 1 else t("A[..., None, :]", A=a)
    right = b if rb > 1 else t("B[..., None]", B=b)
    if call.flag(a):
        left = lift(left, top - max(ra, 2))
    if call.flag(b):
        right = lift(right, top - max(rb, 2))
    product = t("L @ R", L=left, R=right)
    if ra == 1 and rb == 1:
        return t("P[..., 0, 0]", P=product)
    if ra == 1:
        return t("P[..., 0, :]", P=product)
    return t("P[..., 0]", P=product) if rb == 1 else product

def dot(call):
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    ra, rb = call.rank_of(a), call.rank_of(b)
    if ra is not None and rb is not None and ra <= 2 and rb <= 2:
        if ra == 0 or rb == 0:
            x, y = aligned(call, [a, b])
            return call.template("X * Y", X=x, Y=y)
        return matmul(call, a, b)
    return call.template("rt.batch.dot(A, B, FA, FB)", A=a, B=b, FA=flag_constant(call, a),
                         FB=flag_constant(call, b))

def einsum(call):
    """``np.einsum('ij,j->i', a, b)``: a letter for the batch axis, on batched operands and the
    output (literal subscripts without ``...``)."""
    spec = call.args[0] if call.args else None
    if not (isinstance(spec, gast.Constant) and isinstance(spec.value, str)) or "..." in spec.value:
        return None
    text = spec.value.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    if not arrow:
        letters = sorted(c for c in inputs if c.isalpha() and inputs.count(c) == 1)
        output = "".join(letters)
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in text)
    operands = call.args[1:]
    parts = inputs.split(",")
    if len(parts) != len(operands):
        return None
    parts = [free + p if call.flag(o) else p for p, o in zip(parts, operands)]
    spec = gast.Constant(",".join(parts) + "->" + free + output, None)
    return call.call(same_func(call), [spec] + operands)

def outer(call):
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    t = call.template
    left = t("A.reshape(A.shape[0], -1)[:, :, None]", A=a) if call.flag(a) \
        else t("np.ravel(A)[:, None]", A=a)
    right = t("B.reshape(B.shape[0], -1)[:, None, :]", B=b) if call.flag(b) else t("np.ravel(B)", B=b)
    return t("L * R", L=left, R=right)


# -- the runtime's helpers that generated derivatives call ----------------------------

def solve(call):
    """``np.linalg.solve(a, b)`` of each member, for a matrix ``a``: a vector ``b`` made a
    column (NumPy takes a batched one for a matrix), the rest broadcast over the batch."""
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    ra, rb = call.rank_of(a), call.rank_of(b)
    if ra != 2 or rb not in (1, 2):
        return None
    if rb == 2:
        return call.call(same_func(call), [a, b])
    return call.template("F(A, B[..., None])[..., 0]", F=same_func(call), A=a, B=b)
