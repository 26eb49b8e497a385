"""The learned die-face classifier: cropping, the shipped ONNX model under cv2.dnn, bad input."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from drawn_dice import draw_die
from drawn_dice import tray as plain_tray
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.face_classifier import (
    CLASS_COUNT,
    CROP_SIZE,
    MODEL_PATH,
    NOT_A_FACE,
    SECOND_LOOK_BELOW,
    TRAINED_PATH,
    FaceClassifier,
    crop_faces,
    crops_to_blob,
    default_classifier,
    face_angle,
    upright_boxes,
)

REPO = Path(__file__).resolve().parents[1]
BYLER = REPO.parent / "shared" / "datasets" / "byler-d6"

def tray(width=320, height=240):
    return plain_tray(width, height, colour=(205, 200, 190), seed=None)


COLOURS = [
    ((245, 245, 245), (20, 20, 20)),  # white die, black pips
    ((30, 30, 170), (240, 240, 240)),  # red die, white pips
    ((25, 25, 25), (230, 230, 230)),  # black die, white pips
    ((60, 140, 40), (40, 220, 240)),  # green die, yellow pips
]


def test_the_model_ships_small_and_loads():
    assert MODEL_PATH.is_file()
    assert MODEL_PATH.stat().st_size < 5 * 1024 * 1024
    assert default_classifier() is default_classifier()
    image = tray()
    box = draw_die(image, 3, (160, 120), 40, 10, *COLOURS[0])
    [(value, confidence)] = default_classifier().classify(image, [box])
    assert value == 3 and 0.0 <= confidence <= 1.0


@pytest.mark.parametrize("die_colour, pip_colour", COLOURS)
def test_drawn_faces_are_read_at_any_angle(die_colour, pip_colour):
    image = tray(640, 200)
    boxes, values = [], []
    for value in range(1, 7):
        angle = value * 13.0
        boxes.append(draw_die(image, value, (55 + 105 * (value - 1), 100), 38, angle, die_colour, pip_colour))
        values.append(value)
    results = default_classifier().classify(image, boxes)
    assert [value for value, _ in results] == values
    assert all(confidence > 0.5 for _, confidence in results)
    # Boxes already along the faces' edges (the reader's) need not be turned again.
    assert [value for value, _ in default_classifier().classify(image, boxes, turned=True)] == values


def test_the_bare_tray_is_not_a_face():
    image = tray()
    draw_die(image, 5, (60, 60), 36, 0, *COLOURS[0])
    [(value, _)] = default_classifier().classify(image, [((230.0, 160.0), (36.0, 36.0), 0.0)])
    assert value is None


def test_batching_does_not_change_the_answers():
    image = tray(640, 200)
    boxes = [draw_die(image, v, (55 + 105 * (v - 1), 100), 36, 20 * v, *COLOURS[1]) for v in range(1, 7)]
    together = default_classifier().probabilities(image, boxes)
    alone = np.vstack([default_classifier().probabilities(image, [box]) for box in boxes])
    assert together.shape == (6, CLASS_COUNT)
    np.testing.assert_allclose(together, alone, atol=1e-4)
    np.testing.assert_allclose(together.sum(axis=1), 1.0, atol=1e-5)


def _sharp_and_blurred_faces() -> np.ndarray:
    """Drawn dice, sharp and blurred: crops the network is sure of and crops it doubts."""
    image = tray(640, 200)
    boxes = [draw_die(image, v, (55 + 105 * (v - 1), 100), 36, 0, *COLOURS[v % len(COLOURS)]) for v in range(1, 7)]
    pictures = [image] + [cv2.GaussianBlur(image, (0, 0), blur) for blur in (3.5, 4.5)]
    return np.concatenate([crop_faces(picture, boxes) for picture in pictures])


@pytest.mark.parametrize("quarter_turns, mirrored", [(q, m) for q in range(4) for m in (False, True)][1:])
def test_a_doubtful_face_reads_the_same_turned_or_mirrored(quarter_turns, mirrored):
    crops = _sharp_and_blurred_faces()
    moved = np.rot90(crops, quarter_turns, axes=(1, 2))
    moved = np.ascontiguousarray(moved[:, :, ::-1] if mirrored else moved)
    classifier = default_classifier()
    first, second = classifier.read_crops(crops), classifier.read_crops(moved)
    at_first_sight = [softmax_of(classifier.logits(crops_to_blob(c))) for c in (crops, moved)]
    doubtful = [single.max(axis=1) < SECOND_LOOK_BELOW for single in at_first_sight]
    both = doubtful[0] & doubtful[1]
    assert both.sum() >= 2 and not doubtful[0].all()
    # Read again in all eight views and averaged: the same whichever view came first.
    np.testing.assert_allclose(first[both], second[both], atol=1e-5)
    # A face the network is sure of at first sight keeps that first reading.
    np.testing.assert_allclose(first[~doubtful[0]], at_first_sight[0][~doubtful[0]], atol=1e-6)
    np.testing.assert_allclose(first.sum(axis=1), 1.0, atol=1e-5)


def softmax_of(logits: np.ndarray) -> np.ndarray:
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def test_no_boxes_gives_no_answers():
    assert default_classifier().classify(tray(), []) == []


@pytest.mark.parametrize(
    "box",
    [
        ((-50.0, -50.0), (30.0, 30.0), 0.0),  # wholly off the image
        ((318.0, 5.0), (40.0, 40.0), 30.0),  # mostly off a corner
        ((100.0, 100.0), (0.5, 0.5), 0.0),  # tiny
        ((100.0, 100.0), (0.0, 0.0), 0.0),  # degenerate
        ((100.0, 100.0), (900.0, 700.0), 45.0),  # far larger than the image
    ],
)
def test_awkward_boxes_get_an_answer_without_crashing(box):
    [(value, confidence)] = default_classifier().classify(tray(), [box])
    assert value is None or 1 <= value <= 6
    assert 0.0 <= confidence <= 1.0


@pytest.mark.parametrize(
    "box",
    [((float("nan"), 1.0), (10.0, 10.0), 0.0), ((1.0, 1.0), (-3.0, 10.0), 0.0), ((1.0, 1.0), 10.0, 0.0), None],
)
def test_malformed_boxes_are_refused_with_a_clear_error(box):
    with pytest.raises(ValueError, match="box"):
        default_classifier().classify(tray(), [box])


@pytest.mark.parametrize(
    "image", [np.zeros((0, 0, 3), np.uint8), np.zeros((10, 10, 3), np.float32), np.zeros((4, 4, 2), np.uint8), "x"]
)
def test_bad_images_are_refused_with_a_clear_error(image):
    with pytest.raises(ValueError, match="image"):
        default_classifier().classify(image, [((2.0, 2.0), (3.0, 3.0), 0.0)])


def test_grey_and_bgra_frames_are_accepted():
    colour = tray()
    box = draw_die(colour, 6, (160, 120), 40, 0, *COLOURS[0])
    grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    bgra = cv2.cvtColor(colour, cv2.COLOR_BGR2BGRA)
    assert default_classifier().classify(grey, [box])[0][0] == 6
    assert default_classifier().classify(bgra, [box])[0][0] == 6


def test_a_missing_model_file_is_reported_by_name(tmp_path):
    missing = tmp_path / "absent.onnx"
    with pytest.raises(FileNotFoundError, match="absent.onnx"):
        FaceClassifier(missing).classify(tray(), [((10.0, 10.0), (8.0, 8.0), 0.0)])


@settings(max_examples=40, deadline=None)
@given(
    angle=st.floats(0, 360),
    side=st.floats(20, 90),
    cx=st.floats(120, 180),
    cy=st.floats(120, 180),
)
def test_a_rotated_square_is_cropped_upright_and_centred(angle, side, cx, cy):
    image = np.zeros((300, 300, 3), np.uint8)  # large enough that neither square nor crop meets an edge
    corners = cv2.boxPoints(((cx, cy), (side, side), angle))
    cv2.fillPoly(image, [np.round(corners * 16).astype(np.int32)], (255, 255, 255), cv2.LINE_AA, shift=4)
    crop = crop_faces(image, [((cx, cy), (side, side), angle)], margin=1.3)[0, :, :, 0]
    edge = CROP_SIZE * (1 - 1 / 1.3) / 2  # where the square's sides land in the crop
    blur = 2.0 * CROP_SIZE / (side * 1.3)  # two source pixels of anti-aliasing and interpolation
    inside, outside = math.ceil(edge + blur), math.floor(edge - blur)
    assert crop[inside:-inside, inside:-inside].min() > 200  # the square fills its upright place...
    if outside > 0:  # ...and leaves the border bare on all four sides
        for border in (crop[:outside], crop[-outside:], crop[:, :outside], crop[:, -outside:]):
            assert border.max() < 60


def _quarter_turn_distance(a: float, b: float) -> float:
    """How far apart two angles are, in degrees, when quarter turns do not count (a square looks alike)."""
    return abs((a - b + 45.0) % 90.0 - 45.0)


@settings(max_examples=40, deadline=None)
@given(
    value=st.integers(1, 6),
    die_angle=st.floats(0, 360),
    box_angle=st.floats(0, 360),
    side=st.floats(26, 80),
    colours=st.sampled_from(COLOURS[1:]),
)
def test_boxes_are_turned_to_the_face_whatever_angle_they_came_with(value, die_angle, box_angle, side, colours):
    # Dice that stand out from the tray: a white die on this light tray shows almost no outline, and
    # then its pips alone set the turn (the network is trained on crops turned the same way).
    image = tray()
    draw_die(image, value, (160, 120), side, die_angle, *colours)
    [((cx, cy), (w, h), angle)] = upright_boxes(image, [((160.0, 120.0), (side, side), box_angle)])
    assert (cx, cy, w, h) == (160.0, 120.0, side, side)
    # The crop's own pixel grid pulls small dice some degrees, sixes most (the network is trained on
    # that too): the worst found, by random search and by this test, 7.4 degrees at 32 px across and
    # 13.2 at 26 px. A turn not found at all is up to 45 degrees off.
    assert _quarter_turn_distance(angle, die_angle) < (10.0 if side >= 32 else 16.0)


@settings(max_examples=30, deadline=None)
@given(turn=st.floats(-44, 44))
def test_the_face_angle_of_a_turned_square_is_its_turn(turn):
    image = np.full((CROP_SIZE, CROP_SIZE, 3), 200, np.uint8)
    middle = (CROP_SIZE - 1) / 2
    corners = cv2.boxPoints(((middle, middle), (CROP_SIZE * 0.6, CROP_SIZE * 0.6), turn))
    cv2.fillPoly(image, [np.round(corners * 16).astype(np.int32)], (30, 30, 30), cv2.LINE_AA, shift=4)
    assert abs(face_angle(image) - turn) < 2.5


def test_a_featureless_crop_is_left_unturned():
    assert face_angle(np.full((CROP_SIZE, CROP_SIZE, 3), 90, np.uint8)) == 0.0


@settings(max_examples=30, deadline=None)
@given(gain=st.floats(0.3, 1.0), offset=st.integers(0, 60), seed=st.integers(0, 2**16))
def test_brightness_and_contrast_do_not_change_the_network_input(gain, offset, seed):
    rng = np.random.default_rng(seed)
    crops = rng.integers(0, 180, (2, CROP_SIZE, CROP_SIZE, 3)).astype(np.uint8)
    dimmer = np.round(crops * gain + offset).astype(np.uint8)
    np.testing.assert_allclose(crops_to_blob(dimmer), crops_to_blob(crops), atol=0.05)


def _training_tool():
    sys.path.insert(0, str(REPO / "tools"))
    import train_face_classifier

    return train_face_classifier


@pytest.mark.parametrize("jittered", [False, True], ids=["labelled boxes", "jittered boxes"])
def test_real_photos_of_the_test_split_are_read_accurately(jittered):
    if not (BYLER / "split.csv").is_file():
        pytest.skip(f"labelled photos not found at {BYLER}")
    tool = _training_tool()
    data = tool.load_split(BYLER, "test")
    rng = np.random.default_rng(11)
    right = total = 0
    for index, image in enumerate(data.images):
        dice = data.dice_of(index)
        boxes = [tool.MEASURED_JITTER.box(d, rng) if jittered else tool.label_box(d) for d in dice]
        results = default_classifier().classify(image, boxes)
        right += sum(value == die.value for (value, _), die in zip(results, dice))
        total += len(dice)
    assert total > 250
    assert right / total >= ACCURACY_FLOOR


def test_a_renders_cocked_die_is_taught_as_no_face_and_a_photos_dice_as_labelled(tmp_path):
    tool = _training_tool()
    for folder in ("render", "photo"):
        (tmp_path / folder / "images").mkdir(parents=True)
        (tmp_path / folder / "labels").mkdir()
        cv2.imwrite(str(tmp_path / folder / "images" / "a.jpg"), np.full((100, 200, 3), 90, np.uint8))
        (tmp_path / folder / "labels" / "a.txt").write_text("0 0.25 0.5 0.2 0.4\n2 0.75 0.5 0.2 0.4\n")
        (tmp_path / folder / "manifest.csv").write_text("image,values,status\na.jpg,1-3,unsure\n")
    (tmp_path / "render" / "truth").mkdir()
    (tmp_path / "render" / "truth" / "a.json").write_text(json.dumps({"dice": [
        {"value": 1, "x": 50.0, "y": 50.0, "cocked": False}, {"value": 3, "x": 150.2, "y": 49.9, "cocked": True}]}))
    rendered = tool.load_split(tmp_path / "render", None)
    photographed = tool.load_split(tmp_path / "photo", None)
    assert [(d.value, d.readable) for d in rendered.dice] == [(1, True), (3, False)]
    assert [(d.value, d.readable) for d in photographed.dice] == [(1, True), (3, True)]


# Measured on the byler-d6 test split, with labelled and with jittered boxes (98.4 % and 97.7 %, see
# README): a little below both.
ACCURACY_FLOOR = 0.96


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), side=st.floats(10, 200), cx=st.floats(-50, 700), cy=st.floats(-50, 700))
def test_jittered_boxes_stay_within_their_bounds(seed, side, cx, cy):
    tool = _training_tool()
    die = tool.LabelledDie(0, cx, cy, side, 3)
    for jitter in (tool.MEASURED_JITTER, tool.TRAINING_JITTER):
        (x, y), (w, h), angle = jitter.box(die, np.random.default_rng(seed))
        assert jitter.smallest * side <= w <= jitter.largest * side
        assert 0.9 * w <= h <= w
        assert abs(x - cx) <= jitter.offset * w + 1e-9 and abs(y - cy) <= jitter.offset * w + 1e-9
        assert 0 <= angle <= 360


@settings(max_examples=40, deadline=None)
@given(
    losses=st.lists(st.tuples(st.integers(0, 9), st.floats(0, 20)), min_size=1, max_size=40),
    cap=st.floats(0.5, 8),
)
def test_hard_dice_are_drawn_more_often_but_never_beyond_the_cap(losses, cap):
    hard = _training_tool().HardDice(10, boost_cap=cap)
    shown = np.array([index for index, _ in losses] + [-1])  # -1: a box off the dice, not recorded
    hard.record(shown, np.array([loss for _, loss in losses] + [1000.0]))
    weights = hard.weights()
    assert weights.shape == (10,)
    assert np.all(weights >= 1.0) and np.all(weights <= 1.0 + cap + 1e-9)
    seen = sorted({index for index, _ in losses})
    worst = max(seen, key=lambda index: hard.loss[index])
    best = min(seen, key=lambda index: hard.loss[index])
    assert weights[worst] >= weights[best]
    unseen = [index for index in range(10) if index not in seen]
    assert all(weights[index] == weights[unseen[0]] for index in unseen)  # all counted as average


def _drawn_die_augmented(augmentation: str, value: int, colours, seed: int):
    """The crop of a drawn die, and the same crop through one of the trainer's augmentations."""
    image = tray()
    box = draw_die(image, value, (160, 120), 40, 0, *colours)
    crop = crop_faces(image, [box])[0]
    augmented = getattr(_training_tool(), augmentation)(crop, np.random.default_rng(seed))
    assert augmented.shape == crop.shape and augmented.dtype == np.uint8
    return crop, augmented


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), value=st.integers(1, 6))
def test_a_smeared_die_loses_its_pips_but_keeps_its_colour(seed, value):
    crop, smeared = _drawn_die_augmented("smeared", value, COLOURS[0], seed)
    assert abs(float(smeared.mean()) - float(crop.mean())) < 4.0

    def detail(c):
        return float(np.abs(cv2.Laplacian(c.astype(np.float32), cv2.CV_32F)).mean())

    # At most 0.64 of the detail is left over 1800 smears measured (0.4 typically): the die's outline
    # stays sharp where it runs along the smear.
    assert detail(smeared) < 0.7 * detail(crop)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), value=st.integers(1, 6))
