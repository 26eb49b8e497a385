"""Make the face classifier the reader runs from the one trained: its middle layers in 8-bit integers.

    .venv/bin/pip install -e '.[train]'
    .venv/bin/python -m vision.synth --out /tmp/synth-b --count 500 --first-seed 740000 --variety
    .venv/bin/python tools/quantize_classifier.py --pictures samples --pictures /tmp/synth-b
        # reads vision/models/face_classifier.onnx, writes vision/models/face_classifier.int8.onnx

The network is most of the reader's time on a frame with doubtful dice, and ONNX Runtime runs it about
twice as fast so (docs/reader.md, "Speed"). Each layer's range of values is
measured on the crops the reader itself hands the classifier while reading the --pictures (static
quantization: weights per channel, activations with one scale per tensor). The first two convolutions,
which see the crop's raw pixels, and the last layer, whose outputs become the confidences the reader's
rules compare with their thresholds, stay in float32: quantized too, they changed the network's answer
on 6 % of crops instead of 2 % (docs/training.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hardware.camera import list_images  # noqa: E402
from vision.die_detector import default_detector  # noqa: E402
from vision.face_classifier import MODEL_PATH, TRAINED_PATH, FaceClassifier  # noqa: E402
from vision.reader import DiceReader  # noqa: E402

CALIBRATION_BATCH = 64
# The layers left in float32 at each end of the network (see the module's docstring).
FLOAT_CONVOLUTIONS_FIRST = 2


class RecordingClassifier(FaceClassifier):
    """The classifier, keeping a copy of every blob the reader hands it."""

    def __init__(self, model_path: Path):
        super().__init__(model_path)
        self.blobs: list[np.ndarray] = []

    def logits(self, blob: np.ndarray) -> np.ndarray:
        self.blobs.append(blob.copy())
        return super().logits(blob)


def calibration_crops(model: Path, folders: list[Path], most: int, seed: int = 0) -> np.ndarray:
    """Up to `most` of the blobs (N, 3, S, S) the reader hands the classifier `model` while reading the
    pictures in `folders`, drawn at random."""
    recorder = RecordingClassifier(model)
    reader = DiceReader(default_detector(), recorder)
    pictures = [path for folder in folders for path in list_images(folder)]
    if not pictures:
        raise SystemExit(f"no pictures in {', '.join(map(str, folders))}")
    for path in pictures:
        image = cv2.imread(str(path))
        if image is None:
            raise SystemExit(f"cannot decode {path}")
        reader.read(image)
    crops = np.concatenate(recorder.blobs)
    chosen = np.random.default_rng(seed).permutation(len(crops))[:most]
    return crops[np.sort(chosen)]


def float_layers(model: Path) -> list[str]:
    """The names of the layers kept in float32: the first convolutions and the last layer."""
    import onnx

    nodes = onnx.load(str(model)).graph.node
    convolutions = [node.name for node in nodes if node.op_type == "Conv"]
    weighted = [node.name for node in nodes if node.op_type in ("Conv", "Gemm", "MatMul")]
    return convolutions[:FLOAT_CONVOLUTIONS_FIRST] + weighted[-1:]


def quantize(model: Path, crops: np.ndarray, out: Path, work: Path) -> None:
    """Write `model` to `out` with all but its float_layers quantized, ranges measured on `crops`."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Crops(CalibrationDataReader):
        def __init__(self) -> None:
            starts = range(0, len(crops) - CALIBRATION_BATCH + 1, CALIBRATION_BATCH)
            self.batches: Iterator[np.ndarray] = iter([crops[start:start + CALIBRATION_BATCH] for start in starts]
                                                      or [crops])

        def get_next(self) -> dict[str, np.ndarray] | None:
            batch = next(self.batches, None)
            return None if batch is None else {"crops": batch}

    prepared = work / "prepared.onnx"
    quant_pre_process(str(model), str(prepared))
    out.parent.mkdir(parents=True, exist_ok=True)
    quantize_static(str(prepared), str(out), Crops(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax, nodes_to_exclude=float_layers(prepared))
    only_the_opsets_used(out)


def only_the_opsets_used(model: Path) -> None:
    """Drop the operator sets a model names but none of its nodes uses (the graph optimizer names every
    one it knows): an ONNX Runtime older than those sets would refuse the model for them alone."""
    import onnx

    loaded = onnx.load(str(model))
    used = {node.domain for node in loaded.graph.node} | {""}
    kept = [opset for opset in loaded.opset_import if opset.domain in used]
    del loaded.opset_import[:]
    loaded.opset_import.extend(kept)
    onnx.checker.check_model(loaded)
    onnx.save(loaded, str(model))


def agreement(model: Path, quantized: Path, crops: np.ndarray) -> float:
    """The share of crops both networks give the same answer (class) on."""
    return float(np.mean(FaceClassifier(model).logits(crops).argmax(axis=1)
                         == FaceClassifier(quantized).logits(crops).argmax(axis=1)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=TRAINED_PATH, help="the trained (float32) classifier")
    parser.add_argument("--pictures", type=Path, action="append", required=True,
                        help="a folder of pictures to measure the layers' ranges on (repeat for several)")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--crops", type=int, default=4096, help="most crops to measure the ranges on")
    args = parser.parse_args(argv)
    crops = calibration_crops(args.model, args.pictures, args.crops)
    with tempfile.TemporaryDirectory() as work:
        quantize(args.model, crops, args.out, Path(work))
    print(f"{args.out}: {args.out.stat().st_size} bytes, measured on {len(crops)} crops; "
          f"the same answer as {args.model.name} on {agreement(args.model, args.out, crops):.1%} of them")


if __name__ == "__main__":
    main()
