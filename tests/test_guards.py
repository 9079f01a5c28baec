"""Guards that no test noticed (issue 36): each test fails when the check it names is
removed (each was verified by removing it)."""

import os
import stat

import numpy as np
import pytest

import srctrans as st
from programs import guarded
from programs import callees_elsewhere as elsewhere

X = np.array([0.5, -1.0, 2.0])


def test_the_fused_gradient_keeps_what_a_later_call_needs():
    """Without the del pass sparing the names it must keep, the second call of the fused
    gradient raised UnboundLocalError ('_exp')."""
    gradient = st.grad(guarded.exp_sum)
    for _ in range(4):
        np.testing.assert_allclose(gradient(X), np.exp(X))


def test_sorting_a_2d_array_in_place_sorts_each_row():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    order = np.argsort(x, axis=-1)
    want = np.zeros_like(x)
    np.put_along_axis(want, order, w, axis=-1)       # each entry gets the weight of its rank
    np.testing.assert_allclose(st.grad(guarded.sorted_rows)(x, w), want)
    st.check_grads(guarded.sorted_rows, (x, w), order=2)


def test_sorting_with_the_axis_and_kind_given_by_position():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0], [1.0, 1.0, 0.0]])   # a tie in column 1
    w = np.arange(9.0).reshape(3, 3)
    order = np.argsort(x, axis=0, kind="stable")
    want = np.zeros_like(x)
    np.put_along_axis(want, order, w, axis=0)         # the stable order breaks the tie
    np.testing.assert_allclose(st.grad(guarded.sorted_columns)(x, w), want)
    st.check_grads(guarded.sorted_columns, (x + 0.01 * w, w), order=2)


def test_booleans_read_from_a_mask_are_not_folded_as_floats():
    """x * a + x * b with a and b booleans read from a mask: the gradient is 2 where both are
    True; folding 1.0 * a + 1.0 * b to a + b gives their logical or, 1."""
    gradient = st.grad(guarded.mask_entries)
    for mask, want in ((np.array([True, True]), 2.0), (np.array([True, False]), 1.0),
                       (np.array([False, False]), 0.0)):
        for _ in range(3):                             # generic, fused, short path
            assert float(gradient(0.5, mask)) == want


def test_booleans_from_numpy_predicates_are_not_folded_as_floats():
    gradient = st.grad(guarded.tested_entries)
    for y, want in (([1.0, 2.0], 2.0), ([-1.0, 2.0], 1.0), ([1.0, np.inf], 1.0),
                    ([-1.0, np.nan], 0.0)):
        for _ in range(3):                             # generic, fused, short path
            assert float(gradient(0.5, np.array(y))) == want


def test_a_rebound_callee_after_warm_up_gives_the_new_derivative(monkeypatch):
    gradient = st.grad(guarded.calls_a_helper)
    for _ in range(3):                                 # generic, specialised, short path
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(guarded, "_helper", _tanh)
    np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X))
    monkeypatch.undo()
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(guarded, "_activation", _tanh)      # the helper's callee, rebound
    np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X))


def _tanh(x):
    return np.tanh(x)


def test_a_helper_of_another_module_rebound_or_reloaded_gives_the_new_derivative(monkeypatch):
    """A build recorded ``guarded`` (the module) alone: ``guarded._helper`` rebound, a
    short path, a gradient asked again and a JVP all kept the old helper's derivative."""
    old = np.cos(X) * X + np.sin(X)
    new = (1 - np.tanh(X) ** 2) * X + np.tanh(X)
    gradient = st.grad(elsewhere.through_guarded_helper)
    for _ in range(3):                                 # generic, specialised, short path
        np.testing.assert_allclose(gradient(X), old)
        np.testing.assert_allclose(st.jvp(elsewhere.through_guarded_helper, (X,), (X,))[1],
                                   old @ X)
    monkeypatch.setattr(guarded, "_helper", _tanh)
    for again in (gradient, st.grad(elsewhere.through_guarded_helper)):
        for _ in range(3):
            np.testing.assert_allclose(again(X), new)
    np.testing.assert_allclose(st.jvp(elsewhere.through_guarded_helper, (X,), (X,))[1], new @ X)


class _Activated:
    def act(self, z):
        return np.sin(z)

    def loss(self, x):
        return np.sum(self.act(x) * x)