def test_a_glint_only_brightens_a_few_thin_strokes_of_the_face(seed, value):
    crop, glinted = _drawn_die_augmented("with_glint", value, COLOURS[1], seed)
    # nothing darkens but what was already whiter than a glint may be
    assert (glinted.astype(np.int16) >= np.minimum(crop, 225) - 1).all()
    brightened = (glinted.astype(np.int16) - crop).max(axis=2) > 10
    assert 0 < np.count_nonzero(brightened) < 0.25 * CROP_SIZE**2


def test_the_threshold_curve_lets_through_only_the_allowed_wrong_values():
    tool = _training_tool()
    confidence = np.array([0.99, 0.97, 0.9, 0.6, 0.95])
    wrong = np.array([False, True, True, True, False])
    for allowed in range(4):
        threshold = tool._lowest_threshold_allowing(confidence, wrong, allowed)
        assert int((wrong & (confidence >= threshold)).sum()) == min(allowed, 3)
        # ...and it is the lowest such threshold: one step lower lets one more through when any is left.
        if allowed < 3:
            assert int((wrong & (confidence >= np.nextafter(threshold, 0.0))).sum()) == allowed + 1


def test_a_network_slimmed_to_its_own_width_is_the_same_network():
    torch = pytest.importorskip("torch", reason="torch is in the train extra: pip install -e '.[train]'")
    tool = _training_tool()
    torch.manual_seed(3)
    wide = tool.build_network(8, deep=True)
    with torch.no_grad():  # BatchNorm scales and statistics other than their defaults
        for module in wide.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.2, 2.0)
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2.0)
    same = tool.build_network(8, deep=True)
    tool.slim_into(same, wide.state_dict())
    crops = torch.randn(4, 3, CROP_SIZE, CROP_SIZE)
    wide.eval(), same.eval()
    with torch.no_grad():
        assert torch.equal(wide(crops), same(crops))


