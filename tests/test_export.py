"""``st.export`` and ``srctrans export``: derivatives as standalone modules needing only NumPy.

Each exported module is imported in a subprocess in which ``import srctrans``
fails, and its results are compared with ``st.grad``/``st.vjp``/``st.jvp``
in this process.
"""

import os
import re
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srctrans as st
from srctrans import cli
from srctrans.emit.standalone import runtime_section
from programs import exportable

RUNNER = textwrap.dedent("""
    import importlib.util, pickle, sys
    sys.modules["srctrans"] = None              # srctrans cannot be imported here
    spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
    module = sys.modules["exported"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(sys.argv[2], "rb") as calls:
        name, args, kwargs = pickle.load(calls)
    result = getattr(module, name)(*args, **kwargs)

    def plain(value):          # an instance of a class the module defines: its fields
        if hasattr(value, "__dataclass_fields__") and type(value).__module__ == "exported":
            return {"class": type(value).__name__,
                    **{field: plain(getattr(value, field)) for field in value.__dataclass_fields__}}
        if type(value) is tuple:
            return tuple(plain(v) for v in value)
        return value
    with open(sys.argv[3], "wb") as out:
        pickle.dump(plain(result), out)
    print(sorted(m for m in sys.modules if m.startswith("srctrans") and sys.modules[m]))
""")


