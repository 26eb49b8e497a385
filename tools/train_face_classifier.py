"""Train, export and measure the die-face classifier used by vision/face_classifier.py.

    .venv/bin/pip install -e '.[train]'
    .venv/bin/python tools/train_face_classifier.py train       # writes vision/models/face_classifier.onnx
    .venv/bin/python tools/quantize_classifier.py --pictures samples --pictures GENERATED   # the one the reader runs
    .venv/bin/python tools/train_face_classifier.py evaluate    # byler-d6 TEST split, as the reader runs it

Training reads the photo sets given with --photos (by default only the TRAIN split of
../shared/datasets/byler-d6, the author's split.csv) and generated pictures (--generated). Every
training crop is cut with the same vision.face_classifier.face_crops the table uses (turned to the face's
own edges), from a box made around a labelled die at a random angle (0-360 deg), size (the labels are
upright boxes, a reader's box may be tighter or looser) and offset, then jittered in colour, contrast,
light, blur, noise and JPEG.
"Not a die face" examples are boxes on the bare tray, between two dice, or half off a die.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.onnx_start import freeze_norms, weights_from_onnx  # noqa: E402
from vision.face_classifier import (  # noqa: E402
    CLASS_COUNT,
    CROP_MARGIN,
    CROP_SIZE,
    FACE_VALUES,
    MODEL_PATH,
    NOT_A_FACE,
    TRAINED_PATH,
    FaceClassifier,
    crops_to_blob,
    face_crops,
)
from vision.labelled import load_folder  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "byler-d6"
# Offsets up to this fraction of the die's side still count as "on the die"; from NEGATIVE_OFFSET on
# the box is called "not a die face". Between the two nothing is trained, so the border stays soft.
POSITIVE_OFFSET = 0.15
NEGATIVE_OFFSET = 0.6


@dataclass(frozen=True)
class LabelledDie:
    image: int
    cx: float
    cy: float
    side: float
    value: int
    readable: bool = True  # False for a cocked die: its top face is not flat to the camera


@dataclass
class LabelledSet:
    names: list[str]
    images: list[np.ndarray]
    dice: list[LabelledDie]

    def dice_of(self, image: int) -> list[LabelledDie]:
        return [die for die in self.dice if die.image == image]


def photo_sets(specs: list[str]) -> LabelledSet:
    """The photos of every `FOLDER[:SPLIT]` given (a whole folder without a split), merged."""
    data = LabelledSet([], [], [])
    for spec in specs:
        folder, _, split = spec.partition(":")
        photos = load_split(Path(folder), split or None)
        part = f" ({split} split)" if split else ""
        print(f"photos: {len(photos.names)} ({len(photos.dice)} dice) from {folder}{part}")
        data = merged(data, photos)
    return data


def load_split(dataset: Path, split: str | None) -> LabelledSet:
    """The photos of one split with their dice, known label errors set right (vision.labelled)."""
    if not (dataset / "manifest.csv").is_file() or (split and not (dataset / "split.csv").is_file()):
        raise SystemExit(f"no labelled photos at {dataset} (manifest.csv or split.csv missing)")
    names: list[str] = []
    images: list[np.ndarray] = []
    dice: list[LabelledDie] = []
    for label in sorted(load_folder(dataset, split), key=lambda label: label.path.name):
        image = cv2.imread(str(label.path), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"cannot read {label.path}")
        height, width = image.shape[:2]
        # A render's label boxes its die's top face, whose own centre the truth gives: within 2 px.
        cocked = cocked_dice(dataset / "truth" / f"{label.path.stem}.json")
        dice += [LabelledDie(len(images), die.x, die.y, math.sqrt(die.width * die.height), die.value,
                             not any(math.dist((die.x, die.y), centre) < 2.0 for centre in cocked))
                 for die in label.boxes_in_pixels(width, height) or ()]
        names.append(label.path.name)
        images.append(image)
    return LabelledSet(names, images, dice)


def cocked_dice(truth_file: Path) -> list[tuple[float, float]]:
    """The centres of the dice a render's truth (tools/render) says lean on a die or a wall: their top
    face is labelled, but the camera sees it askew beside a side face, so it is taught as "not a die
    face" (as in generated pictures), for the reader to leave such a die unsure. [] for a photo."""
    if not truth_file.is_file():
        return []
    return [(d["x"], d["y"]) for d in json.loads(truth_file.read_text())["dice"] if d["cocked"]]


