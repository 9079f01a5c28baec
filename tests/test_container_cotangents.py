"""A container parameter read by constant keys gets its cotangent key by key, made once
(optimise/container_cotangents.py): the fused gradient sums each key's terms and builds the
container at the end, where it made the whole container (zeros but at one key) for every
read and added them. The gradients are the same, to second order and under st.vmap."""

import collections
import textwrap
import warnings

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(47)
Params = collections.namedtuple("Params", "mu log_sigma")


def kl_of_dicts(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"] + (var_q + (q["mu"] - p["mu"]) ** 2)
                  / (2 * var_p) - 0.5) * q["scale"] + q["count"]


def ridge_of_a_list(params, X, y):
    w, b = params[0], params[1]
    r = X @ w + b - y
    return np.sum(r ** 2) + 0.1 * np.sum(params[0] ** 2) + params[2] * np.sum(w)


def of_a_named_tuple(p, x):
    return np.sum(np.tanh(p.mu * x) * np.exp(p.log_sigma)) + np.sum(p.mu ** 2) + np.sum(p.log_sigma ** 3)


def ridge_of_a_copied_dict(p, X, y):
    p = dict(p, w_eff=p["w"] * p["scale"])          # the copy passes p's other entries back whole
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + 0.1 * p["w"] @ p["w"]


def copied_dict_args():
    p = {"w": R.standard_normal(3), "scale": 1.3, "b": 0.2, "name": "ridge"}
    return p, R.standard_normal((7, 3)), R.standard_normal(7)


def q_and_p():
    q = {"mu": R.standard_normal(3), "log_sigma": R.standard_normal(3) * 0.3, "scale": 1.5,
         "count": 2, "name": "posterior"}
    p = {"mu": R.standard_normal(3), "log_sigma": R.standard_normal(3) * 0.3}
    return q, p


def list_args():
    return [R.standard_normal(3), 0.2, 0.7], R.standard_normal((6, 3)), R.standard_normal(6)


def net_of_lists(weights, biases, X, y):
    a = X
    for W, b in zip(weights[:-1], biases[:-1]):       # a network's hidden layers, then its last
        a = np.tanh(a @ W + b)
    return np.sum((a @ weights[-1] + biases[-1] - y) ** 2)


def net_args():
    sizes = [3, 4, 4, 2]
    return ([R.standard_normal((m, n)) for m, n in zip(sizes, sizes[1:])],
            tuple(R.standard_normal(n) for n in sizes[1:]), R.standard_normal((5, 3)),
            R.standard_normal((5, 2)))


def ends_of_a_list(xs, scale):
    # -1 and 2 pick one entry of three; a slice with a step, and one from the end
    total = np.sum(xs[-1] * xs[2]) + scale * np.sum(xs[0] ** 2)
    for x in xs[::-2]:
        total = total + np.sum(np.sin(x))
    return total + np.sum(np.stack(xs[-2:]) ** 3)


def ends_args():
    return [R.standard_normal(3), R.standard_normal(3), R.standard_normal(3)], 0.7


def ends_of_a_dict(d):
    # a dict keyed -1: what reads from a list's end are summed like must hold for it too
    return np.sum(d[-1] ** 2 * d["b"]) + np.sum(np.cos(d[-1]))


def ends_of_a_named_tuple(p, x):
    return np.sum(np.tanh(p[-1] * x)) + np.sum(p[-2] ** 2 * p[1])


