"""Models behind the guard, chosen by name from config (backend.name) through `make_backend`."""
from __future__ import annotations

from guard.backends.base import Backend, Task
from guard.config import BackendSettings
from guard.errors import ConfigError

__all__ = ["BACKENDS", "Backend", "Task", "make_backend"]
BACKENDS = ("cascade",)


def make_backend(settings: BackendSettings) -> Backend:
    if settings.name == "cascade":
        from guard.backends.cascade import CascadeBackend

        return CascadeBackend()
    raise ConfigError(f"backend.name {settings.name!r} is not available in this build; one of {BACKENDS}")
