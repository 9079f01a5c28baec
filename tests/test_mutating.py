"""The mutation-testing tool (tests/mutants.py, tests/mutating/): its mutants and its list of
equivalent ones."""

import ast
import json
import os

from mutating.operators import mutants

MODULE = '''\
def f(x, n):
    """A docstring is left alone."""
    if x > 0 and n == 1:
        return x + 1
    y = x * 2
    return y


class Model:
    def step(self, x):
        return x - 1
'''


def test_each_mutant_parses_keeps_the_lines_and_names_its_place():
    made = mutants("m.py", MODULE)
    assert {m.operator for m in made} >= {"compare-flip", "and-or", "int", "return-none",
                                         "statement-removed", "arithmetic"}
    for m in made:
        ast.parse(m.text)
        assert len(m.text.splitlines()) == len(MODULE.splitlines())
        changed = [a for a, b in zip(m.text.splitlines(), MODULE.splitlines()) if a != b]
        assert changed and all(line.strip() for line in changed[:1])
        assert "docstring" not in m.after
    steps = [m for m in made if m.line == 11]
    assert steps and all(m.context == "Model.step: return x - 1" for m in steps)
    assert {m.context for m in made if m.line == 5} == {"f: y = x * 2"}


def test_every_equivalent_mutant_says_why_and_names_its_line():
    path = os.path.join(os.path.dirname(__file__), "mutating", "equivalent.json")
    with open(path) as handle:
        entries = json.load(handle)
    for entry in entries:
        assert set(entry) == {"module", "context", "operator", "before", "after", "why"}
        assert len(entry["why"]) > 40 and ": " in entry["context"]
        with open(os.path.join(os.path.dirname(os.path.dirname(path)), "..", entry["module"])) \
                as source:
            assert entry["context"].split(": ", 1)[1] in source.read()   # the line still exists