def run_exported(tmp_path, module_path, name, *args, path_entry=None, **kwargs):
    """Call ``name`` of the exported module in a subprocess without srctrans; its result.

    ``path_entry`` is put on the subprocess's ``sys.path`` (for the user's own modules)."""
    runner, calls, out = tmp_path / "runner.py", tmp_path / "calls.pkl", tmp_path / "out.pkl"
    runner.write_text(RUNNER)
    calls.write_bytes(pickle.dumps((name, args, kwargs)))
    done = subprocess.run([sys.executable, str(runner), str(module_path), str(calls), str(out)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": path_entry or ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"          # nothing of srctrans was loaded
    return pickle.loads(out.read_bytes())


def assert_tree_close(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_tree_close(g, w)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            if isinstance(want[key], str):
                assert got[key] == want[key]
            else:
                assert_tree_close(got[key], want[key])
    elif hasattr(want, "__dataclass_fields__"):
        for field in want.__dataclass_fields__:
            assert_tree_close(getattr(got, field), getattr(want, field))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _mlp_args(rng):
    return (rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 2)),
            rng.normal(size=2), rng.normal(size=(7, 3)), rng.normal(size=(7, 2)))


CASES = {
    "mlp_loss": (exportable.mlp_loss, (0, 1, 2, 3), _mlp_args),
    "helper_loop": (exportable.helper_loop, ("x", "y"),
                    lambda rng: (rng.normal(size=3), rng.normal(size=3))),
    "piecewise_exp": (exportable.piecewise, 0, lambda rng: (rng.normal(size=4), 1.5)),
    "piecewise_square": (exportable.piecewise, (0, 1), lambda rng: (rng.normal(size=4), 0.5)),
    "piecewise_negate": (exportable.piecewise, 0, lambda rng: (rng.normal(size=4), -1.0)),
    "with_scipy": (exportable.with_scipy, 0, lambda rng: (rng.normal(size=(3, 4)),)),
    "l1_spectrum": (exportable.l1_spectrum, 0, lambda rng: (rng.normal(size=6),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_gradient_and_vjp_match_srctrans(case, tmp_path):
    fn, wrt, make_args = CASES[case]
    args = make_args(np.random.default_rng(0))
    path = tmp_path / f"{case}_grad.py"
    text = st.export(fn, path, wrt=wrt)
    assert path.read_text() == text
    assert "srctrans" not in "\n".join(line for line in text.splitlines()
                                       if line.startswith(("import", "from")))
    name = fn.__name__
    assert_tree_close(run_exported(tmp_path, path, f"{name}_grad", *args), st.grad(fn, wrt)(*args))

    out, residuals = run_exported(tmp_path, path, f"{name}_fwd", *args)
    want_out, pullback = st.vjp(fn, *args, wrt=wrt)
    assert_tree_close(out, want_out)
    v = 1.7
    got = run_exported(tmp_path, path, f"{name}_bwd", residuals, v)
    want = pullback(v)
    assert_tree_close(tuple(got) if isinstance(wrt, tuple) else got,
                      want if isinstance(wrt, tuple) else want)


@pytest.mark.parametrize("case", ["mlp_loss", "helper_loop", "piecewise_square", "with_scipy"])
def test_exported_jvp_matches_srctrans(case, tmp_path):
    fn, wrt, make_args = CASES[case]
    rng = np.random.default_rng(1)
    args = make_args(rng)
    selected = wrt if isinstance(wrt, tuple) else (wrt,)
    indices = [i if isinstance(i, int) else fn.__code__.co_varnames.index(i) for i in selected]
    tangents = {i: rng.normal(size=np.shape(args[i])) for i in indices}
    path = tmp_path / f"{case}_jvp.py"
    st.export(fn, path, wrt=wrt, mode="forward")
    names = fn.__code__.co_varnames
    got = run_exported(tmp_path, path, f"{fn.__name__}_jvp", *args,
                       **{"d" + names[i]: t for i, t in tangents.items()})
    want = st.jvp(fn, args, tuple(tangents.get(i, np.zeros_like(np.asarray(a, float)))
                                  for i, a in enumerate(args)))
    assert_tree_close(got, want)


def test_a_second_derivative_through_runtime_helpers_exports(tmp_path):
    """The derivative of a gradient differentiates runtime helpers (|z|'s), whose derivatives
    read other helpers as globals: the exported module binds them from its copied runtime."""
    x = np.random.default_rng(3).normal(size=6)
    gradient = st.grad(exportable.l1_spectrum)
    path = tmp_path / "l1_second.py"
    text = st.export(gradient, path)
    assert "is_complex_value = rt.is_complex_value" in text
    got = run_exported(tmp_path, path, "l1_spectrum_grad_bwd",
                       run_exported(tmp_path, path, "l1_spectrum_grad_fwd", x)[1], np.ones(6))
    assert_tree_close(got[0], st.vjp(gradient, x)[1](np.ones(6))[0])


def test_containers_export(tmp_path):
    rng = np.random.default_rng(2)
    params = exportable.Params(rng.normal(size=3), 0.3)
    data = {"x": rng.normal(size=(4, 3)), "y": rng.normal(size=4)}
    path = tmp_path / "containers_grad.py"
    text = st.export(exportable.containers, path)
    # the user's own module (which defines Params, and does not import srctrans) is importable
    got = run_exported(tmp_path, path, "containers_grad", params, data,
                       path_entry=str(Path(exportable.__file__).parents[1]))
    want = st.grad(exportable.containers)(params, data)
    assert type(got).__name__ == "Params"
    assert_tree_close(got.w, want.w)
    assert_tree_close(got.b, want.b)
    assert "import numpy" in text


def test_header_says_where_it_came_from_and_how_to_regenerate(tmp_path):
    text = st.export(exportable.helper_loop, wrt=("x", "y"))
    head = text.split('"""')[1]
    file = os.path.relpath(exportable.__file__)            # relative to where it was run
    file = exportable.__file__ if file.startswith("..") else file
    assert f"from {file};" in head and "/work/" not in head.replace(exportable.__file__, "")
    assert f"srctrans export {file}:helper_loop --wrt x,y --mode reverse" in head
    assert f"srctrans {st.__version__}" in head
    # the globals it reads are literals and imports, and the helper's source is copied
    assert "SCALE = 0.5" in text and "OFFSETS = np.array([0.25, -0.5, 1.0]" in text
    assert "import math" in text
    # the helper, of the same module, is inlined at its own line (normalize/callees.py)
    assert "_shifted_fwd" not in text and re.search(r"= x \+ OFFSETS", text)
    # a helper called on constants only runs as written, inlined: its globals come along
    copied = st.export(exportable.constant_helper)
    assert re.search(r"= 1\.0 / \(n\w* \+ SCALE\)", copied) and "SCALE = 0.5" in copied
    assert "_weight_fwd" not in copied


def test_copied_helper_runs(tmp_path):
    path = tmp_path / "constant_helper_grad.py"
    st.export(exportable.constant_helper, path)
    x = np.array([0.5, -2.0])
    assert_tree_close(run_exported(tmp_path, path, "constant_helper_grad", x),
                      st.grad(exportable.constant_helper)(x))


def test_a_global_that_cannot_be_rebuilt_is_named():
    with pytest.raises(st.UsageError, match=r"reads the global GLOBAL_OBJECT, a Opaque.*argument"):
        st.export(exportable.reads_an_object)
    with pytest.raises(st.UsageError, match=r"reads the global LIBRARY_METHOD, a method"):
        st.export(exportable.reads_a_library_method)


def test_bound_methods_and_bad_modes_are_refused():
    with pytest.raises(st.UsageError, match="bound method"):
        st.export(exportable.Opaque(1.0).__init__)
    with pytest.raises(st.UsageError, match="mode must be"):
        st.export(exportable.mlp_loss, mode="sideways")


def test_every_runtime_helper_can_be_copied():
    """The whole runtime copied at once: no two modules define one name, and each helper runs
    from the copy (a new runtime helper that breaks this fails here, not in a user's export)."""
    from srctrans import runtime
    helpers = {name for name in dir(runtime) if not name.startswith("_")
               and callable(getattr(runtime, name)) and not isinstance(getattr(runtime, name),
                                                                       type(np))}
    namespace = {"np": np}                      # the exported module's `import numpy as np`
    exec(runtime_section(helpers, "rt"), namespace)
    assert set(vars(namespace["rt"])) == helpers
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(namespace["rt"].unbroadcast(x, np.zeros(3)), x.sum(axis=0))


def test_cli_export_writes_the_module(tmp_path, capsys):
    out = tmp_path / "loss_grad.py"
    status = cli.main(["export", f"{exportable.__file__}:mlp_loss", "--wrt", "w1,b1,w2,b2",
                       "-o", str(out)])
    assert status == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    args = _mlp_args(np.random.default_rng(3))
    assert_tree_close(run_exported(tmp_path, out, "mlp_loss_grad", *args),
                      st.grad(exportable.mlp_loss, (0, 1, 2, 3))(*args))


def test_cli_export_errors_are_one_line(tmp_path, capsys):
    status = cli.main(["export", f"{exportable.__file__}:reads_an_object", "-o",
                       str(tmp_path / "x.py")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("srctrans: error: cannot export") and err.count("\n") == 1
    assert not (tmp_path / "x.py").exists()
    assert cli.main(["export", f"{exportable.__file__}:mlp_loss"]) == 2      # -o is required


def test_two_globals_of_one_name_in_two_modules_are_refused_or_kept_apart(tmp_path):
    """The function reads SCALE = 0.5 and its callee, in another module, SCALE = 3.0: the
    exported module must not read one for the other (issue 36)."""
    x = np.array([0.5, -1.0, 2.0])
    path = tmp_path / "two_scales.py"
    try:
        st.export(exportable.reads_two_scales, path)
    except st.SrcTransError as error:
        assert "SCALE" in str(error)
        return
    got = run_exported(tmp_path, path, "reads_two_scales_grad", x,
                       path_entry=str(Path(__file__).parent))
    assert_tree_close(got, st.grad(exportable.reads_two_scales)(x))


def test_a_float32_global_stays_float32(tmp_path):
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    path = tmp_path / "float32_constant.py"
    text = st.export(exportable.float32_constant, path)
    assert "float32" in text
    got = run_exported(tmp_path, path, "float32_constant_grad", x)
    want = st.grad(exportable.float32_constant)(x)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # a Python float times the np.float32 global is an np.float32, in Python and exported
    out, _ = run_exported(tmp_path, path, "float32_constant_fwd", 1.5)
    assert type(out) is type(exportable.float32_constant(1.5)) is np.float32


def test_a_function_imported_under_another_name_is_bound(tmp_path):
    x = np.array([0.5, -1.0, 2.0])
    path = tmp_path / "renamed_import.py"
    st.export(exportable.renamed_import, path)
    got = run_exported(tmp_path, path, "renamed_import_grad", x,
                       path_entry=str(Path(__file__).parent))
    assert_tree_close(got, st.grad(exportable.renamed_import)(x))


@pytest.mark.parametrize("fn", [exportable.output_array, exportable.output_float,
                                exportable.output_tuple, exportable.output_dict,
                                exportable.output_dataclass], ids=lambda f: f.__name__)
def test_every_kind_of_output_exports_and_runs_without_srctrans(fn, tmp_path):
    """The gradient (of the output's sum), the forward pass and the JVP of a function returning
    an array, a float, a tuple, a dict and a dataclass run where only NumPy is installed."""
    x = np.random.default_rng(4).normal(size=3)
    path = tmp_path / f"{fn.__name__}_grad.py"
    st.export(fn, path)
    path_entry = str(Path(exportable.__file__).parents[1])
    name = fn.__name__
    got = run_exported(tmp_path, path, f"{name}_grad", x, path_entry=path_entry)
    assert_tree_close(got, st.grad(fn)(x))
    out, _ = run_exported(tmp_path, path, f"{name}_fwd", x, path_entry=path_entry)
    assert_tree_close(out, _as_fields(fn(x)))
    forward = tmp_path / f"{fn.__name__}_jvp.py"
    st.export(fn, forward, mode="forward")
    out, tangent = run_exported(tmp_path, forward, f"{name}_jvp", x, dx=np.ones(3),
                                path_entry=path_entry)
    assert_tree_close(tangent, _as_fields(st.jvp(fn, (x,), (np.ones(3),))[1]))


def _as_fields(value):
    """A dataclass instance as the runner returns one the exported module made."""
    if hasattr(value, "__dataclass_fields__"):
        return {"class": type(value).__name__,
                **{field: getattr(value, field) for field in value.__dataclass_fields__}}
    return value


def test_an_exported_error_is_a_built_in_exception_without_srctrans(tmp_path):
    """An output without a derivative raises Python's own exception where srctrans is absent."""
    path = tmp_path / "output_tuple_grad.py"
    st.export(exportable.output_tuple, path)
    runner = tmp_path / "runner.py"
    runner.write_text(textwrap.dedent(f"""
        import importlib.util, sys
        sys.modules["srctrans"] = None
        spec = importlib.util.spec_from_file_location("exported", {str(path)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        import numpy as np
        try:
            module.rt.seed_sum((1.0, "label"))
        except TypeError as error:
            print("TypeError:", error)
    """))
    done = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("TypeError: the function's output is a container holding a str")


# -- exports built for example arguments (issue 34) ---------------------------------------

MLP_ARGS = (np.linspace(-1, 1, 48).reshape(3, 16), np.zeros(16), np.linspace(-1, 1, 16).reshape(16, 1),
            np.zeros(1), np.linspace(-1, 1, 24).reshape(8, 3), np.linspace(0, 1, 8).reshape(8, 1))


def test_an_export_for_example_arguments_holds_the_fused_gradient_and_no_runtime(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent.parent / "samples"))
    try:
        import mlp
    finally:
        sys.path.pop(0)
    path = tmp_path / "mlp_grad.py"
    text = st.export(mlp.loss, path, wrt=(0, 1, 2, 3), args=MLP_ARGS)
    assert "_srctrans_runtime" not in text and "rt." not in text       # nothing to copy
    assert text.count("import numpy") == 1 and "import numpy as np" in text
    assert len(text.splitlines()) < 120
    file = os.path.relpath(mlp.__file__)                   # relative to where it was run
    assert f"from {mlp.__file__ if file.startswith('..') else file};" in text.split('"""')[1]
    got = run_exported(tmp_path, path, "loss_grad", *MLP_ARGS)
    assert_tree_close(got, st.grad(mlp.loss, wrt=(0, 1, 2, 3))(*MLP_ARGS))
    # one selected argument: one array, as the generic export and st.grad return
    one = tmp_path / "one.py"
    st.export(mlp.loss, one, wrt=0, args=MLP_ARGS)
    got = run_exported(tmp_path, one, "loss_grad", *MLP_ARGS)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, st.grad(mlp.loss)(*MLP_ARGS), rtol=1e-12)


def test_a_specialised_export_refuses_arguments_of_other_shapes(tmp_path):
    path = tmp_path / "specialised.py"
    x = np.array([0.5, -1.0, 2.0])
    st.export(exportable.output_float, path, args=(x,))
    runner = tmp_path / "other_shape.py"
    runner.write_text(textwrap.dedent(f"""
        import importlib.util, numpy as np
        spec = importlib.util.spec_from_file_location("m", {str(path)!r})
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        print(m.output_float_grad(np.array([1.0, 2.0, 3.0])))       # another value: fine
        for bad in (np.ones(4), np.ones(3, dtype=np.float32), 1.5):
            try:
                m.output_float_grad(bad)
            except ValueError as error:
                print("refused", "exported for" in str(error))
    """))
    done = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[1:] == ["refused True"] * 3, done.stdout


def test_a_specialised_export_copies_a_gradient_that_is_a_view_of_an_argument(tmp_path):
    path = tmp_path / "transpose.py"
    x, a = np.ones((2, 3)), np.arange(6.0).reshape(3, 2)
    text = st.export(exportable.times_transpose, path, wrt=(0, 1), args=(x, a))
    assert ".copy()" in text
    runner = tmp_path / "views.py"
    runner.write_text(textwrap.dedent(f"""
        import importlib.util, numpy as np
        spec = importlib.util.spec_from_file_location("m", {str(path)!r})
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        x, a = np.ones((2, 3)), np.arange(6.0).reshape(3, 2)
        dx, da = m.times_transpose_grad(x, a)
        print(np.shares_memory(dx, a), np.shares_memory(da, x), (dx == a.T).all())
    """))
    done = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0 and done.stdout.split() == ["False", "False", "True"], done.stderr


def test_a_loss_over_a_model_object_needs_example_arguments(tmp_path):
    model = exportable.Layer(np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.1, -0.2]))
    x, y = np.linspace(-1, 1, 12).reshape(4, 3), np.zeros((4, 2))
    for make in (lambda: st.export(exportable.model_loss),
                 lambda: st.source(exportable.model_loss)):
        with pytest.raises(st.UsageError, match=r"calls a value passed in") as info:
            make()
        assert "exportable.py:" in str(info.value) and "args=" in str(info.value)
    shown = st.source(exportable.model_loss, args=(model, x, y))
    # the layer's __call__, of the same module, is inlined (normalize/callees.py)
    assert "Layer_call_fwd" not in shown and "__call___fwd" not in shown
    assert "x @ model.w + model.b" in shown
    path = tmp_path / "model_loss.py"
    text = st.export(exportable.model_loss, path, args=(model, x, y))
    assert "from programs.exportable import Layer" in text     # the class of the objects passed in
    got = run_exported(tmp_path, path, "model_loss_grad", model, x, y,
                       path_entry=str(Path(__file__).parent))
    want = st.grad(exportable.model_loss)(model, x, y)
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-12)
    np.testing.assert_allclose(got["b"], want["b"], rtol=1e-12)


def test_cli_args_print_the_specialised_code_and_export_it(tmp_path, capsys):
    sample = str(Path(__file__).parent.parent / "samples" / "mlp.py")
    example = ("np.ones((3, 16)), np.zeros(16), np.ones((16, 1)), np.zeros(1), "
               "np.ones((8, 3)), np.ones((8, 1))")
    assert cli.main([sample + ":loss", "--wrt", "w1,b1", "--args", example]) == 0
    shown = capsys.readouterr().out
    assert "d_sub = 0.25 * (prediction - y)" in shown and "rt." not in shown
    out = tmp_path / "out.py"
    assert cli.main(["export", sample + ":loss", "--args", example, "-o", str(out)]) == 0
    assert "--args ..." in out.read_text() and "_like_example(" in out.read_text()
    capsys.readouterr()
    assert cli.main([sample + ":loss", "--args", "np.ones((3, 16)) +"]) == 2
    assert "--args" in capsys.readouterr().err


def test_plain_constants_read_as_globals_are_written_out(tmp_path):
    path = tmp_path / "constants_grad.py"
    text = st.export(exportable.reads_plain_constants, path)
    assert "LABEL = 'scaled'" in text and "ENABLED = True" in text and "NOTHING = None" in text
    x = np.array([0.5, -2.0])
    assert_tree_close(run_exported(tmp_path, path, "reads_plain_constants_grad", x), 4.0 * x)


@pytest.mark.parametrize("case, in_axes, out_axes, make", [
    ("mlp_loss", (None, None, None, None, 0, 0), 0,
     lambda r: (r.normal(size=(3, 4)), r.normal(size=4), r.normal(size=(4, 2)), r.normal(size=2),
                r.normal(size=(5, 7, 3)), r.normal(size=(5, 7, 2)))),
    ("helper_loop", (1, None), 0, lambda r: (r.normal(size=(3, 5)), r.normal(size=3))),
    ("piecewise", (0, 0), -1, lambda r: (r.normal(size=(4, 3)), np.array([2.0, 0.5, -1.0, 0.1]))),
    ("output_tuple", 0, -1, lambda r: (r.normal(size=(4, 3, 2)),)),
    ("output_dict", 1, -1, lambda r: (r.normal(size=(3, 4)),)),
    ("with_a_shared_part", (0, None), 0, lambda r: (r.normal(size=(5, 3)), r.normal(size=3))),
    ("with_a_shared_part", (1, None), 1, lambda r: (r.normal(size=(3, 5)), r.normal(size=3))),
])
def test_exported_vmap_matches_srctrans(case, in_axes, out_axes, make, tmp_path):
    """The batched code st.vmap runs, exported: it equals st.vmap's result without srctrans
    (selects and masked while loops, helpers batched in turn, axes moved)."""
    fn = getattr(exportable, case)
    args = make(np.random.default_rng(1))
    batched = st.vmap(fn, in_axes=in_axes, out_axes=out_axes)
    path = tmp_path / f"{case}_vmap.py"
    text = st.export(batched, path, args=args)
    assert f"def {case}_vmap(" in text and f"def {case}(" in text
    assert_tree_close(run_exported(tmp_path, path, case, *args), batched(*args))


def test_exporting_vmap_refuses_what_runs_per_member():
    def draws_nothing(x):
        out = np.zeros(2)
        if np.sum(x) > 0:
            out[0] = x[0]                  # a write under a batched branch: per member
        return out
    with pytest.raises(st.UsageError, match="once per member"):
        st.export(st.vmap(draws_nothing), None, args=(np.ones((3, 2)),))
    with pytest.raises(st.UsageError, match="needs example arguments"):
        st.export(st.vmap(exportable.mlp_loss), None)
