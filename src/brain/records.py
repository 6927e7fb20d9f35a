"""``@record``: the part of ``@dataclass`` the task boot's modules use, without importing dataclasses.

Why: ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``), and building each of the
~30 dataclasses of the search and card modules runs its machinery again: together about 10 ms of a
task boot's CPU, for records that only need an ``__init__``, a ``__repr__`` and an ``__eq__``
(decision 0043). A record is a plain class whose methods are generated once, in one ``exec`` per
class: ``__init__`` with the class's defaults, ``field(default_factory=...)`` called per instance,
``__repr__`` and ``__eq__`` over the fields (others of another class are ``NotImplemented``), so the
class is unhashable, as a dataclass is; ``frozen=True`` refuses assignment (``FrozenRecord``, an
``AttributeError``) and hashes the fields. No ``replace``, ``asdict`` or ``fields``: ``vars(r)`` is the
fields' dict. Annotations are read as written (``from __future__ import annotations``); ``ClassVar``
is not supported, and a record does not inherit another one's fields.
"""

from __future__ import annotations

from operator import attrgetter

from .errors import FrozenRecord

__all__ = ["record", "field", "record_fields"]

_MISSING = object()


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory) -> None:
        self.factory = factory


def field(*, default_factory):
    """A field whose default is made per instance (``dataclasses.field(default_factory=...)``)."""
    return _Factory(default_factory)


def record_fields(cls) -> tuple[str, ...]:
    """The field names of a record class, in order."""
    return cls.__record_fields__


def _frozen_setattr(self, name, value):
    # as a frozen dataclass: nothing is assigned on the class's own instances, fields on no subclass's
    if type(self).__dict__.get("__setattr__") is _frozen_setattr or name in self.__record_fields__:
        raise FrozenRecord(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self, name):
    if type(self).__dict__.get("__delattr__") is _frozen_delattr or name in self.__record_fields__:
        raise FrozenRecord(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _repr(self) -> str:
    names = self.__record_fields__
    return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    get = self.__record_values__
    return get(self) == get(other)


def _hash(self) -> int:
    return hash(self.__record_values__(self))


_KEPT = None  # kept.Kept("records"): (source, filename) -> its code object


def _code(source: str, filename: str):
    """``compile(source, filename, "exec")``, from the code object a process before kept (``brain.kept``): a
    compile per class is most of what building ~30 records costs a process (about 6 ms)."""
    global _KEPT
    if _KEPT is None:
        from .kept import Kept

        _KEPT = Kept("records")
    key = (source, filename)
    code = _KEPT.get(key)
    if code.__class__ is not _CODE:
        code = compile(source, filename, "exec")
        _KEPT.put(key, code)
    return code


_CODE = _code.__code__.__class__


def record(cls=None, /, *, frozen: bool = False):
    """Make ``cls`` a record (see the module's docstring); ``@record`` or ``@record(frozen=True)``."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def _build(cls, frozen: bool):
    names = [n for n in cls.__dict__.get("__annotations__", {})]
    env: dict = {"_MISSING": _MISSING, "_object_setattr": object.__setattr__}
    params, body = [], []
    for name in names:
        default = cls.__dict__.get(name, _MISSING)
        if isinstance(default, _Factory):
            env[f"_f_{name}"] = default.factory
            delattr(cls, name)
            params.append(f"{name}=_MISSING")
            value = f"_f_{name}() if {name} is _MISSING else {name}"
        elif default is not _MISSING:
            env[f"_d_{name}"] = default
            params.append(f"{name}=_d_{name}")
            value = name
        else:
            if params and "=" in params[-1]:
                raise TypeError(f"non-default field {name!r} follows a default one in {cls.__qualname__}")
            params.append(name)
            value = name
        body.append(f"    _object_setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    # only __init__ is compiled (it runs per instance: thousands on a boot); the others are shared
    # functions over an attrgetter of the fields, which cost no compile per class
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(_code(source, f"<record {cls.__qualname__}>"), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    values = attrgetter(*names) if len(names) > 1 else (lambda self, _n=tuple(names): tuple(getattr(self, n) for n in _n))
    own = {"__init__": init, "__repr__": _repr, "__eq__": _eq}
    for method, function in own.items():
        if method not in cls.__dict__:
            setattr(cls, method, function)
    cls.__record_values__ = staticmethod(values)
    cls.__record_fields__ = tuple(names)
    cls.__match_args__ = tuple(names)
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
        if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
            cls.__hash__ = _hash
    elif "__hash__" not in cls.__dict__:
        cls.__hash__ = None
    return cls
