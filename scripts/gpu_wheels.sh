#!/usr/bin/env bash
# Wheels for benchmarks/gpu_check.sh: what the hearing front end, pyannote and SpeechBrain need that the
# GPU host's image (Python 3.12, CUDA torch, transformers, peft) lacks. Downloaded here into .whl/
# (git-ignored), carried there. Versions = what scripts/install.sh resolves here.
set -euo pipefail
cd "$(dirname "$0")/.."
plat=()
for p in manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 \
         manylinux1; do plat+=(--platform "${p}_x86_64"); done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${plat[@]}" \
  -d .whl Resemblyzer==0.1.4 webrtcvad-wheels==2.0.14.post1 librosa==0.11.0 audioread==3.1.0 soxr==1.1.0 \
  pooch==1.9.0 decorator==5.3.1 soundfile==0.14.0 cffi==2.1.1 pycparser==3.12 pydantic==2.14.4 \
  pydantic_core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 cryptography==50.0.2 \
  pyannote.audio==4.0.7 pyannote.core==6.1.0 pyannote.database==6.1.1 pyannote.metrics==4.2.0 \
  pyannote.pipeline==4.1.0 pyannoteai-sdk==0.4.0 asteroid-filterbanks==0.4.0 julius==0.2.8 \
  torch-audiomentations==0.12.0 torch_pitch_shift==1.2.5 primePy==1.3 optuna==5.0.0 alembic==1.20.1 \
  SQLAlchemy==2.1.9 colorlog==6.12.0 opentelemetry-api==1.45.2 opentelemetry-sdk==1.45.2 \
  opentelemetry-semantic-conventions==0.66b2 opentelemetry-exporter-otlp==1.45.2 \
  opentelemetry-exporter-otlp-proto-common==1.45.2 opentelemetry-exporter-otlp-proto-grpc==1.45.2 \
  opentelemetry-exporter-otlp-proto-http==1.45.2 opentelemetry-exporter-http-transport==0.66b2 opentelemetry-exporter-otlp-common==0.66b2 \
  opentelemetry-proto==1.45.2 googleapis-common-protos==1.76.0 speechbrain==1.1.2 HyperPyYAML==1.2.3 \
  ruamel.yaml==0.18.17 ruamel.yaml.clib==0.2.15 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 \
  platformdirs==4.14.8 grpcio-health-checking==1.85.1 grpcio-reflection==1.85.1
echo "$(ls .whl | wc -l) wheels, $(du -sh .whl | cut -f1) in .whl/"