# The photos' labels are upright boxes round the top face, 1 to 1.41 times the face's side; the
# generated pictures give the face's own side, scaled here to the middle of that range.
GENERATED_SIDE_SCALE = 1.2


def load_generated(folder: Path) -> LabelledSet:
    """Pictures written by `python -m vision.synth --out FOLDER` (truth/*.json beside images/).

    Pictures with a hand in view are left out (their dice may be covered); in pictures with motion
    blur every die counts as "not a die face", since a smeared five looks like a six.
    """
    names: list[str] = []
    images: list[np.ndarray] = []
    dice: list[LabelledDie] = []
    for truth_file in sorted((folder / "truth").glob("*.json")):
        truth = json.loads(truth_file.read_text())
        if "hand in view" in truth["problems"]:
            continue
        smeared = "motion blur" in truth["problems"]
        image = cv2.imread(str(folder / "images" / truth["image"]), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"cannot read {folder / 'images' / truth['image']}")
        index = len(images)
        names.append(truth["image"])
        images.append(image)
        dice += [
            LabelledDie(index, d["x"], d["y"], d["size"] * GENERATED_SIDE_SCALE, d["value"],
                        not (d["cocked"] or smeared))
            for d in truth["dice"]
        ]
    return LabelledSet(names, images, dice)


def merged(first: LabelledSet, second: LabelledSet) -> LabelledSet:
    shift = len(first.images)
    return LabelledSet(
        first.names + second.names,
        first.images + second.images,
        first.dice + [LabelledDie(d.image + shift, d.cx, d.cy, d.side, d.value, d.readable) for d in second.dice],
    )


def label_box(die: LabelledDie):
    return ((die.cx, die.cy), (die.side, die.side), 0.0)


@dataclass(frozen=True)
class BoxJitter:
    """How far a box handed to the classifier may be from the labelled one: the centre up to `offset`
    of the side off along each axis, the side `smallest` to `largest` times the labelled side, any angle."""

    offset: float
    smallest: float
    largest: float

    def box(self, die: LabelledDie, rng: np.random.Generator):
        side = die.side * rng.uniform(self.smallest, self.largest)
        dx, dy = rng.uniform(-self.offset, self.offset, 2) * side
        return ((die.cx + dx, die.cy + dy), (side, side * rng.uniform(0.92, 1.0)), rng.uniform(0, 360))

    def describe(self) -> str:
        return f"any angle, side x{self.smallest}-{self.largest}, centre up to {self.offset:.0%} off"


# What the die finder promises: centre within ~10% of the side, side within ~15-20%, angle unknown.
MEASURED_JITTER = BoxJitter(offset=0.10, smallest=0.8, largest=1.2)
# Training asks a little more. An upright label round a die turned 45 deg is sqrt(2) times the face,
# so a rotated box fitted to the face itself is down to 0.71 times the label.
TRAINING_JITTER = BoxJitter(offset=POSITIVE_OFFSET, smallest=0.7, largest=1.3)


def _far_from_every_die(x: float, y: float, dice: list[LabelledDie]) -> bool:
    return all(math.hypot(x - d.cx, y - d.cy) >= NEGATIVE_OFFSET * d.side for d in dice)


def negative_box(dice: list[LabelledDie], shape, rng: np.random.Generator):
    """A box that is not on any one die: bare tray, between two dice, or half off a die."""
    height, width = shape[:2]
    for _ in range(50):
        anchor = dice[rng.integers(len(dice))]
        side = anchor.side * rng.uniform(TRAINING_JITTER.smallest, TRAINING_JITTER.largest)
        kind = rng.integers(3)
        if kind == 0:
            x, y = rng.uniform(0, width), rng.uniform(0, height)
        elif kind == 1:
            other = min(
                (d for d in dice if d is not anchor),
                key=lambda d: math.hypot(d.cx - anchor.cx, d.cy - anchor.cy),
                default=None,
            )
            if other is None:
                continue
            x, y = (anchor.cx + other.cx) / 2, (anchor.cy + other.cy) / 2
        else:
            direction = rng.uniform(0, 2 * math.pi)
            reach = anchor.side * rng.uniform(NEGATIVE_OFFSET, 1.0)
            x, y = anchor.cx + reach * math.cos(direction), anchor.cy + reach * math.sin(direction)
        if _far_from_every_die(x, y, dice):
            return ((x, y), (side, side), rng.uniform(0, 360))
    return None


def _jpeg(crop: np.ndarray, quality: int) -> np.ndarray:
    ok, encoded = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR) if ok else None
    return crop if decoded is None else decoded


