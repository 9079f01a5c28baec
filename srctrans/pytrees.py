"""Arguments as trees of arrays, for the transforms that take them apart (``jacobian``,
``hessian``, ``check_grads``).

Requires: values made of arrays, numbers, containers (``runtime.containers``:
tuples, lists, dicts, named tuples, dataclasses, registered classes) and
plain objects of the user's classes.
Guarantees: a plain object is a node whose entries are its attributes
(``vars(obj)`` and its ``__slots__``), as the gradient of an object is a dict
of its attributes' gradients; `tree_map` rebuilds it as such a dict
(``as_dicts``, for derivatives) or as a copy of the object with the mapped
attributes (for moved arguments). An entry that another tree lacks is None there, as an
object's gradient lists only the attributes the function read.
"""

import copy

from srctrans.errors import UsageError
from srctrans.runtime import containers
from srctrans.runtime.containers import entries, entries_like, is_container, rebuild
from srctrans.runtime.objects import ObjectTangent, attributes, is_plain_object


def register_pytree(cls, fields, rebuild=None):
    """Declare which attributes of ``cls``'s objects carry derivatives, as JAX's pytree
    registration does.

    Without it an object's gradient is a dict of the gradients of the
    attributes the function read (``{"W": dW, "b": db}``). With it the
    gradient (and the tangent forward mode takes and returns) is an object of
    ``cls`` whose ``fields`` hold the derivatives, and every other attribute
    is a constant, carried over unchanged (a layer's activation function, its
    sizes, a cache).

    Args:
      cls: the class (objects of subclasses are not included).
      fields: the names of the attributes that hold arrays, floats, or
        containers and objects of them.
      rebuild: ``rebuild(obj, values) -> new object`` of ``cls`` like ``obj``
        with ``values`` (a dict field -> value) in its fields. The default
        copies ``obj`` with ``copy.copy`` and sets the fields on the copy.

    >>> class Layer:
    ...     def __init__(self, W, act): self.W, self.act = W, act
    >>> register_pytree(Layer, ["W"])        # st.grad(loss)(layer, x).W is dW
    """
    if not isinstance(cls, type):
        raise UsageError(f"register_pytree takes a class, not {type(cls).__name__}")
    if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
        raise UsageError("register_pytree takes the fields as a list of attribute names",
                         hint='write register_pytree(Layer, ["W", "b"])')
    if rebuild is not None and not callable(rebuild):
        raise UsageError("register_pytree's rebuild must be a function (obj, values) -> object")
    containers.register_pytree(cls, fields, rebuild)


def tree_map(fn, value, *others, as_dicts=False):
    """``fn(leaf, *other_leaves)`` at every leaf of ``value``, in ``value``'s structure."""
    if is_container(value):
        theirs = [_entries_of(o, value) for o in others]
        return rebuild(value, [(k, tree_map(fn, v, *(t.get(k) for t in theirs), as_dicts=as_dicts))
                               for k, v in entries(value)])
    if is_plain_object(value):
        theirs = [_entries_of(o, value) for o in others]
        mapped = {k: tree_map(fn, v, *(t.get(k) for t in theirs), as_dicts=as_dicts)
                  for k, v in attributes(value).items()}
        if as_dicts:
            return mapped
        moved = copy.copy(value)
        for name, entry in mapped.items():
            object.__setattr__(moved, name, entry)
        return moved
    return fn(value, *others)


def tree_leaves(value):
    """The leaves of ``value``, depth first, in `tree_map`'s order."""
    found = []
    tree_map(found.append, value)
    return found


def is_tree(value):
    """Whether ``value`` has entries (a container or a plain object), rather than being a leaf."""
    return is_container(value) or is_plain_object(value)


def _entries_of(other, like):
    if other is None:
        return {}
    if isinstance(other, ObjectTangent):
        return dict(object.__getattribute__(other, "_entries"))
    if is_plain_object(other):
        return attributes(other)
    if is_container(other):
        return entries_like(other, like)
    return {}
