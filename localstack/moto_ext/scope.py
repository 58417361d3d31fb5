"""Where an identifier lives: RDS keeps identifiers per account and region ("DB instance identifiers
are unique for each AWS account and AWS Region", API_CreateDBInstance.html,
DBInstanceIdentifier; the same for DB clusters, API_CreateDBCluster.html). A global database's
secondary commonly has its primary's identifier in another region.

The emulator's own tables (real servers, cluster topologies, endpoints, restores under way) are
``Scoped``: a key is the identifier within the current scope, the account and region of the RDS
request being served (set by ``__init__.py`` around every call), or of the object a background
thread or a timed phase works for (``of``, ``carry``). Code that reaches into another region, as a
global database's switchover does, names that region (``within``).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

_LOCAL = threading.local()
SEP = "|"


def current() -> tuple[str, str] | None:
    return getattr(_LOCAL, "scope", None)


@contextlib.contextmanager
def within(account: str | None, region: str | None) -> Iterator[None]:
    """Runs the block in this account and region (nested scopes restore the outer one)."""
    previous = current()
    _LOCAL.scope = (str(account), str(region)) if account and region else previous
    try:
        yield
    finally:
        _LOCAL.scope = previous


def of(obj: Any) -> contextlib.AbstractContextManager[None]:
    """The scope of a moto object (an instance, a cluster, a proxy): its account and region."""
    region = getattr(obj, "region_name", None) or getattr(obj, "region", None)
    return within(getattr(obj, "account_id", None), region)


def carry(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, run later (in a thread, a forwarder) in the scope it was made in."""
    scope = current()

    def run(*args: Any, **kwargs: Any) -> Any:
        with within(*(scope or (None, None))):
            return fn(*args, **kwargs)

    return run


def key(identifier: Any) -> Any:
    """The identifier within the current scope (an identifier already scoped stays as it is)."""
    scope = current()
    if scope is None or not isinstance(identifier, str) or SEP in identifier:
        return identifier
    return f"{scope[0]}{SEP}{scope[1]}{SEP}{identifier}"


class Scoped(dict):  # type: ignore[type-arg]
    """A dict whose keys are identifiers within the current scope."""

    def __getitem__(self, k: Any) -> Any:
        return super().__getitem__(key(k))

    def __setitem__(self, k: Any, v: Any) -> None:
        super().__setitem__(key(k), v)

    def __delitem__(self, k: Any) -> None:
        super().__delitem__(key(k))

    def __contains__(self, k: object) -> bool:
        return super().__contains__(key(k))

    def get(self, k: Any, default: Any = None) -> Any:
        return super().get(key(k), default)

    def pop(self, k: Any, *default: Any) -> Any:
        return super().pop(key(k), *default)

    def setdefault(self, k: Any, default: Any = None) -> Any:
        return super().setdefault(key(k), default)


class ScopedSet(set):  # type: ignore[type-arg]
    """A set of identifiers within the current scope."""

    def add(self, k: Any) -> None:
        super().add(key(k))

    def discard(self, k: Any) -> None:
        super().discard(key(k))

    def __contains__(self, k: object) -> bool:
        return super().__contains__(key(k))
