"""The generated code in guard/proto must be what scripts/gen_proto.sh makes from the .proto now."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ("guard_pb2.py", "guard_pb2_grpc.py", "guard_pb2.pyi")


def regenerate(out: Path, proto_root: Path = ROOT) -> None:
    env = {**os.environ, "OUT_DIR": str(out), "PY": sys.executable}
    subprocess.run(["bash", str(ROOT / "scripts/gen_proto.sh")], cwd=proto_root, env=env, check=True,
                   capture_output=True)


def test_generated_code_matches_the_proto(tmp_path):
    regenerate(tmp_path)
    for name in GENERATED:
        fresh = (tmp_path / "guard/proto" / name).read_text()
        committed = (ROOT / "guard/proto" / name).read_text()
        assert fresh == committed, f"guard/proto/{name} is stale: run scripts/gen_proto.sh"


def test_the_check_catches_a_changed_proto(tmp_path):
    """Edit a copy of the proto without regenerating: the comparison must fail."""
    copy = tmp_path / "repo"
    (copy / "proto/guard/v1").mkdir(parents=True)
    (copy / "scripts").mkdir()
    text = (ROOT / "proto/guard/v1/guard.proto").read_text()
    (copy / "proto/guard/v1/guard.proto").write_text(text.replace("string answer = 1;",
                                                                  "string answer = 1;\n  string extra = 99;"))
    (copy / "scripts/gen_proto.sh").write_text((ROOT / "scripts/gen_proto.sh").read_text())
    env = {**os.environ, "OUT_DIR": str(tmp_path / "out"), "PY": sys.executable}
    subprocess.run(["bash", "scripts/gen_proto.sh"], cwd=copy, env=env, check=True, capture_output=True)
    assert (tmp_path / "out/guard/proto/guard_pb2.py").read_text() != (ROOT / "guard/proto/guard_pb2.py").read_text()