def smeared(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop dragged along a straight line a third to two thirds of the die's side: motion blur that
    leaves the pips unreadable (a smeared five looks like a six)."""
    face_px = CROP_SIZE / CROP_MARGIN
    length = max(3, int(round(face_px * rng.uniform(0.35, 0.7))) | 1)
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    turn = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), rng.uniform(0, 180), 1.0)
    turned = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(crop, -1, turned / turned.sum(), borderType=cv2.BORDER_REPLICATE)


# cv2.ellipse takes fractional centres and axes as integers in 1/2**ELLIPSE_SHIFT of a pixel.
ELLIPSE_SHIFT = 4
ELLIPSE_UNIT = 1 << ELLIPSE_SHIFT


def with_speck(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A crumb, a fleck of dirt or a drop near the middle of a crop of bare tray: alone, with no die's
    outline round it, it is no one (byler-d6 photos with a speck of dust had it read as a one)."""
    speck = crop.copy()
    centre = (CROP_SIZE - 1) / 2 + rng.uniform(-0.15, 0.15, 2) * CROP_SIZE
    axes = rng.uniform(0.03, 0.12, 2) * CROP_SIZE
    colour = rng.integers(0, 256, 3) if rng.random() < 0.3 else np.full(3, rng.integers(0, 90))
    unit = ELLIPSE_UNIT
    cv2.ellipse(speck, (int(centre[0] * unit), int(centre[1] * unit)),
                (max(int(axes[0] * unit), unit // 2), max(int(axes[1] * unit), unit // 2)),
                rng.uniform(0, 180), 0, 360, tuple(int(c) for c in colour), -1, cv2.LINE_AA, shift=ELLIPSE_SHIFT)
    return cv2.GaussianBlur(speck, (0, 0), rng.uniform(0.3, 1.0))


def with_glint(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One to three thin bright arcs over a die's face: the light a glossy die's rounded edges and
    polished face catch. Long and thin, unlike a pip: a glint across a shiny two was read as a three."""
    fine = 4  # drawn four times finer, then shrunk: strokes under a pixel wide
    side = CROP_SIZE * fine
    layer = np.zeros((side, side), np.float32)
    half_face = CROP_SIZE / CROP_MARGIN / 2 * fine
    unit = ELLIPSE_UNIT
    for _ in range(int(rng.integers(1, 4))):
        centre = (side - 1) / 2 + rng.uniform(-0.35, 0.35, 2) * half_face
        radius = rng.uniform(0.5, 1.1) * half_face
        axes = (radius, radius * rng.uniform(0.3, 1.0))
        start = rng.uniform(0, 360)
        cv2.ellipse(layer, (int(centre[0] * unit), int(centre[1] * unit)), (int(axes[0] * unit), int(axes[1] * unit)),
                    rng.uniform(0, 180), start, start + rng.uniform(40, 110), float(rng.uniform(0.5, 1.0)),
                    int(rng.integers(3, 10)), cv2.LINE_AA, shift=ELLIPSE_SHIFT)
    glint = cv2.resize(layer, (CROP_SIZE, CROP_SIZE), interpolation=cv2.INTER_AREA)[..., None]
    white = rng.uniform(225, 255, 3).astype(np.float32)
    return np.clip(crop * (1 - glint) + white * glint, 0, 255).astype(np.uint8)


def photometric_jitter(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Colour, contrast, light, blur, noise and compression changes a real table would bring."""
    if rng.random() < 0.5:
        hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV).astype(np.int16)
        hsv[..., 0] = (hsv[..., 0] + rng.integers(180)) % 180
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.6, 1.4), 0, 255)
        crop = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    if rng.random() < 0.5:
        crop = crop[..., rng.permutation(3)]
    if rng.random() < 0.15:
        crop = cv2.cvtColor(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    if rng.random() < 0.2:
        crop = 255 - crop
    values: np.ndarray = crop.astype(np.float32)
    values = values * rng.uniform(0.7, 1.3) + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        ramp = np.linspace(-1, 1, CROP_SIZE, dtype=np.float32)
        angle = rng.uniform(0, 2 * math.pi)
        light = np.cos(angle) * ramp[None, :] + np.sin(angle) * ramp[:, None]
        values = values + rng.uniform(10, 60) * light[..., None]
    values = 255.0 * (np.clip(values, 0, 255) / 255.0) ** rng.uniform(0.75, 1.33)
    if rng.random() < 0.2:
        values = cv2.GaussianBlur(values, (0, 0), rng.uniform(0.3, 0.8))
    if rng.random() < 0.4:
        values = values + rng.normal(0, rng.uniform(1, 6), values.shape)
    crop = np.clip(values, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        crop = _jpeg(crop, int(rng.integers(50, 95)))
    return crop


def training_batch(
    data: LabelledSet,
    count: int,
    negative_share: float,
    rng: np.random.Generator,
    die_weights: np.ndarray | None = None,
    smear_share: float = 0.0,
    speck_share: float = 0.0,
    glint_share: float = 0.0,
):
    """`count` augmented crops, their labels, and the index of the die each face crop shows (-1 for a
    box off the dice or a smeared die). Dice are drawn in proportion to `die_weights` (uniformly
    without); `smear_share` of the face crops are smeared by motion and labelled "not a die face", and
    `speck_share` of the boxes off the dice get a speck near their middle, and `glint_share` of the face
    crops a glint."""
    crops = np.empty((count, CROP_SIZE, CROP_SIZE, 3), np.uint8)
    labels = np.empty(count, np.int64)
    shown = np.full(count, -1, np.int64)
    chance = None if die_weights is None else die_weights / die_weights.sum()
    filled = 0
    while filled < count:
        index = int(rng.choice(len(data.dice), p=chance))
        die = data.dice[index]
        image = data.images[die.image]
        off_dice = rng.random() < negative_share
        if off_dice:
            box = negative_box(data.dice_of(die.image), image.shape, rng)
            if box is None:
                continue
            label = NOT_A_FACE
        else:
            box, label = TRAINING_JITTER.box(die, rng), (die.value - 1 if die.readable else NOT_A_FACE)
            shown[filled] = index
        crop = face_crops(image, [box])[0]
        if off_dice and rng.random() < speck_share:
            crop = with_speck(crop, rng)
        if label != NOT_A_FACE and rng.random() < glint_share:
            crop = with_glint(crop, rng)
        if label != NOT_A_FACE and rng.random() < smear_share:
            crop, label, shown[filled] = smeared(crop, rng), NOT_A_FACE, -1
        crops[filled] = photometric_jitter(crop, rng)
        labels[filled] = label
        filled += 1
    return crops, labels, shown


class HardDice:
    """Draws dice the network still gets wrong more often: each die's weight is 1 plus its recent loss
    over the average (capped, so a mislabelled die cannot take over the training)."""

    def __init__(self, count: int, boost_cap: float, memory: float = 0.7):
        self.loss = np.ones(count)
        self.seen = np.zeros(count, bool)
        self.boost_cap = boost_cap
        self.memory = memory

    def record(self, shown: np.ndarray, losses: np.ndarray) -> None:
        face = shown >= 0
        for index, loss in zip(shown[face], losses[face]):
            old = self.loss[index] if self.seen[index] else loss
            self.loss[index] = self.memory * old + (1 - self.memory) * loss
            self.seen[index] = True

    def weights(self) -> np.ndarray:
        average = self.loss[self.seen].mean() if self.seen.any() else 1.0
        # A die not drawn yet counts as average.
        loss = np.where(self.seen, self.loss, average)
        return 1.0 + np.minimum(loss / max(average, 1e-6), self.boost_cap)


def build_network(width: int = 20, deep: bool = False):
    """About 95k parameters at width 20 (61k at 16); the work per crop grows with width squared.
    `deep` gives the middle two scales a second convolution: a wider view of the pip pattern; at width
    24, 241k parameters and about twice the time of width 20 without it."""
    import torch.nn as nn

    def block(channels_in: int, channels_out: int) -> list:
        return [
            nn.Conv2d(channels_in, channels_out, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels_out),
            nn.ReLU(inplace=True),
        ]

    def stage(channels_in: int, channels_out: int, second: bool) -> list:
        return block(channels_in, channels_out) + (block(channels_out, channels_out) if second else [])

    # Plain Conv/BatchNorm/ReLU/MaxPool/GlobalAveragePool/Gemm: what ONNX Runtime and OpenCV 4.11 and 5.x run.
    return nn.Sequential(
        *stage(3, width, False),
        nn.MaxPool2d(2),
        *stage(width, 2 * width, deep),
        nn.MaxPool2d(2),
        *stage(2 * width, 4 * width, deep),
        nn.MaxPool2d(2),
        *stage(4 * width, 4 * width, False),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(4 * width, CLASS_COUNT),
    )


def slim_into(net, wider: dict) -> None:
    """Start a narrower network from a trained wider one of the same layout: each convolution keeps the
    output channels whose BatchNorm scale is largest (the ones the wider network leans on most), and the
    layer after it the matching inputs. A head start for a cheaper network, to be trained on from there."""
    import torch

    kept_inputs = torch.arange(3)
    state = {}
    modules = list(net.named_modules())[1:]
    for (name, module), (next_name, _) in zip(modules, modules[1:] + [("", None)]):
        if isinstance(module, torch.nn.Conv2d):
            scale = wider[f"{next_name}.weight"].abs()
            kept = torch.sort(torch.argsort(scale, descending=True)[: module.out_channels]).values
            state[f"{name}.weight"] = wider[f"{name}.weight"][kept][:, kept_inputs]
            for field in ("weight", "bias", "running_mean", "running_var"):
                state[f"{next_name}.{field}"] = wider[f"{next_name}.{field}"][kept]
            state[f"{next_name}.num_batches_tracked"] = wider[f"{next_name}.num_batches_tracked"]
            kept_inputs = kept
        elif isinstance(module, torch.nn.Linear):
            state[f"{name}.weight"] = wider[f"{name}.weight"][:, kept_inputs]
            state[f"{name}.bias"] = wider[f"{name}.bias"]
    net.load_state_dict(state)


# How much a student network's answers are softened before comparing them with its teacher's: at 1 a
# teacher sure of a face shows little of what else the crop resembles.
TEACHER_TEMPERATURE = 3.0


def per_die_loss(logits, labels, teacher_logits=None, share: float = 0.0):
    """Per crop: cross-entropy with the labels (smoothed a little), blended by `share` with the
    divergence from a teacher's softened answers (scaled by the temperature squared, so its pull does
    not shrink as the answers soften). Learning from a wider network's answers as well as the labels
    teaches a narrower one where the wider one is unsure, not only what the crop is."""
    import torch.nn.functional as F

    on_labels = F.cross_entropy(logits, labels, label_smoothing=0.05, reduction="none")
    if teacher_logits is None or share == 0.0:
        return on_labels
    taught = F.kl_div(F.log_softmax(logits / TEACHER_TEMPERATURE, dim=1),
                      F.log_softmax(teacher_logits / TEACHER_TEMPERATURE, dim=1),
                      reduction="none", log_target=True).sum(dim=1) * TEACHER_TEMPERATURE ** 2
    return (1.0 - share) * on_labels + share * taught


def _accuracy(net, crops: np.ndarray, labels: np.ndarray) -> float:
    import torch

    net.eval()
    with torch.no_grad():
        predicted = net(torch.from_numpy(crops_to_blob(crops))).argmax(1).numpy()
    return float((predicted == labels).mean())


def _fixed_crops(data: LabelledSet, jitter_seed: int | None):
    rng = np.random.default_rng(jitter_seed)
    crops: list[np.ndarray] = []
    labels: list[int] = []
    for index, image in enumerate(data.images):
        dice = data.dice_of(index)
        boxes = [label_box(d) if jitter_seed is None else MEASURED_JITTER.box(d, rng) for d in dice]
        if boxes:
            crops.append(face_crops(image, boxes))
            labels.extend(d.value - 1 for d in dice)
    return np.concatenate(crops), np.array(labels)


def export_onnx(net, path: Path) -> None:
    import torch

    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    example = torch.zeros(1, 3, CROP_SIZE, CROP_SIZE)
    torch.onnx.export(
        net,
        (example,),
        str(path),
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "batch"}, "logits": {0: "batch"}},
        opset_version=13,
        dynamo=False,
    )


def check_export(net, path: Path, crops: np.ndarray) -> float:
    """Largest difference between torch's logits and the reader's (ONNX Runtime) on the same crops."""
    import torch

    blob = crops_to_blob(crops)
    net.eval()
    with torch.no_grad():
        expected = net(torch.from_numpy(blob)).numpy()
    actual = FaceClassifier(path).logits(blob)
    return float(np.abs(expected - actual).max())


def train(args) -> None:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    data = photo_sets(args.photos)
    holdout_names = set(data.names[:: args.holdout_every]) if args.holdout_every else set()
    keep = [i for i, name in enumerate(data.names) if name not in holdout_names]
    held = [i for i, name in enumerate(data.names) if name in holdout_names]

    def subset(indices: list[int]) -> LabelledSet:
        remap = {old: new for new, old in enumerate(indices)}
        return LabelledSet(
            [data.names[i] for i in indices],
            [data.images[i] for i in indices],
            [LabelledDie(remap[d.image], d.cx, d.cy, d.side, d.value, d.readable)
             for d in data.dice if d.image in remap],
        )

    training, holdout = subset(keep), subset(held)
    photographed_dice = len(training.dice)
    for folder in args.generated:
        generated = load_generated(folder)
        print(f"adding {len(generated.names)} generated pictures ({len(generated.dice)} dice) from {folder}")
        training = merged(training, generated)
    print(f"training on {len(training.names)} images ({len(training.dice)} dice), "
          f"holding out {len(holdout.names)} images ({len(holdout.dice)} dice)")
    if holdout.dice:
        plain = _fixed_crops(holdout, None)
        jittered = _fixed_crops(holdout, 1)

    net = build_network(args.width, args.deep)
    if args.resume:
        net.load_state_dict(torch.load(args.resume))
        print(f"starting from the weights in {args.resume}")
    elif args.from_onnx:
        weights_from_onnx(net, args.from_onnx)
        print(f"starting from the exported network {args.from_onnx} (its BatchNorm folded into the convolutions)")
    elif args.slim_from:
        slim_into(net, torch.load(args.slim_from))
        print(f"starting from the strongest channels of the wider network in {args.slim_from}")
    print(f"{sum(p.numel() for p in net.parameters())} parameters")
    teacher = None
    if args.teacher:
        teacher = build_network(args.teacher_width, deep=True)
        teacher.load_state_dict(torch.load(args.teacher))
        teacher.eval()
        print(f"learning from the answers of the network in {args.teacher} as well, share {args.teacher_share}")
    optimiser = torch.optim.AdamW(net.parameters(), lr=args.learning_rate, weight_decay=1e-4)
    steps = args.epochs * (args.samples_per_epoch // args.batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, args.learning_rate, total_steps=steps)
    hard = HardDice(len(training.dice), args.hard_boost)
    # The photographs are the real thing; the generated pictures outnumber them about four to one.
    source_weights = np.ones(len(training.dice))
    source_weights[:photographed_dice] = args.photo_weight
    started = time.perf_counter()
    for epoch in range(args.epochs):
        epoch_start = time.perf_counter()
        crops, labels, shown = training_batch(
            training, args.samples_per_epoch, args.negative_share, rng,
            source_weights * (hard.weights() if args.hard_boost else 1.0), args.smear_share, args.speck_share,
            args.glint_share,
        )
        data_seconds = time.perf_counter() - epoch_start
        blob, targets = torch.from_numpy(crops_to_blob(crops)), torch.from_numpy(labels)
        order = torch.randperm(len(blob))
        net.train()
        if args.from_onnx:
            freeze_norms(net)
        total = 0.0
        for step in range(args.samples_per_epoch // args.batch):
            chosen = order[step * args.batch : (step + 1) * args.batch]
            optimiser.zero_grad()
            taught = None
            if teacher is not None:
                with torch.no_grad():
                    taught = teacher(blob[chosen])
            losses = per_die_loss(net(blob[chosen]), targets[chosen], taught, args.teacher_share)
            loss = losses.mean()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
            hard.record(shown[chosen.numpy()], losses.detach().numpy())
        report = f"epoch {epoch + 1}/{args.epochs} loss {total / (step + 1):.3f}"
        if holdout.dice:
            report += (f" holdout acc {_accuracy(net, *plain):.4f}"
                       f" jittered {_accuracy(net, *jittered):.4f}")
        print(f"{report}  (augmenting {data_seconds:.0f}s, "
              f"so far {time.perf_counter() - started:.0f}s)", flush=True)
        if args.save_weights:
            # every epoch, so a long run stopped part-way is taken up again with --resume
            torch.save(net.state_dict(), args.save_weights)
    export_onnx(net, args.out)
    sample = plain[0][:64] if holdout.dice else training_batch(training, 64, args.negative_share, rng)[0]
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes); "
          f"largest torch vs ONNX Runtime logit difference {check_export(net, args.out, sample):.2e}")


def _median_ms(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _contact_sheet(crops, truths, predictions, confidences, path: Path) -> None:
    tiles = []
    for crop, truth, predicted, confidence in zip(crops, truths, predictions, confidences):
        tile = cv2.resize(crop, (96, 96), interpolation=cv2.INTER_NEAREST)
        tile = cv2.copyMakeBorder(tile, 0, 18, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255))
        said = "-" if predicted is None else str(predicted)
        cv2.putText(tile, f"{truth}>{said} {confidence:.2f}", (2, 110), cv2.FONT_HERSHEY_SIMPLEX,
                    0.4, (0, 0, 200), 1)
        tiles.append(tile)
    if not tiles:
        return
    columns = 10
    tiles += [np.full_like(tiles[0], 255)] * (-len(tiles) % columns)
    rows = [np.hstack(tiles[i : i + columns]) for i in range(0, len(tiles), columns)]
    cv2.imwrite(str(path), np.vstack(rows))


# Dice of the TEST split whose label is wrong, seen at full size: (image, x, y in pixels, value shown).
CURVE_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)


