"""treewalk.walk visits exactly the nodes gast.walk visits but the load/store marks, in the same
order; treewalk.walk_names gives the Name nodes among them, in that order."""

import ast
import pathlib
import sys

import gast
import pytest

from srctrans.treewalk import walk, walk_names

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted(ROOT.glob("srctrans/**/*.py")) + sorted(ROOT.glob("tests/programs/*.py"))

NEWER_SYNTAX = {
    (3, 10): "match x:\n    case [a, *rest] if a: pass\n    case {'k': v, **more}: pass\n"
             "    case P(q, r=s) as t: pass\n    case None: pass\n",
    (3, 12): "type Pair[T: int, *Ts, **P] = tuple[T, T]\n"
             "def f[T](x: T) -> T:\n    return x\n",
}


def gast_walk(tree):
    """gast.walk's nodes, without the ``ctx`` marks (``Load()``, ``Store()``, ``Del()``)."""
    return [n for n in gast.walk(tree) if not isinstance(n, gast.expr_context)]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_walk_matches_gast_walk_on_source_files(path):
    tree = gast.parse(path.read_text())
    assert [id(n) for n in walk(tree)] == [id(n) for n in gast_walk(tree)]
    assert [id(n) for n in walk_names(tree)] == \
        [id(n) for n in gast_walk(tree) if isinstance(n, gast.Name)]


# fields that hold strings, numbers or None where a node may stand: the walks pass them by
FIELDS_WITHOUT_NODES = (
    "def outer(*, a, b=1.0):\n"
    "    global G\n"
    "    x: int = 3\n"
    "    def inner():\n"
    "        nonlocal a\n"
    "        return {**d, 'k': a, None: b}\n"
    "    return inner\n")


def test_walks_pass_by_strings_numbers_and_missing_entries():
    tree = gast.parse(FIELDS_WITHOUT_NODES)
    walked = list(walk(tree))
    assert [id(n) for n in walked] == [id(n) for n in gast_walk(tree)]
    assert [id(n) for n in walk_names(tree)] == \
        [id(n) for n in walked if isinstance(n, gast.Name)]
    assert not any(n is None or isinstance(n, (str, int)) for n in walked)


@pytest.mark.parametrize("version", sorted(NEWER_SYNTAX))
def test_walk_matches_gast_walk_on_newer_syntax(version):
    if sys.version_info < version:
        pytest.skip("syntax of a later Python")
    tree = gast.parse(NEWER_SYNTAX[version] + "try:\n    pass\nexcept E as e:\n    pass\n")
    walked = list(walk(tree))
    assert [id(n) for n in walked] == [id(n) for n in gast_walk(tree)]
    assert any(isinstance(n, gast.Name) and n.id == "e" for n in walked)   # a handler's name
    assert [id(n) for n in walk_names(tree)] == \
        [id(n) for n in walked if isinstance(n, gast.Name)]


def test_replace_names_visits_names_in_the_order_a_node_transformer_does():
    """replace_names replaces as gast.NodeTransformer with visit_Name would, in its order."""
    from srctrans.treewalk import replace_names
    source = "y = f(a, b[c], *d) + g(e)(h, k=m) if n else [p for q in r]"
    seen, expected = [], []

    class Recorder(gast.NodeTransformer):
        def visit_Name(self, node):
            expected.append(node.id)
            return gast.Name(node.id.upper(), node.ctx, None, None)

    transformed = Recorder().visit(gast.parse(source))

    def upper(node):
        seen.append(node.id)
        return gast.Name(node.id.upper(), node.ctx, None, None)

    replaced = replace_names(gast.parse(source), upper)
    assert seen == expected
    assert gast.dump(replaced) == gast.dump(transformed)


def test_replace_children_puts_a_node_or_a_list_in_place():
    from srctrans.treewalk import replace_children
    tree = gast.parse("y = f(a, *rest) + a[0]")

    def replace(node):
        if isinstance(node, gast.Starred):
            return [gast.Name("b", gast.Load(), None, None), gast.Name("c", gast.Load(), None, None)]
        if isinstance(node, gast.Subscript):
            return gast.Constant(1.0, None)
        return node

    replace_children(tree, replace)
    assert ast.unparse(gast.gast_to_ast(tree)) == "y = f(a, b, c) + 1.0"