def test_a_slimmed_network_keeps_the_channels_with_the_largest_batchnorm_scale():
    torch = pytest.importorskip("torch", reason="torch is in the train extra: pip install -e '.[train]'")
    tool = _training_tool()
    wide = tool.build_network(8, deep=False)
    first_norm = wide[1]
    with torch.no_grad():
        first_norm.weight.copy_(torch.tensor([0.1, 5.0, 0.2, 4.0, 0.3, 3.0, 0.4, 0.5]))
    narrow = tool.build_network(4, deep=False)
    tool.slim_into(narrow, wide.state_dict())
    kept = [1, 3, 5, 7]
    assert torch.equal(narrow[0].weight, wide[0].weight[kept])
    assert torch.equal(narrow[1].weight, first_norm.weight[kept])
    # The next convolution keeps its own strongest outputs, and reads only the channels kept before it.
    next_kept = torch.argsort(wide[5].weight.abs(), descending=True)[:8].sort().values
    assert torch.equal(narrow[4].weight, wide[4].weight[next_kept][:, kept])


def test_reading_doubtful_faces_straight_in_their_views_gives_what_classify_gives():
    image = tray(640, 200)
    boxes = [draw_die(image, v, (55 + 105 * (v - 1), 100), 36, 0, *COLOURS[v % len(COLOURS)]) for v in range(1, 7)]
    blurred = cv2.GaussianBlur(image, (0, 0), 4.5)
    first = default_classifier().classify(blurred, boxes, turned=True, second_look=False)
    doubtful = [box for box, (_, confidence) in zip(boxes, first) if confidence < SECOND_LOOK_BELOW]
    assert doubtful
    in_views = default_classifier().classify_in_views(blurred, doubtful)
    as_needed = default_classifier().classify(blurred, doubtful, turned=True)
    assert [value for value, _ in in_views] == [value for value, _ in as_needed]
    np.testing.assert_allclose([c for _, c in in_views], [c for _, c in as_needed], atol=1e-5)


