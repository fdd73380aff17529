import pytest
from pydantic import ValidationError

from guard.config import describe, load_settings


def test_defaults_then_file_then_environment(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("server:\n  port: 7000\n  max_concurrency: 9\nhearing:\n  vad: silero\n")
    s = load_settings(f, env={"GUARD_SERVER__PORT": "7001", "GUARD_DATA_DIR": "/x"})
    assert s.server.port == 7001 and s.server.max_concurrency == 9 and s.hearing.vad == "silero"
    assert s.data_dir == "/x" and s.server.metrics_port == 9464


def test_secrets_are_masked():
    s = load_settings(env={"GUARD_STORE__KEY": "c2VjcmV0"})
    assert s.store.key.get_secret_value() == "c2VjcmV0"
    assert "c2VjcmV0" not in str(s.masked()) and s.masked()["store"]["key"] == "**********"


@pytest.mark.parametrize("env", [{"GUARD_SERVR__PORT": "1"}, {"GUARD_NOPE": "1"}])
def test_unknown_environment_names_fail_loudly(env):
    with pytest.raises(ValueError, match="unknown"):
        load_settings(env=env)


def test_values_are_validated():
    with pytest.raises(ValidationError):
        load_settings(env={"GUARD_SERVER__PORT": "70000"})
    with pytest.raises(ValidationError):
        load_settings(env={"GUARD_HEARING__EMBEDDER": "xvector"})
    # the cascade's SELECTIVE guess is only safe behind the withheld-speech check (decision 119)
    with pytest.raises(ValidationError, match="withheld_check"):
        load_settings(env={"GUARD_POLICY__WITHHELD_CHECK": "false"})
    s = load_settings(env={"GUARD_POLICY__WITHHELD_CHECK": "false", "GUARD_BACKEND__CASCADE_GUESS_MIN": "0"})
    assert not s.policy.withheld_check and s.backend.cascade_guess_min == 0


def test_every_field_is_documented():
    rows = describe()
    assert len(rows) > 20 and all(desc for _, _, desc in rows)


def test_readme_table_matches_the_settings():
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "README.md").read_text().splitlines()
    table = [line for line in readme if line.startswith("| `GUARD_")]
    assert table == [f"| `{n}` | `{d}` | {desc} |" for n, d, desc in describe()]
