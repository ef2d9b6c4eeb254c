"""``mx.attribute``: AttrScope, attributes attached to every symbol created inside a ``with`` block
(``with mx.AttrScope(ctx_group='dev1'):``), as MXNet's mxnet.attribute."""
import threading
import warnings
from collections import defaultdict

__all__ = ["AttrScope"]


class _ClassPropertyMeta(type):
    @property
    def current(cls):
        warnings.warn("AttrScope.current has been deprecated. "
                      "It is advised to use the `with` statement with AttrScope.",
                      DeprecationWarning)
        if not hasattr(AttrScope._current, "value"):
            AttrScope._current.value = AttrScope()
        return AttrScope._current.value

    @current.setter
    def current(cls, val):
        AttrScope._current.value = val


class AttrScope(metaclass=_ClassPropertyMeta):
    """Attribute manager for scoping: the keyword arguments (string values) are attached to
    every symbol created in the scope; nested scopes merge, the inner one winning."""

    _current = threading.local()
    # how many control-flow subgraphs of each name were made (mx.sym.contrib.foreach names
    # them "foreach0", "foreach1", ...), as MXNet's
    _subgraph_names = defaultdict(int)

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes updated with `attr` (a dict or None)."""
        if self._attr:
            ret = self._attr.copy()
            if attr:
                ret.update(attr)
            return ret
        return attr if attr else {}

    def __enter__(self):
        if not hasattr(AttrScope._current, "value"):
            AttrScope._current.value = AttrScope()
        self._old_scope = AttrScope._current.value
        attr = AttrScope._current.value._attr.copy()
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_scope is not None
        AttrScope._current.value = self._old_scope


class _CurrentScope(threading.local):
    """Each thread starts with an empty scope (MXNet's threads each get a fresh AttrScope): a
    symbol built in a new thread finds ``AttrScope._current.value`` there."""

    def __init__(self):
        self.value = AttrScope()


AttrScope._current = _CurrentScope()