@pytest.mark.parametrize("least", [0.0, 0.5, 0.8, 0.95])
def test_a_square_is_left_out_only_when_no_value_it_could_read_would_be_of_use(least):
    image = tray(640, 200)
    boxes = [draw_die(image, v, (55 + 105 * (v - 1), 100), 36, 0, *COLOURS[v % len(COLOURS)]) for v in range(1, 7)]
    blurred = cv2.GaussianBlur(image, (0, 0), 4.5)
    classifier = default_classifier()
    crops = crop_faces(blurred, boxes)
    # The mean over the four quarter turns of each crop, each read on its own.
    turns = np.mean([classifier.read_crops(np.ascontiguousarray(np.rot90(crops, quarter, axes=(1, 2))),
                                           second_look=False) for quarter in range(4)], axis=0)
    worth_it = classifier.values_in_views(blurred, boxes, [least] * len(boxes))
    for row, kept in zip(turns, worth_it):
        best = int(np.argmax(row))
        if kept is None:
            assert best == NOT_A_FACE or row[best] < least
        else:
            assert kept.value == (None if best == NOT_A_FACE else best + 1)
            assert kept.confidence == pytest.approx(row[best], abs=1e-5)
    if least == 0.0:
        assert None not in worth_it
    if least == 0.95:
        assert None in worth_it  # the blurred faces are read doubtfully: most are not worth all four turns