CASES = [(kl_of_dicts, q_and_p), (ridge_of_a_list, list_args),
         (net_of_lists, net_args), (ends_of_a_list, ends_args),
         (ends_of_a_dict, lambda: ({-1: R.standard_normal(3), "b": R.standard_normal(3)},)),
         (ends_of_a_named_tuple, lambda: (Params(R.standard_normal(3), R.standard_normal(3)),
                                          R.standard_normal(3))),
         (ridge_of_a_copied_dict, copied_dict_args),
         (of_a_named_tuple, lambda: (Params(R.standard_normal(3), R.standard_normal(3) * 0.2),
                                     R.standard_normal(3)))]


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_fused_gradient_builds_the_container_once(f, make):
    args = make()
    source = st.source(f, args=args)
    fused = source[source.index(f"def {f.__name__}_grad("):]
    assert any(f"rt.{made}(" in fused for made in
               ("container_cotangent", "attributes_cotangent", "picks_cotangent")) and \
        "getitem_grad(" not in fused and "getattr_grad(" not in fused, fused


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_gradient_is_unchanged_to_second_order(f, make):
    args = make()
    gradient = st.grad(f)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
    want = st.grad(f, optimize=False)(*args)
    for a, b in zip(_leaves(got), _leaves(want)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    st.check_grads(f, args, order=2, rtol=1e-4)


def test_entries_with_no_read_and_int_entries_get_zeros_or_none_as_before():
    q, p = q_and_p()
    gradient = st.grad(kl_of_dicts)
    for _ in range(3):
        got = gradient(q, p)
    assert set(got) == set(q)
    assert got["count"] is None and got["name"] is None
    assert isinstance(got["scale"], float) or np.ndim(got["scale"]) == 0


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0)])
def test_under_vmap_the_container_cotangent_is_batched(in_axes):
    q, p = q_and_p()
    q = {k: v for k, v in q.items() if k in ("mu", "log_sigma", "scale")}
    batch = [({k: v * s for k, v in q.items()}, {k: v * s for k, v in p.items()})
             for s in (1.0, 0.9, 1.2)]
    args = tuple(
        (({k: np.stack([np.asarray(b[i][k], dtype=float) for b in batch]) for k in batch[0][i]})
         if ax == 0 else batch[0][i]) for i, ax in enumerate(in_axes))
    members = [tuple(b[i] if ax == 0 else batch[0][i] for i, ax in enumerate(in_axes))
               for b in batch]
    gradient = st.grad(kl_without_count)
    with warnings.catch_warnings():
        warnings.simplefilter("error", st.BatchingWarning)
        got = st.vmap(gradient, in_axes=in_axes)(*args)
    for i, member in enumerate(members):
        expected = gradient(*member)
        for key in expected:
            np.testing.assert_allclose(got[key][i], expected[key], rtol=1e-12)


def kl_without_count(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"] + (var_q + (q["mu"] - p["mu"]) ** 2)
                  / (2 * var_p) - 0.5) * q["scale"]


def _leaves(value):
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=str)]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


class Regression:
    def __init__(self, w, b, n):
        self.w, self.b, self.n = w, b, n

    def loss(self, X, y):
        r = X @ self.w + self.b - y
        return np.sum(r ** 2) / self.n + 0.1 * np.sum(self.w ** 2) + 0.01 * self.b ** 2


def test_a_method_gets_its_objects_cotangent_once():
    model = Regression(R.standard_normal(3), 0.3, 6)
    X, y = R.standard_normal((6, 3)), R.standard_normal(6)
    gradient = st.grad(Regression.loss)
    for _ in range(3):
        got = gradient(model, X, y)
    want = st.grad(Regression.loss, optimize=False)(model, X, y)
    assert set(got) == set(want) == {"w", "b"}                 # (n, an int, has none)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12)
    source = st.source(Regression.loss, args=(model, X, y))
    fused = source[source.index("def Regression_loss_grad("):]
    assert "rt.attributes_cotangent(" in fused and "getattr_grad(" not in fused, fused


@pytest.mark.parametrize("in_axes", [(None, 0, 0), (0, 0, 0)])
def test_under_vmap_the_objects_cotangent_is_batched(in_axes):
    X, y = R.standard_normal((4, 6, 3)), R.standard_normal((4, 6))
    w, b = R.standard_normal((4, 3)), R.standard_normal(4)
    members = [Regression(w[i] if in_axes[0] == 0 else w[0], b[i] if in_axes[0] == 0 else b[0],
                          6.0) for i in range(4)]
    model = Regression(w, b, np.full(4, 6.0)) if in_axes[0] == 0 else members[0]
    gradient = st.grad(Regression.loss)
    with warnings.catch_warnings():      # (a batched object's attributes: read per member)
        warnings.simplefilter("error" if in_axes[0] is None else "ignore", st.BatchingWarning)
        got = st.vmap(gradient, in_axes=in_axes)(model, X, y)
    for i, member in enumerate(members):
        expected = gradient(member, X[i], y[i])
        for key in expected:
            np.testing.assert_allclose(got[key][i], expected[key], rtol=1e-12)


