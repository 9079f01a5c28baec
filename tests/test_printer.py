"""The printer's own gast-to-ast conversion gives the tree gast's converter gives.

``emit.printer.to_ast`` converts the node kinds whose fields agree itself and
leaves the rest to gast; with ``_CHECK`` on, every conversion is compared with
``gast.gast_to_ast`` (``SRCTRANS_CHECK_PRINTER=1`` turns it on for a whole run).
Here it is on while every function of the test programs (control flow,
containers, the language's constructs) is built in both modes.
"""

import inspect

import gast
import pytest

import srctrans as st
from srctrans.emit import printer
from programs import containers, control, language

# the programs of refusal tests, which have no generated code to print (each must still be
# refused: see test_the_refused_programs_are_refused)
REFUSED = {language.make_rebindable, containers.appends_to_argument, containers.max_with_default,
           containers.unpacks_into_dict, containers.weighted}
FUNCTIONS = [fn for module in (language, control, containers)
             for _, fn in sorted(vars(module).items())
             if inspect.isfunction(fn) and fn.__module__ == module.__name__
             and not fn.__name__.startswith("_") and fn not in REFUSED]


@pytest.fixture
def checked_printer(monkeypatch, no_persistent_cache):
    monkeypatch.setattr(printer, "_CHECK", True)
    st.clear_cache()
    yield
    st.clear_cache()


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: f"{fn.__module__.split('.')[-1]}.{fn.__name__}")
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_every_statement_converts_as_gast_converts_it(checked_printer, fn, mode):
    text = st.source(fn, mode=mode)
    assert "def " in text


@pytest.mark.parametrize("fn", sorted(REFUSED, key=lambda fn: fn.__name__), ids=lambda fn: fn.__name__)
def test_the_refused_programs_are_refused(fn):
    with pytest.raises(st.SrcTransError):
        st.source(fn)


def test_the_check_catches_a_conversion_that_differs(monkeypatch):
    monkeypatch.setattr(printer, "_CHECK", True)
    monkeypatch.setattr(printer, "_AST_CLASSES", dict(printer._AST_CLASSES, Add=printer.ast.Sub))
    monkeypatch.setattr(printer, "_KINDS", {})            # what it derived from the table
    statement = gast.parse("y = a + b").body[0]
    with pytest.raises(AssertionError, match="to_ast differs"):
        printer.to_ast(statement)