class _ActivatedElsewhere(_Activated):
    def loss(self, x):                     # a method of a base class, called through self
        return np.sum(self.act(x) * x) + np.sum(guarded._helper(x))


def _tanh_method(self, z):
    return np.tanh(z)


@pytest.mark.parametrize("kind", [_Activated, _ActivatedElsewhere])
def test_a_method_rebound_on_its_class_gives_the_new_derivative(kind, monkeypatch):
    """A call through self compiled to call ``act``: rebinding ``act`` on the class kept
    the old method's derivative (on the short path and in a new ``st.grad``)."""
    model = kind()
    extra = np.cos(X) if kind is _ActivatedElsewhere else 0.0
    gradient = st.grad(model.loss)
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X) + extra)
    monkeypatch.setattr(_Activated, "act", _tanh_method)
    new = (1 - np.tanh(X) ** 2) * X + np.tanh(X) + extra
    for again in (gradient, st.grad(model.loss)):
        for _ in range(3):
            np.testing.assert_allclose(again(X), new)
    np.testing.assert_allclose(st.jvp(model.loss, (X,), (X,))[1], new @ X)


class _Configurable(_Activated):
    def __init__(self, act=None):
        if act is not None:
            self.act = act                 # shadows the class's method for this object


def test_an_object_holding_its_own_attribute_calls_it_not_its_classs_method():
    plain, own = _Configurable(), _Configurable(np.tanh)
    gradient = st.grad(_Configurable.loss, wrt=1)
    sine = np.cos(X) * X + np.sin(X)
    tanh = (1 - np.tanh(X) ** 2) * X + np.tanh(X)
    for model, want in [(plain, sine)] * 3 + [(own, tanh)] * 3 + [(plain, sine), (own, tanh)]:
        np.testing.assert_allclose(gradient(model, X), want)
        np.testing.assert_allclose(st.grad(model.loss)(X), want)
    np.testing.assert_allclose(st.jvp(own.loss, (X,), (X,))[1], tanh @ X)


class _LibraryActivated:
    act = staticmethod(np.sin)              # a library function held by the class

    def loss(self, x):
        return np.sum(self.act(x) * x)


def test_a_library_function_a_class_holds_as_a_staticmethod_is_called_and_rebinding_seen(
        monkeypatch):
    """``self.act(x)`` with ``act = staticmethod(np.sin)``: srctrans refused it ("no
    derivative rule for the method .act()"); it is np.sin's rule now, and rebinding
    ``act`` on the class counts."""
    model = _LibraryActivated()
    gradient = st.grad(model.loss)
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    np.testing.assert_allclose(st.jvp(model.loss, (X,), (X,))[1], (np.cos(X) * X + np.sin(X)) @ X)
    st.check_grads(model.loss, (X,), order=2)
    monkeypatch.setattr(_LibraryActivated, "act", staticmethod(np.tanh))
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X))


class _Applied:
    def apply(self, z):
        return np.sin(z)

    __call__ = apply


_MODEL = _Applied()


def _through_a_global_object(x):
    return np.sum(_MODEL.apply(x) * x)


def _calling_a_global_object(x):
    return np.sum(_MODEL(x) * x)


@pytest.mark.parametrize("fn, name", [(_through_a_global_object, "apply"),
                                      (_calling_a_global_object, "__call__")])
def test_a_global_objects_method_rebound_on_its_class_gives_the_new_derivative(
        fn, name, monkeypatch):
    gradient = st.grad(fn)
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(_Applied, name, _tanh_method)
    new = (1 - np.tanh(X) ** 2) * X + np.tanh(X)
    for again in (gradient, st.grad(fn)):
        for _ in range(3):
            np.testing.assert_allclose(again(X), new)
    np.testing.assert_allclose(st.jvp(fn, (X,), (X,))[1], new @ X)