class _UnsureAtFirst:
    """A network reading every face as a three: at 0.6 in its first pass, all but surely after."""

    def __init__(self):
        self.passes = 0

    def forward(self, blob):
        self.passes += 1
        logits = np.zeros((len(blob), CLASS_COUNT), np.float32)
        logits[:, 2] = math.log(9.0) if self.passes == 1 else 50.0  # 9 / (9 + 6) = 0.6
        return logits


def test_a_square_is_read_in_all_four_turns_when_the_last_two_could_still_make_it_of_use():
    classifier = FaceClassifier()
    classifier.network = _UnsureAtFirst()
    image = tray()
    boxes = [draw_die(image, 3, (80, 120), 40, 0, *COLOURS[0]), draw_die(image, 3, (240, 120), 40, 0, *COLOURS[0])]
    # Two turns at 0.6 and two surely average 0.8: of use from 0.79, not from 0.81.
    first, second = classifier.values_in_views(image, boxes, [0.79, 0.81])
    assert second is None and first is not None
    assert first.value == 3 and first.confidence == pytest.approx(0.8, abs=1e-4)
    assert classifier.network.passes == 2


def test_learning_from_a_teacher_blends_its_softened_answers_with_the_labels():
    torch = pytest.importorskip("torch", reason="torch is in the train extra: pip install -e '.[train]'")
    tool = _training_tool()
    torch.manual_seed(5)
    student, teacher = torch.randn(6, CLASS_COUNT), torch.randn(6, CLASS_COUNT)
    labels = torch.randint(0, CLASS_COUNT, (6,))
    on_labels = tool.per_die_loss(student, labels)
    # Without a teacher, or with none of its say, only the labels count.
    assert torch.allclose(tool.per_die_loss(student, labels, teacher, share=0.0), on_labels)
    # A student that answers as the teacher does has nothing to learn from it...
    copied = tool.per_die_loss(teacher, labels, teacher, share=1.0)
    assert torch.allclose(copied, torch.zeros(6), atol=1e-6)
    # ...and one that differs has, more so the more it differs.
    assert (tool.per_die_loss(student, labels, teacher, share=1.0) > 1e-3).all()
    halfway = tool.per_die_loss(0.5 * (student + teacher), labels, teacher, share=1.0)
    assert (halfway < tool.per_die_loss(student, labels, teacher, share=1.0)).all()
    # Between, the two are blended.
    mixed = tool.per_die_loss(student, labels, teacher, share=0.25)
    assert torch.allclose(mixed, 0.75 * on_labels + 0.25 * tool.per_die_loss(student, labels, teacher, share=1.0))


