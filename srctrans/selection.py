"""Which arguments a derivative is taken with respect to, and of which function.

* `Selection` -- ``wrt`` (indices, names, a tuple of them) resolved against a
  function's signature once, and the selected values found in each call;
* `check_differentiable` -- a selected value that cannot carry a derivative
  (None, a str, an int) is a ``NonDifferentiableError`` naming the argument;
* `unwrap` -- the plain function behind what the user passed (a bound method,
  a custom-gradient object, a derivative made by ``grad``).
"""

import inspect
import numbers
import types

import numpy as np

from srctrans import runtime
from srctrans.errors import NonDifferentiableError, UsageError
from srctrans.interface import API
from srctrans.parse.source import parse_function
from srctrans.runtime.containers import is_container
from srctrans.runtime.seeding import is_integer


class Selection:
    """Which parameters of a function are differentiated, and how to find their values.

    Attributes:
      names: the selected parameter names, in the order gradients are returned.
      single: True when ``wrt`` was one index or name (one gradient, not a tuple).
    """

    def __init__(self, fn, wrt):
        name = getattr(fn, "__qualname__", None) or \
            getattr(getattr(fn, "func", None), "__qualname__", repr(fn))
        parameters = list(inspect.signature(fn).parameters.values())
        positional = [p for p in parameters
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        by_name = {p.name: p for p in parameters}       # *rest and **options too, by name
        self.single = not isinstance(wrt, (tuple, list))
        items = [wrt] if self.single else list(wrt)
        if not items:
            raise UsageError("wrt selects no argument", hint="pass an index, a name, or a tuple of them")
        names = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (numbers.Integral, str)):
                raise UsageError(f"wrt entries must be argument indices or names, not {item!r}")
            if isinstance(item, str):
                if item not in by_name:
                    raise UsageError(f"{name} has no parameter named {item!r}",
                                     hint=f"choose one of {', '.join(by_name)}")
                names.append(item)
            else:
                if not -len(positional) <= item < len(positional):
                    starred = [p.name for p in parameters if p.kind == p.VAR_POSITIONAL]
                    raise UsageError(
                        f"wrt={item} but {name} has {len(positional)} positional "
                        f"parameter{'' if len(positional) == 1 else 's'}",
                        hint=f"select the extra positional arguments together by name: "
                             f"wrt={starred[0]!r} (their gradients come as a tuple)"
                        if starred else None)
                names.append(positional[item].name)
        if len(set(names)) != len(names):
            raise UsageError(f"wrt selects the same argument twice: {wrt!r}")
        self.names = tuple(names)
        position = {p.name: i for i, p in enumerate(positional)}
        self._starred = {p.name: p.kind for p in parameters
                         if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        self._named = {p.name for p in parameters} - set(self._starred)
        self._first_extra = len(positional)
        self.places = self._places = [(position.get(n), n, by_name[n].default) for n in names]
        self._indices = [position.get(n) for n in names]
        # how many positional arguments a call needs for every selected one to be positional
        self._all_positional = (max(self._indices) + 1 if None not in self._indices
                                else float("inf"))

    def values(self, args, kwargs):
        """The values of the selected arguments in one call."""
        if not kwargs and self._all_positional <= len(args):
            return [args[index] for index in self._indices]      # the common case
        values = []
        for index, name, default in self._places:
            kind = self._starred.get(name)
            if kind is inspect.Parameter.VAR_POSITIONAL:          # *rest: a tuple
                values.append(tuple(args[self._first_extra:]))
            elif kind is inspect.Parameter.VAR_KEYWORD:           # **options: a dict
                values.append({k: v for k, v in kwargs.items() if k not in self._named})
            elif index is not None and index < len(args):
                values.append(args[index])
            elif name in kwargs:
                values.append(kwargs[name])
            else:
                values.append(default)
        return values


def check_differentiable(value, name):
    if is_container(value):         # int and str fields are constants
        return
    if value is None or isinstance(value, (str, bytes)):
        raise NonDifferentiableError(
            f"argument {name!r} is selected for differentiation but is {type(value).__name__}",
            hint="select only arguments that hold floats or arrays of floats (wrt=...)")
    if is_integer(value):
        kind = type(value).__name__ if not isinstance(value, np.ndarray) else f"{value.dtype} array"
        article = "an" if kind[0] in "aeiou" else "a"
        raise NonDifferentiableError(
            f"argument {name!r} is selected for differentiation but is {article} {kind}",
            hint="pass a float (e.g. 2.0 or x.astype(float)), or leave it out of wrt: "
                 "unselected arguments are constants")


def selects_self(fn, wrt):
    """Whether ``wrt`` names a method's own object (its first parameter, usually ``self``)."""
    parameters = list(inspect.signature(fn).parameters)
    first = parameters[0] if parameters else None
    items = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    return first is not None and first in items


def unwrap(f):
    """(function, bound self or None) for a function or bound method.

    Raises NoSourceError for any other callable (a builtin, a C function, a
    callable object): srctrans differentiates functions defined with ``def``.
    """
    plain = API.plain_function(f)
    if plain is not None:
        return plain, None             # derivatives of derivatives: its generated code
    if isinstance(f, types.MethodType):
        f, bound_self = f.__func__, f.__self__
    else:
        bound_self = None
    if isinstance(f, runtime.CustomGradient):
        f = f.function                  # built as a call of the custom-gradient object
    if not isinstance(f, types.FunctionType):
        parse_function(f, shared=True)               # raises NoSourceError naming what f is
    return f, bound_self
