"""Python operators as NumPy functions: ``a @ b`` is differentiated as ``np.matmul(a, b)``."""

import gast
import numpy as np

_PRIMALS = {
    gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
    gast.Div: np.true_divide, gast.Pow: np.power, gast.MatMult: np.matmul,
    gast.FloorDiv: np.floor_divide, gast.Mod: np.mod,
    gast.USub: np.negative, gast.UAdd: np.positive,
}


def operator_primal(op):
    """The NumPy function a gast operator node stands for, or None."""
    return _PRIMALS.get(type(op))
