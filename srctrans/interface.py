"""What the compiler needs from the public API, provided by the API without being imported.

Requires: nothing (it imports no other srctrans module).
Guarantees: the passes recognise srctrans's own derivatives called inside user
code (``st.grad(g)(x)``, ``st.jvp(g, ...)``) and get their generated code
through :data:`API`, which the API layer fills in when it is imported. The
compiler's modules never import the API or the cache, so imports run one way:
API -> cache -> pipeline -> passes -> rules and runtime.

While the API is not imported, no user code can hold one of its objects, and
:data:`API` recognises none.
"""


class _Api:
    """The hooks; each is set by the module that owns it.

    Attributes:
      grad: ``srctrans.grad`` (set by ``srctrans.api``).
      jvp: ``srctrans.jvp`` (set by ``srctrans.forward_api``).
      plain_function: ``obj -> function or None``: the generated gradient an
        object made by ``st.grad`` computes, as a plain function (set by ``srctrans.api``).
      forward_instance: ``(fn, wrt, location=None) -> instance`` with ``.jvp`` and
        ``.build.tangents``: the cached JVP of a user function (set by ``srctrans.cache``).
      instance: ``(fn, wrt, optimize, unconnected_zero, shapes=...) -> instance``: the
        cached reverse derivative of a user function (set by ``srctrans.cache``).
      batched_forms: transform -> ``form(args, flags, size)``: what batched code runs for a
        call of that transform (``st.hvp``) on a batch, its arguments batched as ``flags``
        say (set by the transform's module).
    """

    def __init__(self):
        self.grad = None
        self.jvp = None
        self.plain_function = lambda obj: None
        self.forward_instance = None
        self.instance = None
        self.batched_forms = {}

    def is_grad(self, value):
        """Whether ``value`` is ``st.grad`` itself."""
        return self.grad is not None and value is self.grad

    def is_jvp(self, value):
        """Whether ``value`` is ``st.jvp`` itself."""
        return self.jvp is not None and value is self.jvp


API = _Api()

CHECKPOINTED = "__srctrans_checkpoint__"
"""The attribute ``st.checkpoint`` sets on a function: a derivative that calls it keeps
none of its intermediates and computes them again in the backward pass."""
