"""The face classifier the reader runs: the trained network with its middle layers in 8-bit integers
(tools/quantize_classifier.py), answering as the trained one does."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.face_classifier import (
    MODEL_PATH,
    TRAINED_PATH,
    FaceClassifier,
    crops_to_blob,
    default_classifier,
    face_crops,
    softmax,
)
from vision.labelled import load_folder

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"


def samples_dice_blob(count: int | None = None) -> np.ndarray:
    """The network's input for every labelled die of the first `count` pictures of samples/."""
    crops = []
    for label in load_folder(SAMPLES)[:count]:
        image = cv2.imread(str(label.path))
        assert image is not None, label.path
        height, width = image.shape[:2]
        boxes = [((die.x, die.y), (die.width, die.height), 0.0) for die in label.boxes_in_pixels(width, height) or ()]
        if boxes:
            crops.append(face_crops(image, boxes))
    return crops_to_blob(np.concatenate(crops))


def test_the_reader_runs_the_quantized_network():
    assert MODEL_PATH != TRAINED_PATH and MODEL_PATH.is_file() and TRAINED_PATH.is_file()
    assert default_classifier().network.model_path == MODEL_PATH


def test_the_quantized_network_reads_the_samples_dice_as_the_trained_one():
    blob = samples_dice_blob()
    trained = softmax(FaceClassifier(TRAINED_PATH).logits(blob))
    quantized = softmax(FaceClassifier(MODEL_PATH).logits(blob))
    same = trained.argmax(axis=1) == quantized.argmax(axis=1)
    assert len(blob) > 200
    assert same[trained.max(axis=1) >= 0.8].all(), "a face the trained network is sure of is read otherwise"
    assert same.mean() >= 0.98
    assert np.abs(trained - quantized).max() < 0.1


def test_the_tool_quantizes_the_middle_layers_from_crops_the_reader_hands_the_classifier(tmp_path):
    pytest.importorskip("onnx", reason="onnx is in the train extra: pip install -e '.[train]'")
    import onnx

    sys.path.insert(0, str(REPO / "tools"))
    import quantize_classifier as tool

    pictures = tmp_path / "pictures"
    pictures.mkdir()
    for label in load_folder(SAMPLES)[:6]:
        (pictures / label.path.name).write_bytes(label.path.read_bytes())
    crops = tool.calibration_crops(TRAINED_PATH, [pictures], most=512)
    assert 6 <= len(crops) <= 512 and crops.shape[1:] == (3, 32, 32)

    out = tmp_path / "quantized.onnx"
    tool.quantize(TRAINED_PATH, crops, out, tmp_path)
    nodes = onnx.load(str(out)).graph.node
    weighted = [node for node in nodes if node.op_type in ("Conv", "Gemm")]
    # A quantized layer reads its weights through a DequantizeLinear; a float one reads them as they are.
    dequantized = {output for node in nodes if node.op_type == "DequantizeLinear" for output in node.output}
    quantized = [any(name in dequantized for name in node.input[1:2]) for node in weighted]
    assert quantized[:2] == [False, False] and quantized[-1] is False and all(quantized[2:-1])
    assert tool.agreement(TRAINED_PATH, out, samples_dice_blob(12)) >= 0.95
    # It names only the operator sets it uses, as the shipped one does: an older ONNX Runtime refuses others.
    for model in (out, MODEL_PATH):
        loaded = onnx.load(str(model))
        assert {opset.domain for opset in loaded.opset_import} == {node.domain for node in loaded.graph.node} | {""}