@pytest.mark.parametrize("which", ["classifier", "detector"])
def test_training_starts_from_the_shipped_networks_as_they_were_exported(which):
    """The shipped networks are kept as ONNX only; training on from them must start where they are."""
    torch = pytest.importorskip("torch", reason="torch is in the train extra: pip install -e '.[train]'")
    pytest.importorskip("onnx", reason="onnx is in the train extra: pip install -e '.[train]'")
    tool = _training_tool()  # puts tools/ and the repository on the path, as running the tools does
    from tools.onnx_start import weights_from_onnx
    from vision.die_detector import MODEL_PATH as DETECTOR_PATH
    from vision.die_detector import DieDetector

    if which == "classifier":
        net, path, shape = tool.build_network(24, deep=True), TRAINED_PATH, (3, 3, CROP_SIZE, CROP_SIZE)
        shipped = FaceClassifier(TRAINED_PATH).logits
    else:
        from train_die_detector import build_network as build_detector

        net, path, shape = build_detector(), DETECTOR_PATH, (1, 3, 120, 160)
        shipped = lambda blob: DieDetector().raw_output(blob)[None]  # noqa: E731
    weights_from_onnx(net, path)
    net.eval()
    blob = np.random.default_rng(5).normal(size=shape).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(blob)).numpy()
    assert np.abs(ours - shipped(blob)).max() < 1e-3


@pytest.mark.parametrize("width", [8, 12])
def test_a_detector_of_any_width_gives_the_output_the_reader_decodes(width):
    torch = pytest.importorskip("torch", reason="torch is in the train extra: pip install -e '.[train]'")
    _training_tool()  # puts tools/ on the path
    from train_die_detector import build_network as build_detector

    from vision.die_detector import OUTPUT_CHANNELS, STRIDE

    net = build_detector(width).eval()
    with torch.no_grad():
        output = net(torch.zeros(1, 3, 120, 160))
    assert tuple(output.shape) == (1, OUTPUT_CHANNELS, 120 // STRIDE, 160 // STRIDE)
    first = next(module for module in net.modules() if isinstance(module, torch.nn.Conv2d))
    assert first.out_channels == width
