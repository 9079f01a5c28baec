"""Numeric factors of products are multiplied together, across the statements of a gradient.

Requires: the body of a fused gradient specialised on shapes (before its temporaries are
inlined), the names it must keep (what it returns), and the names that may hold booleans or
integers (``analyse.values.maybe_not_float``).
Guarantees: each value is the product it was, up to the rounding of the literals multiplied
first. A product (``*``, ``/`` and unary ``-``) keeps its other factors in their order and
has its numeric literals and minus signs multiplied into one literal, written once in front.
A name assigned once, at the top of the body, to such a product with a literal, whose every
read is a factor of a product that has a literal of its own (or is assigned to a name that
passes the literal on), is assigned the product without its literal, which joins the
literals of the products that read it. Derivatives of squares and halves (``2 * x``,
``0.5 * s``) then cancel, as a careful person cancels them::

    d_add = 1.0 / (2 * var_p)                   d_add = 1.0 / var_p
    d_sub_2 = d_add * (2 * (q - p))       ->    d_sub_2 = d_add * (q - p)
    d_mul = d_add * var_q                       d_mul = d_add * var_q
    d_item = d_mul * 2                          d_item = d_mul

(three array operations fewer). A product is written anew only when that takes fewer
operations, counting a literal that multiplies a leading number (``(-2 * d) * mu``, ``d`` a
number and ``mu`` an array) as none. One whose literals multiply to 1 and that has no
factor known to be a float keeps ``1.0 *`` (it makes a boolean or integer array a float
one, as the literals did); a returned name keeps its literal. A copy ``t = 1.0 * y`` of a
float, read only by arithmetic, goes, its reads reading ``y``. A name read through a pick
(``d[:, :, None] * x``) is a factor there too: a scaling moves through a pick exactly.
"""

import gast

from srctrans.nodes import number_literal, single_target
from srctrans.optimise.dce import name_counts
from srctrans.optimise.expression_shapes import is_runtime_helper_call
from srctrans.treewalk import walk

_ONE_OVER = "one_over"          # a stripped product that is 1 / denominator
_LARGEST = 64                   # products of more nodes are left as they are (no deep recursion)


def multiply_constant_factors(body, keep, floats, scalars=frozenset()):
    """``body`` with its products' literals multiplied together (see the module), in place.
    ``keep``: the names the gradient returns; ``floats``: names certain to hold floats (the
    measured values that are not ``maybe_not_float``), to which each name the body assigns
    arithmetic of them (or of a float literal) is added; ``scalars``: names known to hold
    numbers (a literal is multiplied into the first factor of a product when it is one)."""
    stores, _ = name_counts(body)
    parents = _parents_of(body)
    reading = {}                 # name -> the products its reads are factors of (None: not one,
    for stmt in body:            # or read in a loop, where a literal joined would cost each step)
        looped = isinstance(stmt, (gast.For, gast.While))
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                tree = None if looped else _product_around(node, parents)
                reading.setdefault(node.id, []).append(tree)
    defining = {id(stmt.value): target for stmt in body
                if (target := single_target(stmt)) is not None and _is_product(stmt.value)
                and stores.get(target) == 1 and target not in keep}
    absorbing = set()            # names whose literal the products reading them can take
    for stmt in reversed(body):  # a reader is decided before the name it reads
        target = single_target(stmt)
        if target is not None and id(stmt.value) in defining \
                and _absorbed(reading.get(target, [None]), defining, absorbing):
            absorbing.add(target)
    floats, written = set(floats), _Writer(scalars)
    deferred = {}                # name -> the literal its product lost
    for stmt in body:
        target = single_target(stmt)
        if target is not None and stores.get(target) == 1 and _float_arithmetic(stmt.value, floats):
            floats.add(target)
        if target in absorbing and target in floats and _size(stmt.value) <= _LARGEST:
            constant, core, _ = _stripped(stmt.value, deferred)
            if core is not None and constant != 1 and _reads_float(core, floats):
                stmt.value = written(1, core)
                deferred[target] = constant
                _rebuild(stmt.value, deferred, floats, written)
                continue
        _rebuild(stmt, deferred, floats, written)
    return _without_float_copies(body, keep, floats)


def _parents_of(body):
    """``{id(node): its parent}`` over the statements ``body``."""
    return {id(child): node for stmt in body for node in walk(stmt)
            for child in gast.iter_child_nodes(node)}