def _lowest_threshold_allowing(confidence: np.ndarray, wrong: np.ndarray, allowed: int) -> float:
    """The lowest threshold that leaves at most `allowed` of the wrong values at or above it."""
    ranked = np.sort(confidence[wrong])[::-1]
    return float(np.nextafter(ranked[allowed], 1.0)) if len(ranked) > allowed else 0.0


def _report(name: str, classifier: FaceClassifier, data: LabelledSet, jitter_seed, sheet) -> list:
    rng = np.random.default_rng(jitter_seed)
    truths, results, crops = [], [], []
    for index, image in enumerate(data.images):
        dice = data.dice_of(index)
        boxes = [label_box(d) if jitter_seed is None else MEASURED_JITTER.box(d, rng) for d in dice]
        results += classifier.classify(image, boxes)
        crops.append(face_crops(image, boxes))
        truths += [d.value for d in dice]
    crop_array = np.concatenate(crops)
    values = [value for value, _ in results]
    confidence = np.array([c for _, c in results])
    right = np.array([v == t for v, t in zip(values, truths)])
    wrong = np.array([v is not None and v != t for v, t in zip(values, truths)])
    print(f"\n{name}: {len(truths)} dice, accuracy {right.mean():.4f} "
          f"({int(right.sum())} right, {int(wrong.sum())} wrong value, "
          f"{int(sum(v is None for v in values))} 'not a die face')")
    print("confusion (rows: true face 1-6; columns: read 1-6, not a face)")
    for truth in FACE_VALUES:
        row = [sum(1 for v, t in zip(values, truths) if t == truth and v == read)
               for read in (*FACE_VALUES, None)]
        print(f"  {truth}: " + " ".join(f"{n:4d}" for n in row))
    at_most_one = _lowest_threshold_allowing(confidence, wrong, 1)
    none_wrong = _lowest_threshold_allowing(confidence, wrong, 0)
    print("threshold -> wrong values accepted, dice left unsure, right and accepted")
    for threshold in sorted({*CURVE_THRESHOLDS, at_most_one, none_wrong}):
        accepted = np.array([v is not None for v in values]) & (confidence >= threshold)
        print(f"  {threshold:.4f}: wrong {int((wrong & accepted).sum())}, "
              f"unsure {1 - accepted.mean():.4f}, right and accepted {(right & accepted).mean():.4f}")
    print(f"  lowest threshold with at most 1 wrong value accepted: {at_most_one:.4f}; "
          f"with no wrong value at all: {none_wrong:.4f}")
    missed = [i for i in range(len(truths)) if not right[i]]
    if sheet is not None:
        _contact_sheet(crop_array[missed], [truths[i] for i in missed], [values[i] for i in missed],
                       confidence[missed], sheet)
        print(f"  {len(missed)} misread crops drawn in {sheet}")
    return results


