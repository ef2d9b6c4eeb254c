"""``mx.registry``: name -> class registries for serialisable objects, as MXNet's mxnet.registry.

Client libraries build their own factories on it (GluonNLP's ``register``/``create`` for
tokenizers, embeddings, models): ``get_register_func(Base, 'nick')`` returns a decorator that
records a subclass under its lower-cased name, ``get_create_func`` builds an instance from a
name, a ``[name, kwargs]``/``{...}`` JSON string, a dict, or passes an instance through.
"""
import json
import warnings

_REGISTRY = {}


def _registry_of(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the name -> class mapping registered for base_class."""
    return _registry_of(base_class).copy()


def get_register_func(base_class, nickname):
    """A decorator ``register(klass, name=None)`` recording subclasses of base_class (under
    ``name`` or the class name, lower-cased); re-registering a name warns and replaces."""
    registry = _registry_of(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError(f"Can only register subclass of {base_class.__name__}, "
                            f"got {klass!r}")
        key = (klass.__name__ if name is None else name).lower()
        old = registry.get(key)
        if old is not None:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with "
                          f"name {key} is overriding existing {nickname} "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        registry[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory ``alias(*names)`` registering a class under every name given."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A factory ``create(name_or_instance, *args, **kwargs)`` for base_class's registry."""
    registry = _registry_of(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            if nickname not in kwargs:
                raise TypeError(f"create() needs the {nickname} name as the first argument "
                                f"or as {nickname}=")
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError(f"{nickname} is already an instance. Additional arguments "
                                 "are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise TypeError(f"{nickname} must be of string type, got {type(name).__name__}")
        if name.startswith("[") or name.startswith("{"):
            if args or kwargs:
                raise ValueError(f"a JSON {nickname} config takes no further arguments")
            config = json.loads(name)
            if isinstance(config, dict):
                return create(**config)
            name, kwargs = config
            return create(name, **kwargs)
        key = name.lower()
        if key not in registry:
            raise ValueError(f"{name} is not registered. Please register with "
                             f"{nickname}.register first (known: {', '.join(sorted(registry))})")
        return registry[key](*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from config: a registered name (with the "
                      f"constructor's arguments), a JSON string or dict, or a "
                      f"{base_class.__name__} instance returned as is.")
    return create
