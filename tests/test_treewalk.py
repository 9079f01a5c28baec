"""treewalk.walk visits exactly the nodes gast.walk visits, in the same order."""

import pathlib
import sys

import gast
import pytest

from srctrans.treewalk import walk

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted(ROOT.glob("srctrans/**/*.py")) + sorted(ROOT.glob("tests/programs/*.py"))

NEWER_SYNTAX = {
    (3, 10): "match x:\n    case [a, *rest] if a: pass\n    case {'k': v, **more}: pass\n"
             "    case P(q, r=s) as t: pass\n",
    (3, 12): "type Pair[T: int, *Ts, **P] = tuple[T, T]\n"
             "def f[T](x: T) -> T:\n    return x\n",
}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_walk_matches_gast_walk_on_source_files(path):
    tree = gast.parse(path.read_text())
    assert [id(n) for n in walk(tree)] == [id(n) for n in gast.walk(tree)]


@pytest.mark.parametrize("version", sorted(NEWER_SYNTAX))
def test_walk_matches_gast_walk_on_newer_syntax(version):
    if sys.version_info < version:
        pytest.skip("syntax of a later Python")
    tree = gast.parse(NEWER_SYNTAX[version] + "try:\n    pass\nexcept E as e:\n    pass\n")
    walked = list(walk(tree))
    assert [id(n) for n in walked] == [id(n) for n in gast.walk(tree)]
    assert any(isinstance(n, gast.Name) and n.id == "e" for n in walked)   # a handler's name
