"""The errors generated code raises, as srctrans's own error classes when srctrans is there.

Raised while a derivative runs; the error report then names the user's line the
generated statement came from. srctrans is imported only here, and only when an
error is made: the runtime itself needs only NumPy, and a module ``st.export`` wrote
(which runs without srctrans) raises the built-in exception each class stands for.
"""

# srctrans's error class -> the built-in exception a module st.export wrote raises instead
_BUILT_IN = {"UnsupportedSyntaxError": NotImplementedError,
             "UnsupportedArrayError": NotImplementedError,
             "ShapeError": ValueError, "NonDifferentiableError": TypeError,
             "UsageError": TypeError}


def error(kind, message, hint=None):
    """An exception of srctrans's class ``kind`` (a name in ``srctrans.errors``) saying
    ``message`` with ``hint``; without srctrans, the built-in exception it stands for, its
    message ending with the hint."""
    try:
        from srctrans import errors
    except ImportError:
        return _BUILT_IN[kind](f"{message}; {hint}" if hint else message)
    return getattr(errors, kind)(message, hint=hint)


def unsupported(construct, hint):
    """Raise ``UnsupportedSyntaxError`` for ``construct`` (what is not supported) with ``hint``."""
    raise error("UnsupportedSyntaxError", f"{construct} is not supported", hint)