def _without_float_copies(body, keep, floats):
    """``body`` (changed in place) without each ``t = 1.0 * y`` (``y`` a name of ``floats``,
    assigned once and never written into) whose every read is an operand of arithmetic, or
    picked from by one: those read ``y``. The copy's literal made an integer array a float
    one, which a float is already; arithmetic makes a new array of it, so no other name
    comes to share ``y``'s array."""
    parents, reads, written, last_store = _parents_of(body), {}, set(), {}
    for position, stmt in enumerate(body):
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                reads.setdefault(node.id, []).append(node)
            elif isinstance(node, gast.Name):
                last_store[node.id] = position
            elif isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load) \
                    and isinstance(node.value, gast.Name):
                written.add(node.value.id)
    stores, _ = name_counts(body)
    copies = {}
    for position, stmt in enumerate(body):
        target = single_target(stmt)
        value = stmt.value if target is not None else None
        if target is None or target in keep or stores.get(target) != 1 \
                or not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult)
                        and number_literal(value.left) and value.left.value == 1
                        and isinstance(value.right, gast.Name)):
            continue
        source = value.right.id
        if source in floats and last_store.get(source, -1) < position and source not in written \
                and source not in copies and all(
                    _operand_of_arithmetic(read, parents) for read in reads.get(target, [None])):
            copies[target] = source
    if not copies:
        return body
    for target, source in copies.items():
        for read in reads[target]:
            read.id = source
    body[:] = [stmt for stmt in body if single_target(stmt) not in copies]
    return body


def _operand_of_arithmetic(read, parents):
    """Whether the name ``read`` is an operand of arithmetic, or picked from by one
    (``t[:, None] * x``): either way it is read into a new array."""
    return isinstance(_through_pick(read, parents)[1], (gast.BinOp, gast.UnaryOp))


def _through_pick(node, parents):
    """``(node, its parent)``, or the pick ``node[...]`` and its parent where ``node`` is
    picked from (a scaling of ``node`` moves through the pick exactly)."""
    parent = parents.get(id(node))
    if isinstance(parent, gast.Subscript) and parent.value is node:
        return parent, parents.get(id(parent))
    return node, parent


def _float_arithmetic(value, floats):
    """Whether ``value`` is arithmetic (``+ - * /``, minus) of names, entries of names
    (``w[:-1]``) and literals, one of them a float literal, a name of ``floats`` or an entry
    of one (indexing keeps an array's dtype), or a quotient (``/`` makes a float of any
    numbers): NumPy makes it a float. ``rt.zero_guard(g, v)`` is ``v``'s kind."""
    found, todo = False, [value]
    while todo:
        node = todo.pop()
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div):
            found = True                               # (its operands are numbers: arithmetic)
            todo += [node.left, node.right]
        elif isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
            todo += [node.left, node.right]
        elif is_runtime_helper_call(node, "zero_guard") and len(node.args) == 2 \
                and not node.keywords:
            todo.append(node.args[1])
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            todo.append(node.operand)
        elif isinstance(node, gast.Name):
            found = found or node.id in floats
        elif isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
            found = found or node.value.id in floats
        elif isinstance(node, gast.Constant) and type(node.value) in (int, float):
            found = found or type(node.value) is float
        else:
            return False
    return found


def _reads_float(core, floats):
    """Whether a factor of the product ``core`` is certainly a float: a name of ``floats``, or
    arithmetic of them (a comparison or a call of them may be a mask or an integer)."""
    return any(isinstance(node, gast.Name) and node.id in floats or _float_arithmetic(node, floats)
               for node in _product_nodes(core[1] if isinstance(core, tuple) else core)
               if not _is_product(node))


def _product_nodes(tree):
    """Every node of the product ``tree``: its operations (``*``, ``/``, unary ``-``) and its
    factors (the nodes below them that are not such operations); iterative."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
            todo += [node.right, node.left]
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            todo.append(node.operand)


def _size(node):
    return sum(1 for _ in walk(node))




def _is_product(node):
    return (isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div))
            or isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub))


def _product_around(node, parents):
    """The largest product ``node`` is a factor of, or None when it is not a factor; a name
    picked from (``d[:, :, None]``: a scaling moves through a pick exactly) counts as the
    pick."""
    tree = None
    node, parent = _through_pick(node, parents)
    while _is_product(parent):
        tree, parent = parent, parents.get(id(parent))
    return tree


def _absorbed(trees, defining, absorbing):
    """Whether a literal taken out of a name joins a literal where it is read: each read is a
    factor of a product that has a literal of its own or is the value of a name that passes
    the literal on (``absorbing``; ``defining``: id of a product assigned to a name -> the
    name). A literal that would only move to where the name is read stays."""
    if not trees or None in trees:
        return False
    return all(_literals(tree) or defining.get(id(tree)) in absorbing for tree in trees)


def _literals(tree):
    """How many operations of the product ``tree`` are a literal's or a minus sign's."""
    return sum(number_literal(node.left) + number_literal(node.right)
               if isinstance(node, gast.BinOp) else 1
               for node in _product_nodes(tree) if _is_product(node))


def _one_over(core):
    """A stripped product as an expression (``1 / denominator`` written out)."""
    if isinstance(core, tuple):
        return gast.BinOp(gast.Constant(1.0, None), gast.Div(), core[1])
    return core


def _stripped(node, deferred):
    """``(literal, the product without its literals or None, whether it reads a deferred
    name)``: its factors in their order; a literal 0 divided by stays."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
        left_constant, left, reads_left = _stripped(node.left, deferred)
        divides = isinstance(node.op, gast.Div)
        right_constant, right, reads_right = _stripped(node.right, deferred)
        if divides and right_constant == 0:                # divided by 0: left as it is
            right_constant, right, reads_right = 1, node.right, False
        constant = left_constant / right_constant if divides else left_constant * right_constant
        reads = reads_left or reads_right
        if right is None:
            return constant, left, reads
        if left is None:
            return constant, (_ONE_OVER, right) if divides else right, reads
        left, right = _one_over(left), _one_over(right)
        return constant, gast.BinOp(left, node.op, right), reads
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        constant, inner, reads = _stripped(node.operand, deferred)
        return -constant, inner, reads
    if number_literal(node):
        return node.value, None, False
    if isinstance(node, gast.Name) and node.id in deferred:
        return deferred[node.id], node, True
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and node.value.id in deferred:                  # a pick of it: scaled alike
        return deferred[node.value.id], node, True
    return 1, node, False


