"""What the syntax table's examples (tests/syntax_rows.py) assert, in one place."""

import numpy as np
import pytest

import srctrans as st

X = np.array([0.5, -1.2, 2.0])                 # a vector most examples take
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])


def differentiates(f, *args, wrt=None, order=2):
    """Both modes agree with finite differences, to ``order`` (the row is supported)."""
    st.check_grads(f, args, wrt=wrt, order=order)


def refused(f, *args, text, error=st.UnsupportedSyntaxError, wrt=0, call=None):
    """The derivative is refused with ``error`` naming this file and saying ``text``
    (``call`` makes the call that should fail; default the gradient of ``f`` at ``args``)."""
    with pytest.raises(error) as info:
        (call or (lambda: st.grad(f, wrt=wrt)(*args)))()
    message = str(info.value)
    assert text in message, message
    assert f.__code__.co_filename.rsplit("/", 1)[-1] in message or error is st.CallError, message
    return message
