"""The sentence encoders by name (guard.sentence_models): the bundled all-mpnet-base-v2 read from its five
parts in place, its provenance check, and settings that name no encoder."""
import io
import types
import zipfile

import numpy as np
import pytest

from guard import sentence_models
from guard.config import BackendSettings
from guard.errors import ConfigError


def cut(blob: bytes, tmp_path, pieces: int) -> list:
    size = -(-len(blob) // pieces)
    paths = []
    for i in range(pieces):
        p = tmp_path / f"model.zip.{i + 1:03d}"
        p.write_bytes(blob[i * size:(i + 1) * size])
        paths.append(p)
    return paths


def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(sentence_models.MPNET_FOLDER + name, data)
    return buf.getvalue()


def test_a_zip_cut_in_parts_reads_as_one_stream(tmp_path):
    rng = np.random.default_rng(0)
    files = {"config.json": b"{}", "tokenizer.json": b"x" * 5000, "model.safetensors": rng.bytes(300_000)}
    blob = zipped(files)
    with sentence_models.Joined(cut(blob, tmp_path, 3)) as joined:
        assert joined.seek(0, io.SEEK_END) == len(blob)
        joined.seek(len(blob) // 3 - 10)   # a read across a cut
        assert joined.read(20) == blob[len(blob) // 3 - 10:len(blob) // 3 + 10]
        assert joined.tell() == len(blob) // 3 + 10
        joined.seek(0)
        with zipfile.ZipFile(joined) as z:
            assert {n: z.read(n) for n in z.namelist()} == {sentence_models.MPNET_FOLDER + k: v for k, v in files.items()}


def test_weights_without_the_publishers_hash_are_refused(tmp_path, monkeypatch):
    parts = cut(zipped({"config.json": b"{}", "tokenizer.json": b"{}", "model.safetensors": b"not the weights"}),
                tmp_path, 5)
    monkeypatch.setattr(sentence_models, "mpnet_parts", lambda: parts)
    with pytest.raises(ConfigError, match="SHA-256"):
        sentence_models.mpnet_files()


def test_a_setting_that_names_no_encoder_fails_at_start_up(tmp_path):
    with pytest.raises(ConfigError, match="sentence-transformers folder"):
        sentence_models.check(str(tmp_path))
    from guard.backends import make_backend

    with pytest.raises(ConfigError, match="cascade_general_encoder"):
        make_backend(BackendSettings(cascade_general_encoder=str(tmp_path / "nothing")))
    sentence_models.check(sentence_models.MINILM)
    sentence_models.check(sentence_models.BUNDLED_MPNET)   # the five parts are installed


def test_the_bundled_mpnet_is_the_publishers_encoder(tmp_path):
    """Read in place from the five parts, it encodes as sentence-transformers does from the publisher's folder
    (mean pooling, unit rows)."""
    embed = sentence_models.shared(sentence_models.BUNDLED_MPNET)
    folder = tmp_path / "all-mpnet-base-v2"
    (folder / "1_Pooling").mkdir(parents=True)
    with sentence_models.Joined(sentence_models.mpnet_parts()) as joined, zipfile.ZipFile(joined) as z:
        for name in z.namelist():
            if not name.endswith("/"):
                (tmp_path / name).write_bytes(z.read(name))
    said = ["the other firms steal anything good within days", "Exhausted", "a", "word " * 500]
    theirs = sentence_models.folder(str(folder))(said)
    mine = embed(said)
    assert mine.shape == (4, 768)
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
    assert np.abs(mine - theirs).max() < 1e-5
    assert embed([]).shape == (0, 768)


def test_a_load_that_failed_is_not_tried_again_for_a_while(tmp_path, monkeypatch):
    """Each GENERAL question would otherwise read and inflate the weights again; within RETRY_SECONDS every
    call fails at once with the first failure's cause, and after it the next call tries again."""
    (tmp_path / "modules.json").write_text("[]")
    tries, clock = [], [1000.0]

    def broken(path):
        tries.append(path)
        raise OSError("weights unreadable")

    monkeypatch.setattr(sentence_models, "folder", broken)
    monkeypatch.setattr(sentence_models, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(sentence_models, "_FAILED", {})
    monkeypatch.setattr(sentence_models, "_LOADED", {})
    with pytest.raises(OSError, match="weights unreadable"):
        sentence_models.shared(str(tmp_path))
    clock[0] += sentence_models.RETRY_SECONDS - 1
    with pytest.raises(ConfigError, match="failed to load 59 s ago.*weights unreadable"):
        sentence_models.shared(str(tmp_path))
    assert len(tries) == 1
    clock[0] += 2
    monkeypatch.setattr(sentence_models, "folder", lambda path: tries.append(path) or (lambda texts: texts))
    assert sentence_models.shared(str(tmp_path))(["a"]) == ["a"]
    assert len(tries) == 2 and str(tmp_path) not in sentence_models._FAILED


def test_remembered_embeds_each_batch_once_and_gives_the_same_rows():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.arange(len(texts) * 2, dtype=np.float32).reshape(len(texts), 2) + len(calls)

    again = sentence_models.remembered(embed)
    first = again(["a", "b"])
    assert again(["a", "b"]) is first and calls == [["a", "b"]]
    assert again(["b"]).tolist() == [[2.0, 3.0]] and len(calls) == 2   # another batch is embedded anew
    assert sentence_models.remembered(embed)(["a", "b"]) is not first   # held by one caller only