def negative_sampling(emb, center, rows):
    v = emb["in"][center]
    loss = -np.log(1.0 / (1.0 + np.exp(-(emb["out"][0] @ v))))
    for k in rows:
        loss = loss - np.log(1.0 / (1.0 + np.exp(emb["out"][k] @ v)))
        if k > 2:
            loss = loss + 0.1 * np.sum(emb["in"][k] ** 2)
    return loss * emb["scale"]


def test_reads_in_loops_and_branches_sum_key_by_key_from_the_containers_zeros():
    emb = {"in": R.standard_normal((5, 3)), "out": R.standard_normal((5, 3)), "scale": 1.3,
           "name": "embeddings"}
    args = (emb, 1, [0, 4, 2, 4])
    fused = st.source(negative_sampling, args=args).split("def negative_sampling_grad")[1]
    assert "rt.container_cotangent(" in fused and "rt.add(demb," not in fused
    g = st.grad(negative_sampling)
    for _ in range(3):
        got = g(*args)
        assert got["name"] is None
        for key in ("in", "out"):
            numeric = np.zeros_like(emb[key])
            for i in np.ndindex(emb[key].shape):
                plus, minus = dict(emb), dict(emb)
                step = np.zeros_like(emb[key])
                step[i] = 1e-6
                plus[key], minus[key] = emb[key] + step, emb[key] - step
                numeric[i] = (negative_sampling(plus, 1, args[2])
                              - negative_sampling(minus, 1, args[2])) / 2e-6
            np.testing.assert_allclose(got[key], numeric, rtol=1e-6, atol=1e-9)
        expected_scale = negative_sampling(emb, 1, args[2]) / emb["scale"]
        np.testing.assert_allclose(got["scale"], expected_scale, rtol=1e-12)


def two_dicts_read_last_in_one_branch(p, q):
    if np.sum(q["b"]) > 0.0:
        t = p["b"] * q["b"]
    else:
        t = p["b"] * 2.0 - q["b"]
    return np.sum((t + p["a"] * q["a"]) ** 2)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_two_containers_whose_last_reads_share_a_statement_are_both_made(sign):
    """Both dicts' last reads are in the same ``if``: each container is made after it (the
    pass once kept one of the two, and the backward pass raised NameError)."""
    p = {"a": R.standard_normal(3), "b": R.standard_normal(3)}
    q = {"a": R.standard_normal(3), "b": sign * (np.abs(R.standard_normal(3)) + 0.1)}
    gradient = st.grad(two_dicts_read_last_in_one_branch, wrt=(0, 1))
    want = st.grad(two_dicts_read_last_in_one_branch, wrt=(0, 1), optimize=False)(p, q)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(p, q)
        for got_dict, want_dict in zip(got, want):
            for a, b in zip(_leaves(got_dict), _leaves(want_dict)):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


State = collections.namedtuple("State", "h steps")


def recurrent_named_tuple(xs, h0, W, U):
    state = State(h0, 0)
    for x in xs:
        z = np.tanh(x @ W + state.h @ U)
        state = State(0.5 * state.h + z * state.h, state.steps + 1)
    return np.sum(state.h) + state.steps


def recurrent_dict(xs, h0, W, U):
    state = {"h": h0, "c": h0 * 0.5, "n": 0}
    for x in xs:
        c = state["c"] * np.tanh(x @ W) + state["h"] @ U
        state = {"h": np.tanh(c) + state["h"], "c": c, "n": state["n"] + 1}
    return np.sum(state["h"] * state["c"])


def recurrent_args():
    return (R.standard_normal((4, 3)), R.standard_normal(2), R.standard_normal((3, 2)),
            R.standard_normal((2, 2)) * 0.5)


