"""Hearing: who spoke when (VAD, diarization), and who they are (verification against voiceprints).

`Hearing` (guard.hearing.pipeline) loads the configured models once and hears each request. The package's
names load on first use (PEP 562): a process that needs one part of it does not import the rest. The
pocketsphinx decode worker (`python -m guard.hearing.decode_pool`) imports only `guard.hearing.asr`, not
scipy, the diarizer, the settings and grpc with it: 232 -> 130 MB resident a worker (decision 129).
"""
from __future__ import annotations

import importlib

_WHERE = {"Hearing": "pipeline", "EnrollmentPrint": "pipeline", "Diarization": "diarize", "Track": "diarize"}
__all__ = ["Diarization", "EnrollmentPrint", "Hearing", "Track"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
