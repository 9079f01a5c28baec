"""Every NumPy rule of the table in test_jvp_rules.py, used in a function srctrans builds, is
checked against finite differences in both modes and to second order (``st.check_grads``
with ``order=2``): the gradient and the JVP srctrans generates for a call of the rule are
differentiated again."""

import importlib.util
import os
import tempfile

import numpy as np
import pytest

import srctrans as st
from test_jvp_rules import CASES, _seed

def _module_for(case, args, kwargs, directory):
    """A module whose ``call`` takes the case's float arguments and calls the rule's primal."""
    parameters, passed = [], []
    for i, value in enumerate(args):
        if _differentiable(value):
            parameters.append(f"a{i}")
            passed.append(f"a{i}")
        else:
            passed.append(_literal(value))
    passed += [f"{k}={_literal(v)}" for k, v in kwargs.items()]
    text = ("import numpy as np\n\n\n"
            f"def call({', '.join(parameters)}):\n"
            f"    return PRIMAL({', '.join(passed)})\n")
    name = "rule_call_" + "".join(c if c.isalnum() else "_" for c in case.id)
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as handle:
        handle.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.PRIMAL = case.primal
    spec.loader.exec_module(module)
    return module.call, [value for value in args if _differentiable(value)]


def _differentiable(value):
    if isinstance(value, list):
        return any(_differentiable(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return isinstance(value, (float, complex))


def _literal(value):
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_literal, value))
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, float) and not np.isfinite(value):
        return f"float({repr(value)!r})"
    return repr(value)


@pytest.fixture(scope="module")
def directory():
    with tempfile.TemporaryDirectory() as path:
        yield path


def _keywords_are_constants(case):
    """Whether the case's keyword arguments are constants (one that is an array is passed as
    a literal nowhere: such a case is not generated here)."""
    _, kwargs = case.build(_seed(case))
    return all(isinstance(v, (int, float, str, bool, tuple, type(None))) for v in kwargs.values())


SECOND_ORDER = [case for case in CASES if _keywords_are_constants(case)]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_rule_to_second_order_in_both_modes(case, directory):
    args, kwargs = case.build(_seed(case))
    call, floats = _module_for(case, args, kwargs, directory)
    with np.errstate(all="ignore"):
        st.check_grads(call, tuple(floats), order=2, rtol=1e-4, atol=1e-5)
