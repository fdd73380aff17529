"""scripts/lock.txt holds every distribution the install put in this environment, at the version installed
(decision 125): a dependency added without re-locking, or a lock pip could not honour, fails here."""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

LOCK = Path(__file__).parent.parent / "scripts" / "lock.txt"
UNLOCKED = {"guard", "torch", "pip", "setuptools", "wheel"}   # the package itself; torch: constraints.txt


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, str]:
    pins = [line.split("==") for line in LOCK.read_text().splitlines() if line and not line.startswith("#")]
    return {norm(name): version for name, version in pins}


def test_every_installed_distribution_is_locked_at_its_version():
    pins = locked()
    installed = {norm(d.metadata["Name"]): d.version for d in metadata.distributions()}
    off = {name: (version, pins.get(name)) for name, version in installed.items()
           if name not in UNLOCKED and pins.get(name) != version}
    assert not off, f"installed (version, locked) differ; rerun scripts/lock.sh after re-measuring: {off}"


def test_lock_pins_each_name_once_and_never_torch():
    names = [norm(line.split("==")[0]) for line in LOCK.read_text().splitlines()
             if line and not line.startswith("#")]
    assert len(names) == len(set(names)) and "torch" not in names
