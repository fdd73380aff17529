#!/usr/bin/env bash
# Regenerate guard/proto/ from proto/guard/v1/guard.proto. OUT_DIR overrides the output root (drift test).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT_DIR:-.}
mkdir -p "$OUT/guard/proto"
# Map the proto's directory onto the package path, so the generated grpc module imports guard.proto.
"$PY" -m grpc_tools.protoc -Iguard/proto=proto/guard/v1 \
  --python_out="$OUT" --grpc_python_out="$OUT" --mypy_out="$OUT" \
  --plugin=protoc-gen-mypy="$(dirname "$PY")/protoc-gen-mypy" \
  guard/proto/guard.proto