def test_a_helper_module_edited_and_reloaded_gives_the_new_derivative(tmp_path, monkeypatch):
    """A notebook's edit: the helper's module rewritten and reloaded, its caller's module
    untouched."""
    import importlib
    import sys
    (tmp_path / "edited_helpers.py").write_text(
        "import numpy as np\n\ndef smooth(x):\n    return np.sin(x)\n")
    (tmp_path / "edited_caller.py").write_text(
        "import numpy as np\nimport edited_helpers\n\n"
        "def loss(x):\n    return np.sum(edited_helpers.smooth(x) * x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_caller
    import edited_helpers
    try:
        gradient = st.grad(edited_caller.loss)
        for _ in range(3):
            np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
        (tmp_path / "edited_helpers.py").write_text(
            "import numpy as np\n\ndef smooth(x):\n    return np.tanh(x) + 1.0\n")
        importlib.reload(edited_helpers)
        for _ in range(3):
            np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X) + 1.0)
    finally:
        sys.modules.pop("edited_caller", None)
        sys.modules.pop("edited_helpers", None)


@pytest.mark.skipif(os.name != "posix", reason="modes are POSIX's")
def test_a_cache_directory_its_group_may_write_is_not_used(tmp_path, monkeypatch):
    from srctrans.persist import directory
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o770)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o770
    monkeypatch.setattr(directory, "_checked", {})
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", str(folder))
    with pytest.warns(RuntimeWarning, match="others may read or write it"):
        assert directory.location() is None


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="owners are POSIX's")
def test_a_cache_directory_another_user_owns_is_not_used(tmp_path, monkeypatch):
    from srctrans.persist import directory
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(directory, "_checked", {})
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", str(folder))
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)
    with pytest.warns(RuntimeWarning, match="another user owns it"):
        assert directory.location() is None


def test_writing_and_keeping_entries_say_whether_they_did(tmp_path, monkeypatch):
    from srctrans.persist import directory, entries
    assert directory.write(str(tmp_path), "entry", "text") is True
    (tmp_path / "taken" / "inside").mkdir(parents=True)     # a directory where the entry goes
    assert directory.write(str(tmp_path), "taken", "text") is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry", "taken"]   # no temporary left
    monkeypatch.setattr(directory, "location", lambda: None)
    assert entries.save(np.sin, (), None) is False


def test_zeros_and_ones_follow_the_dask_operand_beside_a_numpy_one():
    da = pytest.importorskip("dask.array")
    from srctrans.runtime import foreign
    x = np.ones((2, 3))
    y = da.from_array(np.arange(3.0), chunks=3)
    for make in (foreign.zeros_for, foreign.ones_for):
        made = make((3,), np.float64, x[0], y)
        assert isinstance(made, da.Array), make.__name__
    g = st.grad(lambda_free, wrt=1)(x, y)
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), x[0])


def test_dask_arrays_are_cast_and_shaped_as_asked():
    """as_array casts a Dask array only when the dtype differs; zeros_for keeps the operand's
    chunks when the shape is the operand's, and makes the shape asked for otherwise."""
    da = pytest.importorskip("dask.array")
    from srctrans.runtime import foreign
    y = da.from_array(np.arange(6.0, dtype=np.float32), chunks=2)
    assert foreign.as_array(y, np.float64).dtype == np.float64
    assert foreign.as_array(y, np.float32) is y
    same = foreign.zeros_for((6,), np.float64, y)
    assert same.chunks == y.chunks
    other = foreign.zeros_for((2, 3), np.float64, y)
    assert other.shape == (2, 3) and isinstance(other, da.Array)


def lambda_free(x, y):
    return np.sum(x[0] * y)


def test_a_gradient_that_is_a_view_of_an_argument_is_copied_on_every_path():
    """The fused gradient of x in sum(x * a.T) is a.T itself: the guards must see that it is a
    view (its base is not None) and copy it, or `dx *= 0` zeroes the caller's a."""
    x, a = np.ones((2, 3)), np.arange(6.0).reshape(3, 2)
    gradient = st.grad(guarded.times_transpose, wrt=(0, 1))
    for _ in range(4):                                 # generic, fused, short path, again
        dx, da = gradient(x, a)
        for g in (dx, da):
            assert g.flags.writeable and not any(np.shares_memory(g, v) for v in (x, a))
        np.testing.assert_array_equal(dx, a.T)
        dx *= 0.0
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(3, 2))


