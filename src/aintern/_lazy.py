"""Names a package exports, imported at first use (PEP 562): a process imports only what it touches."""

# (Nothing imported at run time, __future__ included, hence the quoted annotations: ``import aintern`` comes
# before the CLI takes SIGINT, cli.main.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_exports(
    namespace: "dict[str, Any]", homes: dict[str, tuple[str, ...]]
) -> "tuple[Callable[[str], Any], Callable[[], list[str]]]":
    """``__getattr__`` and ``__dir__`` for the package whose ``globals()`` is ``namespace``: its public
    names live in the modules ``homes`` maps them from."""
    home_of = {name: module for module, names in homes.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name: str) -> "Any":
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *home_of])

    return __getattr__, __dir__
