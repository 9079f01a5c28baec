"""The held-out cases (tests/corpus/held_out*.py): each gives the function, its arguments, the
arguments to differentiate and its hand gradient's value, as test_corpus's cases do.
test_corpus checks them against their hand gradients and finite differences;
benchmarks/bench_real.py times them in a table of their own, out of the corpus's targets."""

import numpy as np

from corpus import held_out, held_out_losses, held_out_operations

R = np.random.default_rng(48)


def held_out_attention():
    args = (R.standard_normal((6, 4)), R.standard_normal((7, 4)), R.standard_normal((7, 3)),
            R.standard_normal((6, 3)))
    return held_out.attention, args, (0, 1, 2), held_out.attention_hand(*args)


def held_out_mlp_layers():
    layers = [{"W": R.standard_normal((3, 5)), "b": R.standard_normal(5)},
              {"W": R.standard_normal((5, 2)), "b": R.standard_normal(2)}]
    args = (layers, R.standard_normal((8, 3)), R.standard_normal((8, 2)))
    return held_out.mlp_layers, args, 0, held_out.mlp_layers_hand(*args)


def held_out_springs():
    args = (R.standard_normal((10, 2)), 0.8)
    return held_out.springs, args, 0, held_out.springs_hand(*args)


def held_out_bce():
    X, y = R.standard_normal((20, 3)), (R.random(20) > 0.5).astype(float)
    args = (R.standard_normal(3), 0.1, X, y)
    return held_out.bce, args, (0, 1), held_out.bce_hand(*args)


def held_out_softmax_ce():
    W, b = R.standard_normal((3, 4)), R.standard_normal(4)
    args = ({"W": W, "b": b}, R.standard_normal((20, 3)), R.integers(0, 4, 20))
    return held_out.softmax_ce, args, 0, held_out.softmax_ce_hand(*args)


def held_out_gauss_nll():
    A = R.standard_normal((3, 3))
    L = np.linalg.cholesky(A @ A.T + 3 * np.eye(3))
    args = (R.standard_normal(3), R.standard_normal((10, 3)), L)
    return held_out.gauss_nll, args, 0, held_out.gauss_nll_hand(*args)


def held_out_net_zip():
    net = held_out.Net([3, 4, 4, 2])
    weights = [R.standard_normal((3, 4)), R.standard_normal((4, 4)), R.standard_normal((4, 2))]
    biases = [R.standard_normal(4), R.standard_normal(4), R.standard_normal(2)]
    args = (weights, biases, R.standard_normal((8, 3)), R.standard_normal((8, 2)))
    return net.loss, args, (0, 1), net.loss_hand(*args)


def held_out_huber_where():
    args = (R.standard_normal(3), R.standard_normal((20, 3)), R.standard_normal(20), 0.5)
    return held_out.huber, args, 0, held_out.huber_hand(*args)


def held_out_wls():
    args = (R.standard_normal(3), R.standard_normal((20, 3)), R.standard_normal(20), R.random(20))
    return held_out.wls, args, 0, held_out.wls_hand(*args)


def held_out_chain():
    args = (R.standard_normal((10, 3)), 2.0)
    return held_out.chain, args, 0, held_out.chain_hand(*args)


def held_out_poisson_attr():
    model = held_out.Poisson(R.standard_normal((20, 3)) * 0.3, R.poisson(2.0, 20).astype(float))
    beta = R.standard_normal(3) * 0.3
    return model.nll, (beta,), 0, model.nll_hand(beta)


def held_out_mixture():
    args = (R.standard_normal((3, 2)), R.standard_normal((10, 2)), 0.8)
    return held_out.mixture, args, 0, held_out.mixture_hand(*args)


def _case(module, name, args, wrt=0):
    """A case of a function of ``module`` and its ``NAME_hand``, on ``args``."""
    return (getattr(module, name), args, wrt,
            getattr(module, name + "_hand")(*args))