class _Writer:
    """Writes ``constant * core`` (``core`` a stripped product): the literal multiplies the
    product's first factor when that is a number (``scalars``; ``(-2 * d) * x`` takes one
    array operation, ``-2 * (d * x)`` two)."""

    def __init__(self, scalars):
        self.scalars = scalars

    def __call__(self, constant, core, floats=None, operand=False):
        """``floats``: without a name of them in ``core``, a literal 1 or -1 is written, as
        ``1.0 *`` (None: ``core`` reads one). A bare name is written as itself only as an
        ``operand`` of arithmetic (elsewhere it would share the name's array, which may be
        written into after)."""
        if isinstance(core, tuple):                          # 1 / denominator
            return gast.BinOp(gast.Constant(float(constant) if constant in (1, -1) else constant,
                                            None), gast.Div(), core[1])
        float_known = floats is None or _reads_float(core, floats)
        if constant == 1 and isinstance(core, gast.Name) and not operand:
            return gast.BinOp(gast.Constant(1.0, None), gast.Mult(), core)
        if constant == 1 and float_known:
            return core
        spine = self._first_number(core)
        if spine is not None and (constant != 1 or float_known):
            spine.left = _scaled(constant, spine.left, float_known)   # (the number itself)
            return core
        return _scaled(constant, core, float_known)

    def scales_a_number(self, constant, core, floats):
        """Whether ``constant * core`` is written with the literal on ``core``'s first
        factor, a number, and another factor is not one: the literal then costs no array
        operation."""
        return not isinstance(core, tuple) and self._first_number(core) is not None \
            and (constant != 1 or _reads_float(core, floats)) and any(
                not (isinstance(leaf, gast.Name) and leaf.id in self.scalars)
                for leaf in _product_nodes(core) if not _is_product(leaf))

    def _first_number(self, core):
        """The innermost product of ``core``'s left spine when its first factor is a number
        (``scalars``), else None."""
        spine = None
        while isinstance(core, gast.BinOp) and isinstance(core.op, (gast.Mult, gast.Div)):
            spine, core = core, core.left
        return spine if isinstance(core, gast.Name) and core.id in self.scalars else None


def _scaled(constant, node, float_known):
    """``constant * node`` (``-node`` for -1, and ``node`` for 1, where ``node`` is known to
    be a float; else the literal as a float)."""
    if float_known and constant == -1:
        return gast.UnaryOp(gast.USub(), node)
    if float_known and constant == 1:
        return node
    literal = gast.Constant(float(constant) if constant in (1, -1) else constant, None)
    return gast.BinOp(literal, gast.Mult(), node)


def _rebuild(root, deferred, floats, written):
    """Each maximal product inside ``root`` written anew where that takes fewer operations
    (its literals multiplied together), in place; iterative (a long sum is a deep tree)."""
    todo = [root]
    while todo:
        node = todo.pop()
        for field, value in gast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            new, operand = [], isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare))
            for item in items:
                if isinstance(item, gast.AST) and _is_product(item):
                    item, leaves = _rebuilt(item, deferred, floats, written, operand)
                    todo.extend(leaves)
                elif isinstance(item, gast.AST):
                    todo.append(item)
                new.append(item)
            if isinstance(value, list):
                value[:] = new
            else:
                setattr(node, field, new[0])


def _rebuilt(node, deferred, floats, written, operand=False):
    """``(the product node written anew, or itself; its factors that are not products)``."""
    parts = list(_product_nodes(node))
    leaves = [part for part in parts if not _is_product(part)]
    if len(parts) > _LARGEST:
        return node, leaves
    constant, core, reads = _stripped(node, deferred)
    if core is None:
        return node, leaves
    before = _literals(node)
    after = 1 if isinstance(core, tuple) or constant != 1 or not _reads_float(core, floats) \
        or isinstance(core, gast.Name) and not operand else 0
    if after and written.scales_a_number(constant, core, floats):
        after = 0                     # (-2 * d) * x: the literal costs a number's operation
    if not reads and after >= before:
        return node, leaves
    return written(constant, core, floats, operand), leaves
