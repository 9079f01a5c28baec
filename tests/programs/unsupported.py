"""One function per rejected construct (test_errors.py).

The line each error must point at carries ``# marker: NAME``.
"""

import math

import numpy as np


def uses_try(x):
    try:  # marker: try
        y = x * 2.0
    except ValueError:
        y = x
    return y


def uses_with(x, ctx):
    with ctx:  # marker: with
        y = x * 2.0
    return y


def uses_yield(x):
    yield x * 2.0  # marker: yield


async def uses_await(x):  # marker: async
    y = await x
    return y


COUNTER = 0


def uses_global(x):
    global COUNTER  # marker: global
    return x * 2.0


def make_nonlocal():
    total = 0.0

    def uses_nonlocal(x):
        nonlocal total  # marker: nonlocal
        return x * total
    return uses_nonlocal


def uses_del(x):
    y = x * 2.0
    del y  # marker: del
    y = x * 3.0                 # read again after the del: not a release
    return y


def del_in_a_loop_of_a_name_it_reads(x):
    y = x * 2.0
    for i in range(3):
        x = x + y
        del y  # marker: release-in-loop
    return x


def del_twice(x):
    y = x * 2.0
    if x[0] > 0.0:
        del y
    del y  # marker: released-twice
    return x


def uses_import(x):
    import math as m  # marker: import
    m = m.pi                      # the name is bound otherwise too: refused
    return x * m


def uses_from_import(x):
    from math import pi  # marker: from-import
    for pi in (pi, 2.0):          # the name is bound otherwise too: refused
        x = x * pi
    return x


def calls_remainder(x):
    return x * math.remainder(x, 0.3)  # marker: remainder


vectorized_square = np.vectorize(lambda v: v * v)


def calls_vectorize(x):
    return vectorized_square(x) + x  # marker: vectorize


def calls_lambda_helper(x):
    return lambda_helper(x)  # marker: lambda-call


lambda_helper = lambda v: v * v  # noqa: E731


def recursive(x, n):
    return recursive(x * 2.0, n) + x  # marker: recursion


def mutual_a(x):
    return mutual_b(x) * 2.0  # marker: mutual-a


def mutual_b(x):
    return mutual_a(x) + 1.0  # marker: mutual-b


def loops_over_items(x):
    total = 0.0
    for value in iter(x):  # marker: for-items
        total = total + value
    return total


def writes_subscript(x):
    # differentiated itself, this write is supported; a caller would see it: refused there
    x[0] = 2.0  # marker: subscript-write
    return x * 1.0


def calls_writing_helper(x):
    return writes_subscript(x) * 2.0  # marker: writing-helper


def del_of_a_name_a_local_function_reads(x):
    y = x * 2.0

    def later():
        return y + 1.0

    del y  # marker: released-before-closure
    return later()