@pytest.mark.parametrize("f", [recurrent_named_tuple, recurrent_dict])
def test_a_steps_reads_of_its_state_make_the_states_cotangent_once(f):
    """A loop step reading a record's (or dict's) entries several times sums them by key and
    makes the state's cotangent once (sum_chains_in_blocks), where it made one per read and
    added them; the gradient is unchanged, to second order."""
    args = recurrent_args()
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad(")[1]
    step = fused[fused.index("for _iteration"):]
    assert step.count("_cotangent(") == 1 and "getitem_grad(" not in step \
        and "getattr_grad(" not in step, step
    wrt = (0, 1, 2, 3)
    gradient = st.grad(f, wrt=wrt)
    want = st.grad(f, wrt=wrt, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        for a, b in zip(gradient(*args), want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    st.check_grads(f, args, order=2, wrt=wrt, rtol=1e-5, atol=1e-7)


def _chains_summed(text):
    import ast
    import itertools

    import gast

    from srctrans.optimise.container_cotangents import sum_chains_in_blocks
    counter = itertools.count(1)
    body = gast.parse(textwrap.dedent(text)).body
    body = sum_chains_in_blocks(body, "rt", lambda base: f"{base}_{next(counter)}")
    return "\n".join(ast.unparse(gast.gast_to_ast(s)) for s in body)


def test_a_run_of_reads_in_a_step_is_summed_unless_its_cotangent_or_container_changes():
    summed = _chains_summed("""
        for i in r:
            d = rt.getattr_grad(a, s, 'h')
            u = a * 2
            d = rt.add(d, rt.getattr_grad(b, s, 'c'))
            d = rt.add(d, rt.getattr_grad(u, s, 'h'))
            use(d)
        """)
    assert summed == textwrap.dedent("""\
        for i in r:
            d_entry_1 = a
            u = a * 2
            d_entry_2 = b
            d_entry_1 = rt.add(d_entry_1, u)
            d = rt.attributes_cotangent({'h': d_entry_1, 'c': d_entry_2}, s)
            use(d)""")
    for between in ("e = d", "s = other", "d = other"):     # reads d, changes s, or d
        text = f"""
            for i in r:
                d = rt.getattr_grad(a, s, 'h')
                {between}
                d = rt.add(d, rt.getattr_grad(b, s, 'c'))
            """
        assert "attributes_cotangent" not in _chains_summed(text), between


def nested_reads(xs, w):
    return np.sum(xs[0][1] * w) + np.sum(xs[1][0] * xs[0][0] * w)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None)])
def test_under_vmap_a_cotangent_of_nested_containers_keeps_every_entry(in_axes):
    """A list holding a list and a tuple: st.vmap of its gradient gave a list of the first
    entry only (the batch flags of the one-entry tuple the fused gradient returns were read
    as the list's), and batched containers of containers raised."""
    xs = [[R.standard_normal(3), R.standard_normal(3)], (R.standard_normal(3),)]
    W = R.standard_normal((4, 3))
    batched_xs = [[np.stack([xs[0][0] * s for s in (1, 2, 3, 4)]),
                   np.stack([xs[0][1] + s for s in (1, 2, 3, 4)])],
                  (np.stack([xs[1][0] - s for s in (1, 2, 3, 4)]),)]
    gradient = st.grad(nested_reads)
    members = [(xs, w) for w in W] if in_axes == (None, 0) else \
        [([[batched_xs[0][0][i], batched_xs[0][1][i]], (batched_xs[1][0][i],)], W[0])
         for i in range(4)]
    for _ in range(3):                                    # generic, specialised, short path
        gradient(*members[0])
    args = (xs, W) if in_axes == (None, 0) else (batched_xs, W[0])
    got = st.vmap(gradient, in_axes=in_axes)(*args)
    assert isinstance(got, list) and len(got) == 2 and len(got[0]) == 2 \
        and isinstance(got[1], tuple) and len(got[1]) == 1
    for i, member in enumerate(members):
        want = gradient(*member)
        for a, b in [(got[0][0], want[0][0]), (got[0][1], want[0][1]), (got[1][0], want[1][0])]:
            np.testing.assert_allclose(a[i], b, rtol=1e-12)


