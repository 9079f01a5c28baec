"""Per-call overhead of a gradient: a method's or a dict's against a plain function's.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_overhead.py

On a 1-element problem (the gradient's own work is negligible), times the repeated call of
``st.grad`` of a plain function of arrays, of a bound method (with respect to an argument,
and ``wrt="self"``: the object's attributes), of a function of a dict of arrays and of a
list of dicts, interleaved, best of the rounds, and prints each one's cost and what it adds
to the plain function's (issue 32 asks at most 3 microseconds).
"""

import argparse
import os
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np                                                   # noqa: E402

import srctrans as st                                                # noqa: E402


def plain(w, x):
    return np.sum(np.tanh(w * x))


class Model:
    def __init__(self):
        self.w = np.ones(1)

    def loss(self, x):
        return np.sum(np.tanh(self.w * x))


def of_dict(params, x):
    return np.sum(np.tanh(params["w"] * x))


def of_layers(layers, x):
    for layer in layers:
        x = np.tanh(layer["w"] * x)
    return np.sum(x)


def cases():
    x, model = np.ones(1), Model()
    return {
        "plain function": (st.grad(plain), (np.ones(1), x)),
        "method, wrt x": (st.grad(model.loss), (x,)),
        "method, wrt self": (st.grad(model.loss, wrt="self"), (x,)),
        "dict of arrays": (st.grad(of_dict), ({"w": np.ones(1)}, x)),
        "list of 2 dicts": (st.grad(of_layers), ([{"w": np.ones(1)}, {"w": np.ones(1)}], x)),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args(argv)
    found = cases()
    for gradient, arguments in found.values():
        for _ in range(3):                      # generic, specialised, the short path made
            gradient(*arguments)
    best = dict.fromkeys(found, float("inf"))
    for _ in range(args.rounds):
        for name, (gradient, arguments) in found.items():
            seconds = timeit.timeit(lambda: gradient(*arguments), number=args.number)
            best[name] = min(best[name], seconds / args.number)
    base = best["plain function"]
    for name, seconds in best.items():
        print(f"{name:18} {seconds * 1e6:6.2f} us   +{(seconds - base) * 1e6:5.2f} us")


if __name__ == "__main__":
    main()
