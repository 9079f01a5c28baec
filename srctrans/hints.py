"""Type hints of the public API (the package ships ``py.typed``).

Arrays, numbers and containers of them pass through srctrans unchanged, so
values are ``Any``; what the hints pin down is the shape of each call.
"""

from typing import Any, Literal
from collections.abc import Callable

__all__ = ["Any", "Callable", "Function", "Wrt", "Unconnected", "Mode", "JacobianMode"]

Function = Callable[..., Any]
"""A Python function defined with ``def`` (or a bound method of one)."""

Wrt = int | str | tuple[int | str, ...]
"""The selected arguments: an index, a parameter name, or a tuple of them."""

Unconnected = Literal["none", "zero"]
"""What an argument the output does not depend on gets: None, or zeros."""

Mode = Literal["reverse", "forward"]
"""Which derivative: the adjoint (VJP) or the tangent (JVP)."""

JacobianMode = Literal["auto", "reverse", "forward"]
"""How a Jacobian is assembled: one pullback per output, one JVP per input, or the fewer."""