def _negative_report(classifier: FaceClassifier, data: LabelledSet) -> None:
    rng = np.random.default_rng(7)
    said_not_face = total = 0
    for index, image in enumerate(data.images):
        dice = data.dice_of(index)
        boxes = [b for b in (negative_box(dice, image.shape, rng) for _ in range(10)) if b is not None]
        results = classifier.classify(image, boxes)
        said_not_face += sum(value is None for value, _ in results)
        total += len(results)
    print(f"\nboxes off the dice (tray, between dice, half off a die): {total}, "
          f"called 'not a die face' {said_not_face / total:.4f}")


def _latency(classifier: FaceClassifier, data: LabelledSet) -> None:
    cv2.setNumThreads(1)
    frame = cv2.resize(data.images[0], (1280, 960))
    scale = 1280 / data.images[0].shape[1]
    dice = data.dice_of(0)
    boxes = [((d.cx * scale, d.cy * scale), (d.side * scale, d.side * scale), 0.0) for d in dice]
    while len(boxes) < 25:
        boxes += boxes
    classifier.classify(frame, boxes[:5])
    reference = _median_ms(lambda: cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (5, 5), 0), 200)
    print(f"\nlatency, ONNX Runtime single-threaded, 1280x960 frame, median of 200 runs "
          f"(reference cvtColor+GaussianBlur of the frame: {reference:.3f} ms)")
    for count in (1, 5, 25):
        ms = _median_ms(lambda: classifier.classify(frame, boxes[:count]), 200)
        print(f"  {count:2d} crops: {ms:.3f} ms  ({ms / reference:.1f}x the reference)")