def test_a_view_read_before_its_base_is_written_in_a_loop_is_refused():
    """Without the alias check seeing `v` read earlier in the loop body, the gradient came
    out [6, 12, 0] where the answer is [42, 12, 0]."""
    with pytest.raises(st.UnsupportedSyntaxError, match=r"`v` may share its memory") as info:
        st.grad(guarded.view_read_in_a_loop)(X)
    assert "guarded.py:" in str(info.value) and "y[0:2].copy()" in str(info.value)


def test_a_callee_whose_loop_changes_a_shape_keeps_its_generic_code():
    """A callee's loop binds u to an array, a float, then an array: its residuals show u's last
    shape only, so a specialised callee dropped the sum of u's cotangent for the float step
    (the second call's gradient was 12.43 where the answer is 2.32)."""
    W = np.full((3, 3), 0.3)
    gradient = st.grad(guarded.calls_a_loop_over_mixed_shapes)
    expected = (guarded.calls_a_loop_over_mixed_shapes(0.7 + 1e-6, W)
                - guarded.calls_a_loop_over_mixed_shapes(0.7 - 1e-6, W)) / 2e-6
    for _ in range(4):                                 # generic, specialised, short path
        np.testing.assert_allclose(gradient(0.7, W), expected, rtol=1e-6)
    st.check_grads(guarded.calls_a_loop_over_mixed_shapes, (0.7, W), order=2)


@pytest.mark.parametrize("fn, args, said", [
    (guarded.squares, (X,), "specialised on their shapes (a call"),
    (guarded.positive_squares, (X,), "specialised on their shapes (a call"),
    (guarded.eigenvalue_sum, (X,), "because a shape in it depends on values (line "),
    (guarded.dict_squares, ({"w": X},), "specialised on their shapes (a call"),
    (guarded.scaled_by_spec, (X, (2.0, np.sin)), "because an argument is neither an array, a "
                                                "number, a string, None, nor a container"),
    (guarded.calls_eigenvalues, (X,), "`numpy.linalg.eigvals`, whose result is real or "
                                      "complex as values decide"),   # (the callee's line)
    (elsewhere.calls_counts, (X,), "specialised on their shapes (a call"),
    (guarded.squares, (X + 1j,), "because its values are complex"),
    (guarded.smoothed, (0.4, np.cumsum(X)), "specialised on their shapes (a call"),
    (guarded.picked_by_a_flag, (X,), "specialised on their shapes (a call"),
], ids=["specialised", "mask", "eigenvalues", "dict", "function-in-a-tuple", "callee-eigenvalues",
        "callee-mask", "complex", "int-index", "bool-index"])
def test_the_source_for_example_arguments_says_which_code_runs_and_why(fn, args, said):
    """st.source(f, args=...) starts with a comment naming the path a call with them takes
    and, for the generic code, why it is not specialised (issue 32)."""
    head = st.source(fn, args=args).split("\n\ndef ")[0]
    assert head.startswith("# The code a call with these arguments runs")
    assert said in " ".join(line.lstrip("# ") for line in head.splitlines())
    assert not st.source(fn).startswith("#")           # without arguments: no claim


def test_containers_and_objects_of_changing_entry_shapes_get_their_own_gradients():
    """Calls whose dict entry or object attribute has another shape (x's the same) get the
    gradient of their own shapes, call after call (the shape key covers the entries and
    attributes of containers and objects, which are specialised now)."""
    gradient = st.grad(guarded.dict_and_object, wrt=(0, 1))
    x = np.linspace(0.3, 0.9, 3)
    for n, m in ((3, 3), (3, 3), (3, 3), (1, 3), (1, 3), (3, 1), (3, 1), (1, 1), (1, 1)):
        w, v = np.linspace(0.1, 1.0, n), np.linspace(-1.0, 0.5, m)
        dd, dobj = gradient({"w": w}, guarded.Scales(v), x)
        np.testing.assert_allclose(dd["w"], np.full(n, np.sum(x) / n))
        np.testing.assert_allclose(dobj["w"], np.full(m, np.sum(x * x) / m))
    w = np.linspace(0.1, 1.0, 3)                       # an int entry: its value is in the key
    st.check_grads(guarded.dict_and_object, ({"w": w, "n": 2}, guarded.Scales(w), w), order=2)


def test_an_object_that_refers_to_itself_runs_the_generic_code():
    """The shape key walks containers and attributes to a bounded depth: a cycle gives none."""
    node = guarded.Scales(np.ones(3))
    node.me = node
    gradient = st.grad(guarded.scaled_attribute, wrt=1)
    for _ in range(3):
        np.testing.assert_allclose(gradient(node, np.arange(3.0)), np.ones(3))


