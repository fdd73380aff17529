"""A small, safe serialisation for sealed payloads: named float32 arrays plus one JSON object.

Not pickle (unsafe to load) and not np.save with allow_pickle. Layout: JSON header length (4 bytes LE),
JSON header {name: [shape, offset]} + {"meta": {...}}, then the raw little-endian float32 data.
"""
from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np


def pack_arrays(meta: dict[str, Any] | None = None, **arrays: np.ndarray) -> bytes:
    header: dict[str, Any] = {"meta": meta or {}, "arrays": {}}
    chunks, offset = [], 0
    for name, arr in arrays.items():
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header["arrays"][name] = [list(np.shape(arr)), offset]
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<I", len(head)) + head + b"".join(chunks)


def unpack_arrays(blob: bytes) -> dict[str, Any]:
    (n,) = struct.unpack_from("<I", blob)
    header = json.loads(blob[4:4 + n])
    body = memoryview(blob)[4 + n:]
    out: dict[str, Any] = {"meta": header["meta"]}
    for name, (shape, offset) in header["arrays"].items():
        count = int(np.prod(shape)) if shape else 1
        out[name] = np.frombuffer(body, dtype="<f4", count=count, offset=offset).reshape(shape).copy()
    return out
