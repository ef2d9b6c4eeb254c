"""``mx.name``: automatic naming of symbols (NameManager, Prefix), as MXNet's mxnet.name.

The symbol front end asks ``NameManager._current.value.get(name, hint)`` for each new node's
name: a user-given name is kept, otherwise ``<hint><n>`` with a counter per hint. ``with
NameManager():`` (or ``with Prefix('net_'):``) scopes a fresh manager on this thread."""
import threading
import warnings

__all__ = ["NameManager", "Prefix"]


class _ClassPropertyMeta(type):
    """Lets ``NameManager.current`` be read and assigned on the class (MXNet's classproperty)."""

    @property
    def current(cls):
        warnings.warn("NameManager.current has been deprecated. "
                      "It is advised to use the `with` statement with NameManager.",
                      DeprecationWarning)
        if not hasattr(NameManager._current, "value"):
            NameManager._current.value = NameManager()
        return NameManager._current.value

    @current.setter
    def current(cls, val):
        NameManager._current.value = val


class NameManager(metaclass=_ClassPropertyMeta):
    """Gives each unnamed symbol a unique name from its hint (``fullyconnected0``, ...)."""

    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """`name` if given, else `hint` followed by how many names this hint already got."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        if not hasattr(NameManager._current, "value"):
            NameManager._current.value = NameManager()
        self._old_manager = NameManager._current.value
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_manager is not None
        NameManager._current.value = self._old_manager


class Prefix(NameManager):
    """A NameManager that puts `prefix` in front of every name (given or generated)."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


class _CurrentManager(threading.local):
    """Each thread starts with a fresh manager (as in MXNet): a symbol named in a new thread
    finds ``NameManager._current.value`` there."""

    def __init__(self):
        self.value = NameManager()


NameManager._current = _CurrentManager()
