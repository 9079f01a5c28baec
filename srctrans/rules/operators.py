"""Python operators as NumPy functions: ``a @ b`` is differentiated as ``np.matmul(a, b)``."""

import gast
import numpy as np

_PRIMALS = {
    gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
    gast.Div: np.true_divide, gast.Pow: np.power, gast.MatMult: np.matmul,
    gast.FloorDiv: np.floor_divide, gast.Mod: np.remainder,
    gast.USub: np.negative, gast.UAdd: np.positive,
    # logical and bitwise operators: their results are constants (rules/constants.py)
    gast.Not: np.logical_not, gast.Invert: np.invert, gast.BitAnd: np.bitwise_and,
    gast.BitOr: np.bitwise_or, gast.BitXor: np.bitwise_xor, gast.LShift: np.left_shift,
    gast.RShift: np.right_shift,
}


def operator_primal(op):
    """The NumPy function a gast operator node stands for, or None."""
    return _PRIMALS.get(type(op))
