"""Derivatives of NumPy code over arrays of other libraries stay in those libraries.

Every rule of the table in test_jvp_rules.py is called, in a function srctrans
builds, on :class:`duck_arrays.Duck` arrays (a NEP-18 array that fails on any
conversion to NumPy) and on Dask arrays (under a scheduler that fails on any
computation, with Dask's "not implemented, computing" warnings as errors). Each
gradient and JVP must equal the NumPy one and come back in the same library, or
raise srctrans's ``UnsupportedArrayError``. Rules whose primal itself converts
(``math`` functions, ``scipy.special.logsumexp``) are skipped: plain Python
converts there too. ``GAPS`` lists the cases that still convert, each with why.
"""

import contextlib
import pathlib
import re
import tempfile
import warnings

import numpy as np
import pytest

import srctrans as st
from duck_arrays import Converted, Duck, ducks, unwrap
from test_jvp_rules import CASES, _seed
from test_rules_second_order import _module_for

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

# (mode, case id) -> why the derivative still converts (or differs) there
GAPS = {
}
# Dask only: its functions that differ from NumPy's or are missing
DASK_GAPS = {
    ("jvp", "choose"): "Dask's choose takes no mode",
}


class Computed(AssertionError):
    """Dask was asked to compute."""


def _refuse_to_compute(dsk, keys, **kwargs):
    raise Computed("a Dask array was computed")