def evaluate(args) -> None:
    data = load_split(args.dataset, "test")
    classifier = FaceClassifier(args.model)
    print(f"model {args.model} ({args.model.stat().st_size} bytes); byler-d6 TEST split: "
          f"{len(data.names)} images, {len(data.dice)} dice")
    _report("labelled boxes (upright, as labelled)", classifier, data, None, args.sheet)
    _report(f"jittered boxes ({MEASURED_JITTER.describe()})", classifier, data, 11, None)
    _negative_report(classifier, data)
    _latency(classifier, data)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train_parser = commands.add_parser("train", help="train on labelled photos and generated pictures, export ONNX")
    train_parser.add_argument("--photos", action="append", metavar="FOLDER[:SPLIT]",
                              help="a labelled photo folder, or one split of it (repeat for several; default: "
                                   "the byler-d6 train split)")
    train_parser.add_argument("--out", type=Path, default=TRAINED_PATH)
    train_parser.add_argument("--generated", type=Path, action="append", default=[],
                              help="also train on a folder from `python -m vision.synth --out FOLDER`")
    train_parser.add_argument("--epochs", type=int, default=36)
    train_parser.add_argument("--samples-per-epoch", type=int, default=10240)
    train_parser.add_argument("--batch", type=int, default=128)
    train_parser.add_argument("--learning-rate", type=float, default=2e-3)
    train_parser.add_argument("--negative-share", type=float, default=0.2)
    train_parser.add_argument("--holdout-every", type=int, default=0,
                              help="hold out every Nth train image to watch progress (0: none)")
    train_parser.add_argument("--width", type=int, default=20, help="channels of the first layer")
    train_parser.add_argument("--deep", action="store_true", help="two convolutions at the middle scales")
    train_parser.add_argument("--smear-share", type=float, default=0.04,
                              help="share of face crops smeared by motion and labelled 'not a die face'")
    train_parser.add_argument("--speck-share", type=float, default=0.3,
                              help="share of the boxes off the dice given a speck near their middle")
    train_parser.add_argument("--glint-share", type=float, default=0.3,
                              help="share of face crops given thin bright arcs, as a glossy die's edges catch light")
    train_parser.add_argument("--hard-boost", type=float, default=3.0,
                              help="most extra weight a die the network gets wrong is drawn with (0: none)")
    train_parser.add_argument("--slim-from", type=Path,
                              help="start from the strongest channels of wider torch weights (--save-weights)")
    train_parser.add_argument("--teacher", type=Path,
                              help="also learn from the answers of this wider deep network (--save-weights)")
    train_parser.add_argument("--teacher-width", type=int, default=24, help="the teacher's --width")
    train_parser.add_argument("--teacher-share", type=float, default=0.5,
                              help="how much the teacher's answers count against the labels'")
    train_parser.add_argument("--photo-weight", type=float, default=1.0,
                              help="how much more often a photographed die is drawn than a generated one")
    train_parser.add_argument("--save-weights", type=Path, help="also keep the torch weights here")
    train_parser.add_argument("--resume", type=Path, help="start from torch weights saved by --save-weights")
    train_parser.add_argument("--from-onnx", type=Path, help="start from an exported network (the shipped one)")
    train_parser.add_argument("--threads", type=int, default=1)
    train_parser.add_argument("--seed", type=int, default=2026)
    train_parser.set_defaults(run=train)
    evaluate_parser = commands.add_parser("evaluate", help="measure on the byler-d6 TEST split")
    evaluate_parser.add_argument("--dataset", type=Path, default=DATASET)
    evaluate_parser.add_argument("--model", type=Path, default=MODEL_PATH)
    evaluate_parser.add_argument("--sheet", type=Path, default=None,
                                 help="write the misread crops as a PNG contact sheet here")
    evaluate_parser.set_defaults(run=evaluate)
    args = parser.parse_args(argv)
    if args.command == "train" and not args.photos:
        args.photos = [f"{DATASET}:train"]
    args.run(args)


if __name__ == "__main__":
    main()
