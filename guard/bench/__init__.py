"""guard bench: SH-Bench and VoxPrivacy scoring, replay against the live service, reports, gate."""
from __future__ import annotations

from pathlib import Path


def read_yaml(path: Path):
    """A suite-author's YAML file (phrasings, statements, facts) parsed; ValueError if it is not YAML, so
    `guard bench generate` can say which file is wrong."""
    import yaml

    try:
        return yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not YAML ({e})") from e


def strings(x) -> bool:
    """Whether `x` is a non-empty list of non-blank strings."""
    return isinstance(x, list) and bool(x) and all(isinstance(s, str) and s.strip() for s in x)
