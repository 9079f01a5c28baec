"""What an ``np.einsum`` of constant subscripts does to operands of known shapes.

Requires: the subscripts string of a call and its operands' shapes (tuples of ints).
Guarantees: :func:`einsum_labels` gives each operand's labels and the output's, with
``...`` spelled out as fresh letters and an implicit output made explicit exactly as
the runtime's ``rt.einsum_grads`` reads them (``runtime.linalg.explicit_subscripts``),
and one length per label, only when every axis a label names has that length: no axis
of length 1 broadcast against a longer one, and no shape that does not fit the
subscripts. :func:`cotangent_subscripts` is the einsum that gives one operand's
cotangent, when that is a single einsum of the others and the output's cotangent.
"""

from srctrans.runtime.linalg import explicit_subscripts


class EinsumLabels:
    """``terms``: each operand's labels; ``output``: the output's; ``sizes``: label -> length."""

    def __init__(self, terms, output, sizes):
        self.terms, self.output, self.sizes = terms, output, sizes

    @property
    def shape(self):
        """The output's shape."""
        return tuple(self.sizes[label] for label in self.output)


def einsum_labels(subscripts, shapes):
    """The :class:`EinsumLabels` of ``np.einsum(subscripts, *operands)`` for operands of
    ``shapes``, or None: subscripts that are not a string or do not fit, a shape that is
    not all ints, a label with two lengths (a length-1 axis broadcast), an output label
    that no operand has.

    >>> e = einsum_labels("ij,j->i", [(4, 3), (3,)])
    >>> e.terms, e.output, e.sizes, e.shape
    (['ij', 'j'], 'i', {'i': 4, 'j': 3}, (4,))
    >>> einsum_labels("i,i", [(3,), (1,)]) is None        # broadcast: the runtime's case
    True
    """
    if not isinstance(subscripts, str) or any(
            shape is None or not all(type(n) is int for n in shape) for shape in shapes):
        return None
    try:
        terms, output = explicit_subscripts(subscripts, [len(shape) for shape in shapes])
    except (ValueError, NotImplementedError):
        return None
    sizes = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            return None
        for label, length in zip(term, shape):
            if sizes.setdefault(label, length) != length:
                return None
    if any(label not in sizes for label in output) or len(set(output)) != len(output):
        return None
    return EinsumLabels(list(terms), output, sizes)


def cotangent_subscripts(labels, k):
    """The subscripts of ``np.einsum(spec, g, *others)``, ``others`` the operands but the
    ``k``-th in order, that give operand ``k``'s cotangent for an output cotangent ``g``;
    or None where it is not one einsum: a label repeated in the operand (a diagonal, which
    the cotangent is zero off) or found in no other operand nor the output (summed in the
    forward pass: the cotangent is broadcast along it).

    >>> cotangent_subscripts(einsum_labels("ij,j->i", [(4, 3), (3,)]), 1)
    'i,ij->j'
    """
    term = labels.terms[k]
    elsewhere = set(labels.output).union(*(t for j, t in enumerate(labels.terms) if j != k))
    if len(set(term)) != len(term) or not set(term) <= elsewhere:
        return None
    others = [t for j, t in enumerate(labels.terms) if j != k]
    return ",".join([labels.output] + others) + "->" + term