def test_a_dict_written_in_a_loop_has_second_derivatives():
    x = np.array([0.3, -0.7, 1.1])
    st.check_grads(guarded.dict_filled_in_a_loop, (x,), order=2)
    st.check_grads(st.grad(guarded.dict_filled_in_a_loop), (x,), order=1)



def test_a_helper_writing_into_its_parameter_by_augmented_assignment_is_refused():
    with pytest.raises(st.UnsupportedSyntaxError, match=r"writing into `p`.*`_bump`"):
        st.grad(guarded.calls_a_bumping_helper)(np.ones(3))


def test_a_parameter_written_then_rebound_is_copied_first():
    x = np.array([1.0, 2.0, 3.0])
    g = st.grad(guarded.written_then_rebound)(x)
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0])              # the caller's array as it was
    np.testing.assert_allclose(g, [72.0, 16.0, 24.0])           # 8 * x * [9, 1, 1]


def test_an_entry_is_named_for_the_installation_that_built_it(monkeypatch):
    from srctrans.persist import entries, fingerprint
    name = entries.entry_name(guarded.mask_entries, ("reverse", ("x",)))
    assert name is not None
    monkeypatch.setattr(fingerprint, "_installation", ["another installation"])
    assert entries.entry_name(guarded.mask_entries, ("reverse", ("x",))) != name


def test_a_method_of_a_module_not_imported_is_not_located():
    from srctrans.persist import fingerprint
    assert fingerprint.locate("no_such_module_here", "Model.__init__") is None
    assert fingerprint.locate(__name__, "test_a_method_of_a_module_not_imported_is_not_located."
                              "<locals>.inner") is None
    assert fingerprint.locate("numpy", "linalg.norm") is np.linalg.norm


def test_the_installation_digest_follows_srctrans_files(monkeypatch):
    """An entry built by another srctrans (a file of it changed since) is not the same entry:
    the installation digest holds every source file's size and modification time."""
    from srctrans.persist import fingerprint
    monkeypatch.setattr(fingerprint, "_installation", [])
    first = fingerprint.of_installation()
    real_stat = os.stat

    def edited(path, *args, **kwargs):
        info = real_stat(path, *args, **kwargs)
        if str(path).endswith(os.path.join("srctrans", "api.py")):
            return os.stat_result((info.st_mode, info.st_ino, info.st_dev, info.st_nlink,
                                   info.st_uid, info.st_gid, info.st_size + 1, 0, 0, 0))
        return info
    monkeypatch.setattr(fingerprint, "_installation", [])
    monkeypatch.setattr(os, "stat", edited)
    assert fingerprint.of_installation() != first


def test_a_package_without_a_version_attribute_is_versioned_by_its_metadata(monkeypatch):
    pytest.importorskip("iniconfig")
    import iniconfig
    from srctrans.persist import fingerprint
    assert getattr(iniconfig, "__version__", None) is None
    monkeypatch.setattr(fingerprint, "_versions", {})
    import importlib.metadata
    assert fingerprint._package_version("iniconfig.x") == importlib.metadata.version("iniconfig")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files by /proc")
def test_reading_entries_leaves_no_file_open(tmp_path):
    from srctrans.persist import directory
    assert directory.write(str(tmp_path), "entry", "text")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        directory.read(str(tmp_path), "entry")
    assert len(os.listdir("/proc/self/fd")) <= before + 1


def scaled_helper(x, scale=1.0):       # two returns: built as a callee, not inlined
    if scale > 2.0:
        return x
    return np.sin(x) * scale


def calls_scaled_helper(x):
    return np.sum(scaled_helper(x) * x)


def test_a_callees_new_defaults_after_warm_up_give_the_new_derivative(monkeypatch):
    """The short path's guard tests a callee's defaults as its own (written out)."""
    gradient = st.grad(calls_scaled_helper)
    for _ in range(3):                                 # generic, specialised, short path
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(scaled_helper, "__defaults__", (2.0,))
    np.testing.assert_allclose(gradient(X), 2.0 * (np.cos(X) * X + np.sin(X)))
