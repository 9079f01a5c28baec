"""What generated code raises when a value shows a construct srctrans does not support.

Raised while a derivative runs, as a srctrans ``UnsupportedSyntaxError``; the
error report then names the user's line the generated statement came from.
(srctrans is imported only here and only then: the runtime itself needs only NumPy.)
"""


def unsupported(construct, hint):
    """Raise ``UnsupportedSyntaxError`` for ``construct`` (what is not supported) with ``hint``
    (a ``NotImplementedError`` in a module ``st.export`` wrote, which runs without srctrans)."""
    try:
        from srctrans.errors import UnsupportedSyntaxError
    except ImportError:
        raise NotImplementedError(f"{construct} is not supported; {hint}") from None
    raise UnsupportedSyntaxError(f"{construct} is not supported", hint=hint)
