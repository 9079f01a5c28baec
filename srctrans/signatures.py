"""Reading the signatures of the live functions the API is given."""

import inspect


def positional_names(fn):
    """The names of ``fn``'s parameters that a positional argument can fill, in order."""
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
