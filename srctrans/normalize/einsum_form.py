"""``np.einsum``'s interleaved form, read as its subscripts form.

Guarantees: :func:`einsum_with_subscripts` gives the same operands with literal axes as
one subscripts string, the form the derivative rules read.
"""

import gast


def einsum_with_subscripts(args):
    """``np.einsum``'s arguments in the subscripts form when they are in the interleaved one
    with literal lists of axes (``a, [0, 1], b, [1, 2]`` -> ``'ab,bc', a, b``); else ``args``."""
    if isinstance(args[0], gast.Constant) or len(args) < 2:
        return args
    operands, sublists = args[0::2], [_axes_literal(a) for a in args[1::2]]
    output = None
    if len(args) % 2:                         # the last argument is the output's axes
        output, operands = _axes_literal(args[-1]), operands[:-1]
        if output is None:
            return args
    if None in sublists:
        return args                           # not literal: the derivative pass refuses it
    text = ",".join(map(_letters, sublists)) + ("" if output is None else "->" + _letters(output))
    return [gast.Constant(text, None)] + operands


def _axes_literal(node):
    """The axes of a literal list or tuple of ints and ``...``, or None."""
    if not isinstance(node, (gast.List, gast.Tuple)):
        return None
    axes = [e.value for e in node.elts if isinstance(e, gast.Constant)]
    if len(axes) != len(node.elts) or not all(
            a is Ellipsis or type(a) is int and 0 <= a < 52 for a in axes):
        return None
    return axes


def _letters(axes):
    return "".join("..." if a is Ellipsis else "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[a]
                   for a in axes)
