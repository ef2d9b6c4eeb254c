"""Operator definitions: importing this package registers every family."""
from . import elemwise, reduce, shape, indexing, init  # noqa: F401
