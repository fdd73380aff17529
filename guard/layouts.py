"""Write model directories in the production layouts, with randomly initialised weights.

Used by the tests (production loaders must load these) and by the speed benchmarks (pyannote's real
architecture, speed only). Nothing here is a usable model: the weights are random.

- `pyannote_pipeline(dir)`: config.yaml + segmentation/ (PyanNet, powerset 3 speakers / 2 at a time, as in
  segmentation-3.0) + embedding/ (WeSpeaker ResNet34) + plda/ (xvec_transform.npz, plda.npz).
- `ecapa_dir(dir)`: SpeechBrain ECAPA-TDNN hyperparams.yaml + embedding_model.ckpt + mean_var_norm_emb.ckpt
  + classifier.ckpt + label_encoder.txt (the spkrec-ecapa-voxceleb layout), at a chosen size.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("PYANNOTE_METRICS_ENABLED", "0")


def _save_pyannote_model(model, path: Path) -> None:
    import lightning
    import torch
    from pyannote.audio import __version__

    path.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": dict(model.hparams),
                "pytorch-lightning_version": lightning.__version__,
                "pyannote.audio": {"versions": {"pyannote.audio": __version__},
                                   "architecture": {"module": type(model).__module__,
                                                    "class": type(model).__name__},
                                   "specifications": model.specifications}},
               path / "pytorch_model.bin")


def pyannote_pipeline(root: Path, seed: int = 0) -> Path:
    import torch
    import yaml
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.embedding import WeSpeakerResNet34
    from pyannote.audio.models.segmentation import PyanNet

    torch.manual_seed(seed)
    root = Path(root)
    seg = PyanNet(sincnet={"stride": 10})
    seg.specifications = Specifications(problem=Problem.MONO_LABEL_CLASSIFICATION, resolution=Resolution.FRAME,
                                        duration=10.0, min_duration=10.0, warm_up=(0.0, 0.0),
                                        classes=["speaker#1", "speaker#2", "speaker#3"],
                                        powerset_max_classes=2, permutation_invariant=True)
    seg.build()
    _save_pyannote_model(seg, root / "segmentation")
    emb = WeSpeakerResNet34()
    emb.specifications = Specifications(problem=Problem.REPRESENTATION, resolution=Resolution.CHUNK,
                                        duration=10.0, classes=None)
    _save_pyannote_model(emb, root / "embedding")
    rng = np.random.default_rng(seed)
    (root / "plda").mkdir(parents=True, exist_ok=True)
    lda, _ = np.linalg.qr(rng.normal(size=(256, 128)))
    np.savez(root / "plda/xvec_transform.npz", mean1=np.zeros(256), mean2=np.zeros(128), lda=lda)
    tr, _ = np.linalg.qr(rng.normal(size=(128, 128)))
    np.savez(root / "plda/plda.npz", mu=np.zeros(128), tr=tr, psi=np.linspace(5.0, 0.1, 128))
    config = {"version": "4.0.0",
              "pipeline": {"name": "pyannote.audio.pipelines.SpeakerDiarization",
                           "params": {"segmentation": "$model/segmentation", "embedding": "$model/embedding",
                                      "plda": "$model/plda", "clustering": "VBxClustering",
                                      "segmentation_step": 0.1, "embedding_batch_size": 32,
                                      "segmentation_batch_size": 32}},
              "params": {"segmentation": {"min_duration_off": 0.0},
                         "clustering": {"threshold": 0.6, "Fa": 0.07, "Fb": 0.8}}}
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


ECAPA_YAML = """# ECAPA-TDNN speaker embedding (spkrec-ecapa-voxceleb layout); pretrained_path is overridden at load.
pretrained_path: {path}
n_mels: 80
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [{c}, {c}, {c}, {c}, {c3}]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: {att}
    lin_neurons: {dim}
classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: {dim}
    out_neurons: {speakers}
mean_var_norm_emb: !new:speechbrain.processing.features.InputNormalization
    norm_type: global
    std_norm: False
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
    mean_var_norm_emb: !ref <mean_var_norm_emb>
    classifier: !ref <classifier>
label_encoder: !new:speechbrain.dataio.encoder.CategoricalEncoder
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
        mean_var_norm_emb: !ref <mean_var_norm_emb>
        classifier: !ref <classifier>
        label_encoder: !ref <label_encoder>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
        mean_var_norm_emb: !ref <pretrained_path>/mean_var_norm_emb.ckpt
        classifier: !ref <pretrained_path>/classifier.ckpt
        label_encoder: !ref <pretrained_path>/label_encoder.txt
"""


def ecapa_dir(root: Path, *, channels: int = 32, dim: int = 32, speakers: int = 4, seed: int = 0) -> Path:
    """A SpeechBrain ECAPA directory; channels=1024, dim=192, speakers=7205 is the released size."""
    import torch
    from hyperpyyaml import load_hyperpyyaml

    torch.manual_seed(seed)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    text = ECAPA_YAML.format(path=root, c=channels, c3=channels * 3, att=max(8, channels // 8), dim=dim,
                             speakers=speakers)
    (root / "hyperparams.yaml").write_text(text)
    hp = load_hyperpyyaml(text)
    torch.save(hp["embedding_model"].state_dict(), root / "embedding_model.ckpt")
    torch.save(hp["classifier"].state_dict(), root / "classifier.ckpt")
    norm = hp["mean_var_norm_emb"]
    norm(torch.randn(8, 1, dim), torch.ones(8))
    norm._save(root / "mean_var_norm_emb.ckpt")
    enc = hp["label_encoder"]
    enc.update_from_iterable([f"spk{i}" for i in range(speakers)])
    enc.save(root / "label_encoder.txt")
    return root