@pytest.mark.parametrize("g", [0.5, np.float64(-0.0), np.float32(0.25), None, np.ones(2)])
@pytest.mark.parametrize("entry", [1.3, "text", 3, np.ones(2, np.float32), np.ones(2)])
def test_a_dicts_entry_cotangent_is_the_general_rules(entry, g):
    """rt.container_cotangent's shortcuts for a dict's entries (an array of the cotangent's
    kind, a Python float, text) give what adding the cotangent to the entry's zeros gives."""
    from srctrans import runtime as rt
    from srctrans.runtime.container_cotangents import _entry_cotangent
    if isinstance(entry, str) and g is not None:
        return                                        # (text has no cotangent to add to)
    got = rt.container_cotangent({"k": g}, {"k": entry, "other": 2.0})
    want = _entry_cotangent(g, entry)
    assert type(got["k"]) is type(want) and got["other"] == 0.0
    if want is not None:
        assert np.shape(got["k"]) == np.shape(want) and np.result_type(got["k"]) == np.result_type(want)
        np.testing.assert_array_equal(np.signbit(got["k"]), np.signbit(want))
        np.testing.assert_array_equal(got["k"], want)


def test_an_objects_attribute_checks_are_kept_per_class_until_one_is_registered():
    """``rt.attributes_cotangent`` checks a class's attributes once (none is a property, the
    class is no container); a property asked for later is still refused, and a class
    registered afterwards gets cotangents of its own kind."""
    from srctrans import runtime as rt

    class Later:
        def __init__(self):
            self.w, self.b, self.n = np.ones(2), np.ones(3), 3

        @property
        def scaled(self):
            return 2 * self.w

    obj, g = Later(), np.arange(2.0)
    for _ in range(2):
        made = rt.attributes_cotangent({"w": g, "n": 1.0}, obj)
        assert made == {"w": g} and made["w"] is g
    with pytest.raises(st.SrcTransError, match="property"):
        rt.attributes_cotangent({"w": g, "scaled": g}, obj)
    st.register_pytree(Later, ["w", "b"])
    made = rt.attributes_cotangent({"w": g}, obj)
    assert type(made) is Later and made.w is not obj.w
    np.testing.assert_array_equal(made.w, g)
    np.testing.assert_array_equal(made.b, np.zeros(3))


def test_an_array_read_by_constant_keys_gets_the_placements_sum():
    """Generated code may read an array by constant keys where it cannot tell it from a list
    (a method's callee gave it): rt.container_cotangent and rt.picks_cotangent then give what
    adding getitem_grad of each gives (they raised on an array before)."""
    rt = st.runtime
    x, a, b = R.standard_normal((4, 3)), R.standard_normal(3), R.standard_normal(3)
    want = rt.add(rt.getitem_grad(a, x, 0), rt.getitem_grad(b, x, -1))
    np.testing.assert_array_equal(rt.container_cotangent({0: a, 3: b}, x), want)
    np.testing.assert_array_equal(rt.picks_cotangent((a, b), (0, -1), x), want)
    c = R.standard_normal((4, 3))
    got = rt.container_cotangent_transpose(c, {0: a, 3: b}, x)
    np.testing.assert_array_equal(got[0], c[0])
    np.testing.assert_array_equal(got[3], c[3])


def rows_filled_then_masked(x):
    v = np.zeros_like(x)
    v[0] = np.sin(x[0])
    for i in range(4):
        v[i] += np.cos(x[i])
    return np.sum(np.log(1.0 + (v[v > -0.3] + 0.5) ** 2)) * 3.0 + np.mean(np.sin(x))


def test_an_array_read_by_its_rows_in_a_loop_gets_its_rows_cotangents():
    """A loop reading ``x[i]`` row by row gives the fused gradient the rows' cotangents, which
    rt.sequence_cotangent places in an array's zeros where the rows came from an array (it
    raised: the array is no list; fuzz seed 20261230801, program 77)."""
    from srctrans import runtime as rt
    x = R.standard_normal((4, 2, 3))
    rows = [None, R.standard_normal((2, 3)), None, R.standard_normal((2, 3))]
    want = np.zeros_like(x)
    want[1], want[3] = rows[1], rows[3]
    np.testing.assert_array_equal(rt.sequence_cotangent(rows, x), want)
    gradient = st.grad(rows_filled_then_masked)
    for y in (x, x, x, -x):
        gradient(y)
    st.check_grads(rows_filled_then_masked, (x,), order=2)