def _to_dask(value):
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_to_dask(v) for v in value)
    if hasattr(value, "_fields"):
        return type(value)(*(_to_dask(v) for v in value))
    value = np.asarray(value, dtype=float)
    return da.from_array(value, chunks=max(1, value.shape[0] // 2) if value.ndim else ())


def _from_dask(value):
    if isinstance(value, (list, tuple)):
        return type(value)(*map(_from_dask, value)) if hasattr(value, "_fields") \
            else type(value)(map(_from_dask, value))
    with dask.config.set(scheduler="sync"):
        return value.compute() if isinstance(value, da.Array) else value


LIBRARIES = {
    "duck": (lambda value: _structured(Duck, value), lambda v: unwrap(v), Duck, Converted,
             contextlib.nullcontext, GAPS),
    "dask": (_to_dask, _from_dask, da.Array, (Computed, FutureWarning),
             lambda: dask.config.set(scheduler=_refuse_to_compute), {**GAPS, **DASK_GAPS}),
}


def _structured(make, value):
    if hasattr(value, "_fields"):
        return type(value)(*(_structured(make, v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_structured(make, v) for v in value)
    return None if value is None else make(np.asarray(value, dtype=float))


def _has_complex(value):
    if isinstance(value, (list, tuple)):
        return any(_has_complex(v) for v in value)
    return np.iscomplexobj(value)


def _ones_tree(value):
    """Ones shaped like ``value``, list by list (np.block's nested lists)."""
    return [_ones_tree(v) for v in value] if isinstance(value, list) else np.ones_like(value)


def _ones(out):
    if hasattr(out, "_fields"):
        return type(out)(*map(_ones, out))
    if isinstance(out, (list, tuple)):
        return type(out)(map(_ones, out))
    if np.asarray(out).dtype.kind in "biu":
        return None                         # an int entry (lstsq's rank): no derivative asked
    return np.ones(np.shape(out))


def _same(a, b):
    if isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True)


def _close(got, want, kind, back):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, kind, back)
        return
    if want is None:
        assert got is None
        return
    if np.ndim(want):
        assert isinstance(got, kind), f"the derivative came back as {type(got).__name__}"
    np.testing.assert_allclose(np.asarray(back(got), dtype=float), want, rtol=1e-6, atol=1e-9)


_DIRECTORY = tempfile.mkdtemp(prefix="srctrans-duck-")      # the cases' call modules


def _prepared(case, library):
    """``(call, floats, inputs)`` of ``case`` in ``library``, or None where the case does not
    apply: a keyword argument that is an array, complex values (this harness compares floats;
    tests/test_complex.py checks them on NumPy arrays), a primal that itself converts or is
    missing there (plain Python would fail too), or one whose result differs from NumPy's."""
    to_library, back, _, _, quiet, _ = LIBRARIES[library]
    args, kwargs = case.build(_seed(case))
    if any(not isinstance(v, (int, float, str, bool, tuple, type(None))) for v in kwargs.values()):
        return None
    call, floats = _module_for(case, args, kwargs, _DIRECTORY)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error", FutureWarning)
        try:
            if _has_complex(args) or _has_complex(call(*floats)):
                return None
            inputs = tuple(_structured(to_library, v) if isinstance(v, list) else to_library(v)
                           for v in floats)
            with quiet():
                primal = call(*inputs)
        except (Converted, Computed, FutureWarning, TypeError, ValueError, IndexError,
                NotImplementedError):
            return None
        if not _same(back(primal), call(*floats)):
            return None
    return call, floats, inputs


# only the cases that apply are generated (none that could only be skipped); what collection
# prepared, each test reads (a case's module written and its primal run once, not per mode)
PREPARED = {(case.id, library): _prepared(case, library)
            for case in CASES for library in sorted(LIBRARIES)}
APPLICABLE = [(case, library) for case in CASES for library in sorted(LIBRARIES)
              if PREPARED[case.id, library] is not None]


@pytest.mark.parametrize("mode", ["vjp", "jvp"])
@pytest.mark.parametrize("case, library", APPLICABLE,
                         ids=[f"{c.id}-{library}" for c, library in APPLICABLE])
def test_rule_stays_in_the_array_library(case, mode, library):
    to_library, back, kind, converted, quiet, gaps = LIBRARIES[library]
    call, floats, inputs = PREPARED[case.id, library]
    wrt = tuple(range(len(floats)))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error", FutureWarning)
        tangents = tuple(_ones_tree(f)
                         for f in floats)
        if mode == "vjp":
            out_numpy, back_numpy = st.vjp(call, *floats, wrt=wrt)
            want = back_numpy(_ones(out_numpy))
        else:
            _, want = st.jvp(call, tuple(floats), tangents)
        with quiet():
            try:
                if mode == "vjp":
                    out, back_library = st.vjp(call, *inputs, wrt=wrt)
                    got = back_library(_structured(to_library, _ones(out_numpy)))
                else:
                    _, got = st.jvp(call, inputs, tuple(
                        _structured(to_library, t) if isinstance(t, list) else to_library(t)
                        for t in tangents))
            except st.UnsupportedArrayError as error:
                assert "needs NumPy arrays" in str(error) and (mode, case.id) not in gaps
                return
            except (Converted, Computed, FutureWarning, TypeError, st.SrcTransError) as error:
                if (mode, case.id) in gaps:
                    return
                raise AssertionError(f"{library}: {error}") from error
    assert (mode, case.id) not in gaps, f"{mode} of {case.id} works now: take it out of the gaps"
    _close(got, want, kind, back)


def test_the_docs_list_every_derivative_that_needs_numpy():
    """Each NumPy function a runtime helper refuses arrays of other libraries for is in the
    table of docs/beyond_one_machine.md."""
    root = pathlib.Path(__file__).resolve().parent.parent
    page = (root / "docs" / "beyond_one_machine.md").read_text()
    refused = set()
    for path in (root / "runtime").glob("*.py"):
        for what in re.findall(r'numpy_only\(\s*"([^"]+)"', path.read_text()):
            named = what.split(" (")[0]          # the function, or what the code does
            refused.update(re.findall(r"np\.[\w.]+\w", named) or [named])
    assert len(refused) >= 15
    plain = page.replace("`", "")
    missing = sorted(name for name in refused if name not in plain)
    assert not missing, f"docs/beyond_one_machine.md does not list {missing}"


def logistic_nll(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0]


def logistic_nll_by_hand(w, X, y):
    """The value and gradient as an expert writes them for Dask (benchmarks/bench_dask.py)."""
    z = X @ w
    return (np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0],
            X.T @ (1.0 / (1.0 + np.exp(-z)) - y) / X.shape[0])


def _tasks(*values):
    return len({key: None for value in values for key in dict(value.__dask_graph__())})


def test_a_lazy_losss_value_and_gradient_is_a_graph_as_small_as_one_written_by_hand():
    """A lazy scalar loss's seed is a number (runtime/seeding.py), so the spread of its sum is
    one full_like a chunk and no zero of it is guarded lazily: 1.09 times the hand-written
    graph's tasks (1.15 with a lazy seed), the same after Dask's optimisation."""
    rng = np.random.default_rng(7)
    X = da.from_array(rng.standard_normal((400, 3)), chunks=(40, 3))
    y = da.from_array((rng.random(400) < 0.5).astype(float), chunks=40)
    w = np.array([0.3, -0.2, 0.5])
    with dask.config.set(scheduler=_refuse_to_compute):
        loss, g = st.value_and_grad(logistic_nll)(w, X, y)
        hand = logistic_nll_by_hand(w, X, y)
    assert isinstance(loss, da.Array) and isinstance(g, da.Array)
    assert _tasks(loss, g) <= 1.1 * _tasks(*hand)
    computed = _from_dask((loss, g))
    want = _from_dask(hand)
    np.testing.assert_allclose(computed[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(computed[1], want[1], rtol=1e-12)


def penalised_sum(w, c, X):
    return np.sum(X @ w) + c * c


def test_a_derivative_no_lazy_value_reaches_is_computed_as_numpy_computes_it():
    """The derivative of the penalty's number ``c`` reads no Dask array (the seed of a lazy
    scalar is a number): NumPy's; the weights' is lazy."""
    X = da.from_array(np.arange(12.0).reshape(4, 3), chunks=(2, 3))
    with dask.config.set(scheduler=_refuse_to_compute):
        dw, dc = st.grad(penalised_sum, wrt=(0, 1))(np.ones(3), 1.5, X)
    assert isinstance(dw, da.Array) and type(dc) is np.float64 and dc == 3.0
    np.testing.assert_array_equal(_from_dask(dw), np.arange(12.0).reshape(4, 3).sum(axis=0))
