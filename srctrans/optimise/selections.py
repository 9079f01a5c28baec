"""Two complementary selections of one cotangent, carried through products and summed again,
are one selection.

Requires: the straight-line statements of a specialised backward pass (its top level),
after simplification and specialisation (an unbroadcast of a cotangent to its own shape is
gone), and the names read after them.
Guarantees: the adjoint of ``np.where(c, a, b)`` sends ``np.where(c, g, 0)`` to ``a`` and
``np.where(c, 0, g)`` to ``b``. Where ``a`` and ``b`` both depend on one value (the two pieces
of a Huber loss, a leaky ReLU's ``x`` and ``0.01 * x``), the backward pass makes both
arrays, multiplies each by its piece's derivative and adds them::

    d_a = np.where(c, g, 0)
    d_b = np.where(c, 0, g)
    d_s = d_b * delta
    dr = d_s * np.sign(r)
    dr = dr + d_a * 0.5 * (2 * r)

When each name of both chains is read once, by the next statement of its chain, each step
multiplies by (or divides by, or negates) values no statement changes before the sum, and the
sum reads the two chains as two of its terms, the sum is one selection of ``g``'s two
products::

    dr = np.where(c, g * 0.5 * (2 * r), g * delta * np.sign(r))

Where both products are finite, the values are the ones the two selections gave (an entry
of one term was ``0`` times finite factors). Where a factor of the piece ``np.where`` did
not select is infinite or NaN, the two selections gave NaN; the one selection gives the
derivative of the piece selected, which is the derivative of what ``np.where`` computes
there. The shape and dtype are unchanged: each is NumPy's broadcast (and promotion) of
``c``, ``g`` and the factors of both products either way.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone, load, number_literal, single_target
from srctrans.optimise.dce import reads_of, stores_of
from srctrans.treewalk import replace_names, walk_names


def merge_complementary_selections(statements, live_out, numpy_alias):
    """``statements`` (a flat list) with each pair of complementary selections whose chains
    meet in one sum merged into one selection there (see the module). ``live_out``: the
    names read after ``statements``."""
    statements = list(statements)
    while True:
        merge = next((m for m in _candidate_merges(statements, live_out, numpy_alias)
                      if m is not None), None)
        if merge is None:
            return statements
        at, value, gone = merge
        statements[at].value = value
        statements = [s for k, s in enumerate(statements) if k not in gone]


def _candidate_merges(statements, live_out, numpy_alias):
    """``(index of the sum, its new value, indices of the statements the merge drops)`` for
    each pair of complementary selections (None for a pair whose chains do not qualify)."""
    selections = {}
    for index, stmt in enumerate(statements):
        picked = _selection(stmt, numpy_alias)
        if picked is None:
            continue
        condition, cotangent, first = picked
        partner = selections.get((condition, cotangent, not first))
        if partner is not None:
            yield _merge(statements, live_out, partner, index) if first is False else \
                _merge(statements, live_out, index, partner)
        selections[condition, cotangent, first] = index


def _selection(stmt, numpy_alias):
    """``(c, g, True)`` for ``n = np.where(c, g, 0)``, ``(c, g, False)`` for
    ``n = np.where(c, 0, g)`` (``c`` and ``g`` names), else None."""
    if single_target(stmt) is None or not isinstance(stmt.value, gast.Call):
        return None
    call = stmt.value
    if not (_is_where(call, numpy_alias) and len(call.args) == 3 and not call.keywords):
        return None
    condition, a, b = call.args
    if not isinstance(condition, gast.Name):
        return None
    if isinstance(a, gast.Name) and _is_zero(b):
        return condition.id, a.id, True
    if isinstance(b, gast.Name) and _is_zero(a):
        return condition.id, b.id, False
    return None


def _is_where(call, numpy_alias):
    if anno.get(call, Anno.CALLEE) is np.where:
        return True
    func = call.func
    return (isinstance(func, gast.Attribute) and func.attr == "where"
            and isinstance(func.value, gast.Name) and func.value.id == numpy_alias)


def _is_zero(node):
    return number_literal(node) and node.value == 0


def _merge(statements, live_out, selected, discarded):
    """The merge of the selections at ``selected`` (``np.where(c, g, 0)``) and ``discarded``
    (``np.where(c, 0, g)``), or None when their chains do not meet in one sum."""
    ends = [_chain(statements, live_out, start) for start in (selected, discarded)]
    if None in ends or ends[0][0] != ends[1][0] or ends[0][1] is ends[1][1]:
        return None
    (at, term_a, products_a, steps_a), (_, term_b, products_b, steps_b) = ends
    terms = _terms(statements[at].value)
    places = [k for k, (term, _) in enumerate(terms) if term is term_a or term is term_b]
    if places[1] - places[0] != 1:
        return None                  # a term between: the sum would add in another order
    condition, _, cotangent = statements[discarded].value.args
    factors = {condition.id, cotangent.id}
    for index, name in steps_a + steps_b:
        factors |= reads_of(statements[index].value) - {name}
    if any(stores_of(statements[k]) & factors for k in range(min(selected, discarded), at)):
        return None                  # c, g or a factor changes before the sum
    merged = gast.Call(clone(statements[selected].value.func),
                       [load(condition.id), products_a, products_b], [])
    anno.set_(merged, Anno.CALLEE, np.where)
    value = _replace_terms(terms, places[0], merged)
    return at, value, {selected, discarded} | {k for k, _ in steps_a + steps_b}


def _chain(statements, live_out, start):
    """``(index of the sum, the term of it that the chain reaches, that term as a product of
    the selected cotangent, [(index, name read)] of the chain's steps)`` for the selection
    at ``start``, or None when a name of the chain is read other than once, by the next
    step, or a step is not a product of it."""
    name = single_target(statements[start])
    _, a, b = statements[start].value.args
    product = clone(b if _is_zero(a) else a)
    steps = []
    index = start
    while True:
        reader = _sole_reader(statements, live_out, index, name)
        if reader is None:
            return None
        value = statements[reader].value
        if _is_product_of(value, name):
            product = _substituted(value, name, product)
            steps.append((reader, name))
            index, name = reader, single_target(statements[reader])
            continue
        term = next((t for t, _ in _terms(value) if _is_product_of(t, name)), None)
        if term is None:
            return None
        return reader, term, _signed(_substituted(term, name, product), value, term), steps


def _sole_reader(statements, live_out, index, name):
    """The index of the one statement that reads the value ``statements[index]`` assigns to
    ``name`` (an assignment of one name, at the same level), or None."""
    readers = []
    for k in range(index + 1, len(statements)):
        stmt = statements[k]
        readers += [k] * sum(1 for n in walk_names(stmt)
                             if n.id == name and isinstance(n.ctx, gast.Load))
        if name in stores_of(stmt):
            break
    else:
        if name in live_out:
            return None
    if len(readers) != 1 or single_target(statements[readers[0]]) is None:
        return None
    return readers[0]


def _is_product_of(node, name):
    """Whether ``node`` reads ``name`` once, through products, quotients (as the dividend)
    and negations only."""
    if sum(1 for n in walk_names(node) if n.id == name) != 1:
        return False
    while not (isinstance(node, gast.Name) and node.id == name):
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            node = node.operand
        elif isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
            node = node.left if name in reads_of(node.left) else node.right
        elif isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div) \
                and name in reads_of(node.left):
            node = node.left
        else:
            return False
    return True


def _substituted(node, name, product):
    """``node`` (cloned) with its read of ``name`` replaced by ``product``."""
    return replace_names(clone(node), lambda n: clone(product) if n.id == name else n)


def _terms(node):
    """``[(term, negated)]`` of a sum or difference ``node``, left to right: its terms and
    whether each is subtracted (iterative: a sum may be long)."""
    found, todo = [], [(node, False)]
    while todo:
        node, negated = todo.pop()
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)):
            todo.append((node.right, negated != isinstance(node.op, gast.Sub)))
            todo.append((node.left, negated))
        else:
            found.append((node, negated))
    return found


def _signed(product, total, term):
    """``product``, negated when ``term`` is subtracted in ``total``."""
    negated = next(n for t, n in _terms(total) if t is term)
    return gast.UnaryOp(gast.USub(), product) if negated else product


def _replace_terms(terms, first, merged):
    """The sum of ``terms`` (``_terms`` of it) with the two at ``first`` and after it replaced
    by ``merged`` (added) where the first of them was: its terms add in the order they did,
    each entry's other term having been a zero (``x + 0`` is ``x`` exactly)."""
    terms = list(terms)
    terms[first:first + 2] = [(merged, False)]
    value = terms[0][0]                          # (a sum's first term is never subtracted)
    for term, negated in terms[1:]:
        value = gast.BinOp(value, gast.Sub() if negated else gast.Add(), term)
    return value