def _operations():
    o = held_out_operations
    X = R.standard_normal((20, 3))
    square = R.standard_normal((4, 4)) + 4 * np.eye(4)
    return {
        "take_ce": _case(o, "take_ce", (R.standard_normal((3, 4)), X, R.integers(0, 4, 20))),
        "rbf_quad": _case(o, "rbf_quad", (R.standard_normal((8, 2)), R.standard_normal(8), 0.5)),
        "smooth_conv": _case(o, "smooth_conv", (R.standard_normal(30), np.array([0.25, 0.5, 0.25]),
                                                 R.standard_normal(30))),
        "pairwise": _case(o, "pairwise", (R.standard_normal((6, 3)), R.standard_normal((5, 3)))),
        "relu_mse": _case(o, "relu_mse", (R.standard_normal((3, 8)), R.standard_normal((8, 2)), X,
                                           R.standard_normal((20, 2)),
                                           (R.random((20, 8)) > 0.2) / 0.8), (0, 1)),
        "poly_fit": _case(o, "poly_fit", (R.standard_normal(4), R.standard_normal(30),
                                           R.standard_normal(30))),
        "clipped_bce": _case(o, "clipped_bce", (R.standard_normal(3), X,
                                                 (R.random(20) > 0.5).astype(float))),
        "trace_inv": _case(o, "trace_inv", (square, R.standard_normal((4, 4)))),
        "pooled": _case(o, "pooled", (R.standard_normal((5, 3)), R.standard_normal((3, 6))), 1),
        "padded_conv": _case(o, "padded_conv", (R.standard_normal(20), R.standard_normal(3)), 1),
        "tiled": _case(o, "tiled", (R.standard_normal(4), R.standard_normal((3, 4)))),
        "trimmed": _case(o, "trimmed", (R.standard_normal(20),)),
        "embed": _case(o, "embed", (R.standard_normal((10, 4)), np.array([1, 3, 3, 7]),
                                     R.standard_normal(4))),
        "masked": _case(o, "masked", (R.standard_normal(20), R.standard_normal(20))),
        "rolled": _case(o, "rolled", (R.standard_normal(20), R.standard_normal(3))),
        "logdet": _case(o, "logdet", (R.standard_normal((4, 3)),)),
        "angles": _case(o, "angles", (R.standard_normal((10, 2)),)),
        "tri": _case(o, "tri", (R.standard_normal((4, 4)),)),
        "moved": _case(o, "moved", (R.standard_normal((3, 4, 5)),)),
        "interp": _case(o, "interp_loss", (R.standard_normal(8), R.random(20))),
        "maxpool": _case(o, "maxpool", (R.standard_normal(20),)),
    }


def _losses():
    s = held_out_losses
    X, y = R.standard_normal((30, 4)), np.sign(R.standard_normal(30))
    return {
        "hinge": _case(s, "hinge", (R.standard_normal(4), X, y, 0.5)),
        "kl": _case(s, "kl", (R.standard_normal(6), R.random(6) / 3 + 0.05)),
        "focal": _case(s, "focal", (R.standard_normal(4), X, (y > 0).astype(float), 2.0)),
        "logcosh": _case(s, "logcosh", (R.standard_normal(4), X, R.standard_normal(30))),
        "logistic_lae": _case(s, "logistic_lae", (R.standard_normal(4), X, y)),
        "triplet": _case(s, "triplet", (R.standard_normal((8, 3)), R.standard_normal((8, 3)),
                                         R.standard_normal((8, 3)), 1.0)),
        "smooth_l1": _case(s, "smooth_l1", (R.standard_normal(4), X, R.standard_normal(30) * 2)),
        "batched": _case(s, "batched", (R.standard_normal((4, 3)) * 0.5,
                                         R.standard_normal((5, 6, 4)))),
    }


def _named(name, table):
    def build():
        return table()[name]
    build.__name__ = "held_out_" + name
    return build


HELD_OUT = [held_out_attention, held_out_mlp_layers, held_out_springs, held_out_bce,
            held_out_softmax_ce, held_out_gauss_nll, held_out_net_zip, held_out_huber_where,
            held_out_wls, held_out_chain, held_out_poisson_attr, held_out_mixture] + \
    [_named(name, _operations) for name in (
        "take_ce", "rbf_quad", "smooth_conv", "pairwise", "relu_mse", "poly_fit", "clipped_bce",
        "trace_inv", "pooled", "padded_conv", "tiled", "trimmed", "embed", "masked", "rolled",
        "logdet", "angles", "tri", "moved", "interp", "maxpool")] + \
    [_named(name, _losses) for name in ("hinge", "kl", "focal", "logcosh", "logistic_lae",
                                        "triplet", "smooth_l1", "batched")]
