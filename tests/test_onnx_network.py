"""The ONNX Runtime wrapper: any batch answers as OpenCV's own ONNX importer does, from several threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np
import pytest

from vision.die_detector import MODEL_PATH as DETECTOR_PATH
from vision.face_classifier import MODEL_PATH as CLASSIFIER_PATH
from vision.face_classifier import TRAINED_PATH as TRAINED_CLASSIFIER_PATH
from vision.onnx_network import OnnxNetwork


@pytest.mark.parametrize("model, shapes", [
    (TRAINED_CLASSIFIER_PATH, [(1, 3, 32, 32), (5, 3, 32, 32), (40, 3, 32, 32)]),
    (DETECTOR_PATH, [(1, 3, 240, 320), (1, 3, 80, 80), (1, 3, 480, 640)]),
])
def test_every_input_shape_answers_as_opencv_reads_the_model(model, shapes):
    network = OnnxNetwork(model, "test model")
    rng = np.random.default_rng(5)
    for shape in shapes:
        blob = rng.normal(size=shape).astype(np.float32)
        opencv = cv2.dnn.readNetFromONNX(str(model))
        opencv.setInput(blob)
        np.testing.assert_allclose(network.forward(blob), opencv.forward(), atol=1e-4)


def test_threads_reading_at_once_get_their_own_answers():
    network = OnnxNetwork(CLASSIFIER_PATH, "face classifier")
    blobs = [np.random.default_rng(seed).normal(size=(seed + 1, 3, 32, 32)).astype(np.float32) for seed in range(8)]
    alone = [network.forward(blob) for blob in blobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(network.forward, blobs * 3))
    for index, output in enumerate(together):
        np.testing.assert_array_equal(output, alone[index % len(blobs)])


def test_a_missing_model_is_reported_when_first_needed(tmp_path):
    network = OnnxNetwork(tmp_path / "none.onnx", "test model")
    with pytest.raises(FileNotFoundError, match="test model model not found"):
        network.forward(np.zeros((1, 3, 32, 32), np.float32))
