"""A derivative's reciprocal read only by products is divided by instead.

Requires: the body of a specialised fused gradient, the names of its derivatives
(``inner_products.derivative_statements``) and the names read after it.
Guarantees: each derivative is the same up to rounding (``x / v`` against ``x * (1.0 /
v)``: one rounding fewer); the program's own values are untouched. A derivative
``r = 1.0 / v`` assigned once at the top level, not read after the body, and read only
as an operand of at most two products ``r * x`` (or ``x * r``), with ``v`` a name not
assigned again, and no statement writing into an array from ``r``'s assignment to its
last read (``v`` may be such an array, under another name), is not made: each product
is written ``x / v``. The quotient rule gives the cotangent of a numerator as ``g / v``;
with the seed ``g = 1.0`` of a scalar output folded in, every product the chain rule
then takes of it is one array operation more than the division it stands for::

    d_add = 1.0 / var_p                       ->
    d_sub = d_add * (q['mu'] - p['mu'])            d_sub = (q['mu'] - p['mu']) / var_p
    d_mul = d_add * var_q                          d_mul = var_q / var_p

Three reads or more keep the reciprocal: a division costs more than a product on
arrays large enough to be bound by arithmetic.
"""

import gast

from srctrans.nodes import load, writes_in_place
from srctrans.treewalk import walk

_MOST_READS = 2


def divide_by_reciprocals(body, derivatives, live_out):
    """``body`` (changed in place, and returned) with each reciprocal that only products
    read divided by instead (see the module). One walk records where each name is
    stored and read; each reciprocal then looks at its own reads."""
    stores, reads, writes = {}, {}, [0]    # reads: name -> (statement, node, parent, field)
    for index, top in enumerate(body):
        for node in walk(top):
            for field, child in gast.iter_fields(node):
                if isinstance(child, gast.Name):
                    _note(child, index, node, field, stores, reads)
                elif isinstance(child, list):
                    for item in child:
                        if isinstance(item, gast.Name):
                            _note(item, index, node, None, stores, reads)
        writes.append(writes[-1] + writes_in_place(top))
    dropped = set()
    for index, stmt in enumerate(body):
        found = _reciprocal(stmt)
        if found is None:
            continue
        name, divisor = found
        sites = reads.get(name, [])
        if (name not in derivatives or name in live_out or len(stores.get(name, ())) != 1
                or not 0 < len(sites) <= _MOST_READS
                or any(k > index for k in stores.get(divisor, ()))
                or writes[sites[-1][0] + 1] > writes[index + 1]
                or not all(_product_operand(parent, field) for _, _, parent, field in sites)):
            continue
        for _, _, parent, field in sites:
            other = parent.right if field == "left" else parent.left
            parent.op, parent.left, parent.right = gast.Div(), other, load(divisor)
        dropped.add(index)
    body[:] = [stmt for index, stmt in enumerate(body) if index not in dropped]
    return body


def _note(name, index, parent, field, stores, reads):
    if isinstance(name.ctx, gast.Load):
        reads.setdefault(name.id, []).append((index, name, parent, field))
    else:
        stores.setdefault(name.id, []).append(index)


def _reciprocal(stmt):
    """``(r, v)`` for ``r = 1.0 / v`` (``1`` too; two names), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div)
            and isinstance(value.left, gast.Constant) and type(value.left.value) in (int, float)
            and value.left.value == 1 and isinstance(value.right, gast.Name)):
        return stmt.targets[0].id, value.right.id
    return None


def _product_operand(parent, field):
    """Whether a read is one operand of a product (not both: ``r * r``)."""
    return (isinstance(parent, gast.BinOp) and isinstance(parent.op, gast.Mult)
            and field in ("left", "right")
            and not (isinstance(parent.left, gast.Name) and isinstance(parent.right, gast.Name)
                     and parent.left.id == parent.right.id))
