"""What ``st.vmap`` runs for a pattern of batched arguments: the generated batched function
(:class:`Built`), or the function once per member (:class:`Looped`), and the one-time
warning that names what runs per member.

Requires: a batched build (``batch_pipeline.BatchBuild``) or any callable, and the moved
arguments: ``(value, flag)`` pairs, batch axes first (``batch_axes``).
Guarantees: ``run(moved, moved_kw, size)`` returns the batched output, batch axis first
(its parts unbatched where ``output_flag`` says); a batched function that meets members
whose results differ in shape, or a branch some members do not take that raises, falls
back to the loop, with the warning.
"""

import warnings

import numpy as np

from srctrans import batch_axes as axes_
from srctrans.runtime import batching as rt_batch


class BatchingWarning(UserWarning):
    """``st.vmap`` runs part of a function once per member of the batch: slower, not wrong."""


_warned: set = set()            # (function, what, where) warned of already
_quiet = [0]      # > 0 while srctrans batches its own derivatives (no warning: not the user's vmap)


def warn_per_member(fn, what, location=None):
    """Warn, once for ``fn`` and ``what``, that ``st.vmap`` runs ``what`` once per member."""
    if _quiet[0]:
        return
    key = (fn, what, str(location))
    if key in _warned:
        return
    _warned.add(key)
    where = f" ({location})" if location is not None else ""
    warnings.warn(f"st.vmap of {getattr(fn, '__qualname__', fn)} runs {what}{where} once per "
                  f"member of the batch: slower than batched code, never wrong",
                  BatchingWarning, stacklevel=4)


class Built:
    """The generated batched function for one pattern of batched arguments and ranks."""

    def __init__(self, build, fn, prefix, post):
        self.build, self.fn, self.prefix, self.post = build, fn, prefix, post
        # which parts of what ``post`` returns are batched (it may take an entry of the output)
        unwrap = getattr(post, "flag", None)
        self.output_flag = build.output_flag if unwrap is None else unwrap(build.output_flag)

    def run(self, moved, moved_kw, size):
        errors = np.geterr() if self.build.selects else None
        try:
            return self.post(self.build.function(*self.prefix, *[v for v, _ in moved],
                                                 **{k: v for k, (v, _) in moved_kw.items()}))
        except rt_batch.Ragged:         # a call run per member gave results of other shapes
            warn_per_member(self.fn, "a call whose members' results differ in shape", None)
            return Looped(self.fn, self.prefix, self.post).run(moved, moved_kw, size)
        except Exception as error:      # noqa: BLE001 -- a branch some members do not take
            if not self.build.selects:
                raise
            np.seterr(**errors)             # (the batched code turned warnings off there)
            warn_per_member(self.fn, f"code in a branch some members do not take, which raised "
                            f"{type(error).__name__} ({str(error).splitlines()[0][:80]}),")
            return Looped(self.fn, self.prefix, self.post).run(moved, moved_kw, size)


class Looped:
    """The fallback: ``f`` once per member, the results stacked."""

    output_flag = True              # each member's output, stacked

    def __init__(self, fn, prefix, post):
        self.fn, self.prefix, self.post = fn, prefix, post

    def run(self, moved, moved_kw, size):
        results = []
        for i in range(size):
            args = [member_of(v, i, f) for v, f in moved]
            kwargs = {k: member_of(v, i, f) for k, (v, f) in moved_kw.items()}
            results.append(self.post(self.fn(*self.prefix, *args, **kwargs)))
        try:
            return rt_batch.stacked(results)
        except rt_batch.Ragged as ragged:
            raise ragged.for_user() from None


def per_member(fn):
    """The plan that runs ``fn`` once per member of a batch, the results stacked."""
    return Looped(fn, (), same)


def member_of(value, i, flag):
    """Member ``i`` of an argument batched as ``flag`` says (:class:`Mixed`: by its leaves)."""
    if isinstance(flag, axes_.Mixed):
        return flag.member(value, i)
    return rt_batch.member(value, i, flag is not False)


def same(out):
    """The batched output as it is (no post-processing)."""
    return out
