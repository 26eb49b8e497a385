"""Train, export and measure the die detector used by vision/die_detector.py.

    .venv/bin/pip install -e '.[train]'
    .venv/bin/python -m vision.synth --out /tmp/synth-detector --count 400 --first-seed 700000
    .venv/bin/python tools/train_die_detector.py train --generated /tmp/synth-detector
    .venv/bin/python tools/train_die_detector.py evaluate samples        # any labelled folder

Training reads the photo sets given with --photos (by default only the TRAIN split of
../shared/datasets/byler-d6; every 10th photo held out to watch progress) and generated pictures; never
samples/ (seeds 0 on) and never a TEST split unless named. Each example is
a square patch of a picture scaled so its dice are 9 to 52 px across (the network's whole working range,
whatever the source's die size), turned by a multiple of 90 degrees or mirrored, and jittered in hue,
channel order, brightness, contrast, light gradient, blur, noise and JPEG.
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
from vision.die_detector import (  # noqa: E402
    HEAT_STRIDE,
    MODEL_PATH,
    OUTPUT_CHANNELS,
    SIZE_UNIT,
    STRIDE,
    SURE,
    DieDetector,
    normalise,
)
from vision.labelled import load_folder  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "byler-d6"
PATCH = 160
SMALLEST_DIE, LARGEST_DIE = 9.0, 52.0


@dataclass
class Picture:
    image: np.ndarray
    # per die: x, y and size (the side of the upright square round its top face), in pixels
    dice: np.ndarray
    # 255 where a hand (something neither die nor tray) covers the picture; None: nothing does
    foreign: np.ndarray | None = None


def load_pictures(folder: Path, split: str | None) -> list[Picture]:
    """Labelled pictures of a folder; generated ones with a hand in view are left out (dice under it)."""
    pictures = []
    for label in load_folder(folder, split):
        truth_file = folder / "truth" / (label.path.stem + ".json")
        if truth_file.is_file() and "hand in view" in json.loads(truth_file.read_text())["problems"]:
            continue
        image = cv2.imread(str(label.path), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"cannot read {label.path}")
        height, width = image.shape[:2]
        boxes = label.boxes_in_pixels(width, height) or ()
        dice = np.array([(b.x, b.y, math.sqrt(b.width * b.height)) for b in boxes], np.float32).reshape(-1, 3)
        pictures.append(Picture(image, dice))
    return pictures


def hand_pictures(count: int, first_seed: int) -> list[Picture]:
    """Generated pictures with a hand in the tray, and where the hand is: the pixels that change when
    only the skin's colour does (its shadow stays). Dice whose centre the hand covers are not labelled."""
    from dataclasses import replace

    from vision.synth import random_scene, render, truth

    pictures = []
    for seed in range(first_seed, first_seed + count):
        scene = random_scene(seed, "hand")
        assert scene.hand is not None
        start, tip, _ = scene.hand
        dark, light = (render(replace(scene, hand=(start, tip, skin))) for skin in ((0, 0, 0), (255, 255, 255)))
        foreign = np.where(cv2.absdiff(dark, light).max(axis=2) > 60, 255, 0).astype(np.uint8)
        height, width = foreign.shape
        dice = []
        for die in truth(scene, "")["dice"]:
            x, y = die["x"], die["y"]
            if 0 <= x < width and 0 <= y < height and foreign[int(y), int(x)]:
                continue
            corners = np.array(die["corners"])
            (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
            dice.append((x, y, math.sqrt((x1 - x0) * (y1 - y0))))
        pictures.append(Picture(render(scene), np.array(dice, np.float32).reshape(-1, 3), foreign))
    return pictures


# ----------------------------------------------------------------------------------------------- examples


def _photometric(patch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.5:
        hsv = cv2.cvtColor(patch, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int16) + int(rng.integers(180))) % 180).astype(np.uint8)
        patch = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    if rng.random() < 0.5:
        patch = np.ascontiguousarray(patch[..., rng.permutation(3)])
    values: np.ndarray = patch.astype(np.float32)
    if rng.random() < 0.1:
        values = np.repeat(values.mean(axis=2, keepdims=True), 3, axis=2)
    gain = rng.uniform(0.55, 1.4)
    values = (values - 128.0) * rng.uniform(0.6, 1.3) + 128.0 * gain
    if rng.random() < 0.5:
        ramp = np.linspace(-1, 1, values.shape[1], dtype=np.float32)[None, :, None]
        values *= 1.0 + rng.uniform(-0.3, 0.3) * (ramp if rng.random() < 0.5 else ramp.transpose(1, 0, 2))
    if rng.random() < 0.4:
        values = cv2.GaussianBlur(values, (0, 0), rng.uniform(0.4, 1.3))
    values += rng.normal(0, rng.uniform(0, 6), values.shape).astype(np.float32)
    patch = np.clip(values, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        ok, encoded = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
        decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
        patch = patch if decoded is None else decoded
    return patch


def example(picture: Picture, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One augmented PATCH x PATCH BGR patch, its dice (x, y, size) in patch pixels, and how much of
    each 8x8 cell a hand covers (0..1)."""
    dice = picture.dice
    typical = float(np.median(dice[:, 2])) if len(dice) else 30.0
    scale = math.exp(rng.uniform(math.log(SMALLEST_DIE), math.log(LARGEST_DIE))) / typical
    height, width = picture.image.shape[:2]
    if len(dice) and rng.random() < 0.8:
        cx, cy = dice[rng.integers(len(dice)), :2] + rng.uniform(-0.4, 0.4, 2) * PATCH / scale
    else:
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
    mirrored = bool(rng.random() < 0.5)
    matrix = cv2.getRotationMatrix2D((float(cx), float(cy)), 90.0 * int(rng.integers(4)), scale)
    matrix[:, 2] += (PATCH / 2.0 - cx, PATCH / 2.0 - cy)
    if mirrored:
        matrix[0] = -matrix[0]
        matrix[0, 2] += PATCH
    source, warp = picture.image, matrix
    if scale < 0.7:
        # Shrinking by warpAffine alone aliases pips away; average first as the reader's resize does.
        source = cv2.resize(source, None, fx=scale * 1.25, fy=scale * 1.25, interpolation=cv2.INTER_AREA)
        shrink = np.diag([source.shape[1] / width, source.shape[0] / height])
        warp = np.c_[matrix[:, :2] @ np.linalg.inv(shrink), matrix[:, 2]]
    patch = cv2.warpAffine(source, warp, (PATCH, PATCH), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    moved = dice.copy()
    moved[:, :2] = np.c_[dice[:, :2], np.ones(len(dice))] @ matrix.T
    moved[:, 2] = dice[:, 2] * scale
    cells = PATCH // STRIDE
    if picture.foreign is None:
        covered = np.zeros((cells, cells), np.float32)
    else:
        foreign = cv2.warpAffine(picture.foreign, matrix, (PATCH, PATCH), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REFLECT)
        covered = cv2.resize(foreign, (cells, cells), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    return _photometric(patch, rng), moved, covered


def targets(dice: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre heat (side/4)^2, and per 8 px cell the size target with its weight."""
    heat_side, cell_side = side // HEAT_STRIDE, side // STRIDE
    heat = np.zeros((heat_side, heat_side), np.float32)
    size_target = np.zeros((cell_side, cell_side), np.float32)
    weight = np.zeros((cell_side, cell_side), np.float32)
    grid = (np.arange(heat_side, dtype=np.float32) + 0.5) * HEAT_STRIDE
    cells = (np.arange(cell_side, dtype=np.float32) + 0.5) * STRIDE
    for x, y, size in dice:
        sigma = max(0.12 * size, 0.45 * HEAT_STRIDE)
        blob = np.exp(-((grid[None, :] - x) ** 2 + (grid[:, None] - y) ** 2) / (2 * sigma * sigma))
        if 0 <= x < side and 0 <= y < side:
            # The grid point nearest the centre is the peak (1 exactly); its neighbours keep the
            # centre's offset from it, which the 3x3 mean of decode() reads back.
            blob /= blob.max()
        np.maximum(heat, blob, out=heat)
        near = ((cells[None, :] - x) ** 2 + (cells[:, None] - y) ** 2) <= max(0.3 * size, 0.75 * STRIDE) ** 2
        size_target[near] = math.log(size / SIZE_UNIT)
        weight[near] = 1.0
    return heat, size_target, weight


def batch(pictures: list[Picture], count: int, rng: np.random.Generator):
    images, heats, sizes, weights, covers = [], [], [], [], []
    for _ in range(count):
        patch, dice, covered = example(pictures[rng.integers(len(pictures))], rng)
        images.append(normalise(patch)[0])
        heat, size, weight = targets(dice, PATCH)
        heats.append(heat)
        sizes.append(size)
        weights.append(weight)
        covers.append(covered)
    return np.stack(images), np.stack(heats)[:, None], np.stack(sizes), np.stack(weights), np.stack(covers)


# ----------------------------------------------------------------------------------------------- network


def build_network(width: int = 8):
    """The detector: `width` channels at half the input's resolution, twice that at a quarter, four
    times at an eighth (8, the shipped network's, has 40k parameters)."""
    import torch.nn as nn

    def layer(channels_in, channels_out, stride=1, dilation=1):
        return [nn.Conv2d(channels_in, channels_out, 3, stride, padding=dilation, dilation=dilation, bias=False),
                nn.BatchNorm2d(channels_out), nn.ReLU(inplace=True)]

    half, quarter, eighth = width, 2 * width, 4 * width
    head = nn.Conv2d(eighth, OUTPUT_CHANNELS, 1)
    assert head.bias is not None  # a Conv2d has one unless told bias=False
    # Start the centre scores at 0.1 everywhere, as CenterNet does: most of a picture is no die's centre.
    nn.init.constant_(head.bias[:4], math.log(0.1 / 0.9))
    return nn.Sequential(
        *layer(3, half, 2), *layer(half, quarter, 2), *layer(quarter, quarter), *layer(quarter, eighth, 2),
        *layer(eighth, eighth), *layer(eighth, eighth, dilation=2), *layer(eighth, eighth, dilation=4), head,
    )


def resume(net, weights: dict) -> None:
    """Start from saved weights; a head saved with fewer output channels fills only its first ones."""
    import torch

    own = net.state_dict()
    with torch.no_grad():
        for name, tensor in weights.items():
            if tensor.dim() == 0:
                own[name] = tensor
            else:
                own[name][: tensor.shape[0]] = tensor
    net.load_state_dict(own)


def losses(output, heat, size_target, weight, covered):
    import torch
    import torch.nn.functional as F

    logits = F.pixel_shuffle(output[:, :4], 2)
    probability = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    # Focal loss of CenterNet: a pixel next to a centre is barely punished for scoring high.
    peak = heat == 1.0
    positive = -((1 - probability) ** 2 * torch.log(probability))[peak].sum()
    negative = -((1 - heat) ** 4 * probability ** 2 * torch.log(1 - probability))[~peak].sum()
    count = peak.sum().clamp(min=1)
    heat_loss = (positive + negative) / count
    size_loss = (F.smooth_l1_loss(output[:, 4], size_target, reduction="none", beta=0.1) * weight).sum()
    # A cell half covered by a hand counts as covered; cells at the hand's edge are left out.
    hand = (covered >= 0.5).float()
    clear_cut = ((covered >= 0.5) | (covered <= 0.1)).float()
    hand_loss = (F.binary_cross_entropy_with_logits(output[:, 5], hand, reduction="none") * clear_cut).mean()
    return heat_loss, size_loss / weight.sum().clamp(min=1), hand_loss


def export_onnx(net, path: Path) -> None:
    import torch

    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, (torch.zeros(1, 3, 240, 320),), str(path), opset_version=13, dynamo=False,
                      input_names=["frame"], output_names=["cells"],
                      dynamic_axes={"frame": {2: "height", 3: "width"}, "cells": {2: "rows", 3: "columns"}})


def train(args) -> None:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    photos = []
    for spec in args.photos:
        folder, _, split = spec.partition(":")
        photos += load_pictures(Path(folder), split or None)
    training = [p for i, p in enumerate(photos) if i % 10 != 9]
    held_out = [p for i, p in enumerate(photos) if i % 10 == 9]
    for folder in args.generated:
        training += load_pictures(folder, None)
    training += hand_pictures(args.hands, 720000)
    print(f"{len(training)} training pictures, {len(held_out)} held out", flush=True)
    net = build_network(args.width)
    if args.resume:
        resume(net, torch.load(args.resume))
    elif args.from_onnx:
        weights_from_onnx(net, args.from_onnx)
    optimiser = torch.optim.AdamW(net.parameters(), lr=args.learning_rate, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, args.learning_rate, total_steps=args.steps)
    started = time.perf_counter()
    totals = np.zeros(3)
    for step in range(args.steps):
        net.train()
        if args.from_onnx:
            freeze_norms(net)
        images, heat, size, weight, covered = (torch.from_numpy(a) for a in batch(training, args.batch, rng))
        parts = losses(net(images), heat, size, weight, covered)
        loss = parts[0] + parts[1] + parts[2]
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        totals += [float(p.detach()) for p in parts]
        if (step + 1) % args.report_every == 0:
            heat_loss, size_loss, hand_loss = totals / args.report_every
            totals[:] = 0
            print(f"step {step + 1}/{args.steps} heat {heat_loss:.3f} size {size_loss:.3f} hand {hand_loss:.3f}"
                  f"  {time.perf_counter() - started:.0f} s", flush=True)
            if args.save_weights:
                torch.save(net.state_dict(), args.save_weights)
    if args.save_weights:
        torch.save(net.state_dict(), args.save_weights)
    export_onnx(net, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} kB)")
    report("held-out train photos", DieDetector(args.out), held_out)
    report("generated pictures with a hand (not trained on)", DieDetector(args.out), hand_pictures(40, 730000))


# ----------------------------------------------------------------------------------------------- measuring


def match(found, dice: np.ndarray):
    """Greedy nearest matching of detections to labelled dice: a detection within 0.4 of a die's size."""
    free = list(found)
    pairs, missed = [], 0
    for x, y, size in dice:
        near = [d for d in free if math.hypot(d.x - x, d.y - y) <= 0.4 * size]
        if not near:
            missed += 1
            continue
        best = min(near, key=lambda d: math.hypot(d.x - x, d.y - y))
        free.remove(best)
        pairs.append((best, (x, y, size)))
    return pairs, missed, free


def report(name: str, detector: DieDetector, pictures: list[Picture]) -> None:
    cv2.setNumThreads(1)
    dice = missed = extra = perfect = hands_seen = hands_there = 0
    doubtful = 0
    centre_errors, size_errors, times = [], [], []
    for picture in pictures:
        started = time.perf_counter()
        sight = detector.look(picture.image)
        found = sight.dice
        hands_seen += bool(sight.foreign)
        hands_there += picture.foreign is not None
        times.append((time.perf_counter() - started) * 1000)
        sure = [d for d in found if d.score >= SURE]
        pairs, lost, spare = match(sure, picture.dice)
        dice += len(picture.dice)
        missed += lost
        extra += len(spare)
        doubtful += len([d for d in found if d.score < SURE])
        perfect += lost == 0 and not spare
        for spot, (x, y, size) in pairs:
            centre_errors.append(math.hypot(spot.x - x, spot.y - y) / size)
            size_errors.append(abs(spot.size / size - 1))
    print(f"{name}: {len(pictures)} pictures, {dice} dice")
    print(f"  found {dice - missed}/{dice} ({(dice - missed) / max(dice, 1):.1%}), missed {missed}, "
          f"extra {extra}; pictures with every die and nothing else {perfect}/{len(pictures)}; "
          f"weak peaks {doubtful}")
    if centre_errors:
        print(f"  centre error median {statistics.median(centre_errors):.3f}, p95 "
              f"{np.percentile(centre_errors, 95):.3f} of the size; size error median "
              f"{statistics.median(size_errors):.3f}, p95 {np.percentile(size_errors, 95):.3f}")
    print(f"  pictures with something else seen in the tray {hands_seen} (with a hand in them: {hands_there})")
    print(f"  ms per picture median {statistics.median(times):.1f}")


def evaluate(args) -> None:
    detector = DieDetector(args.model)
    for folder in args.folders:
        split = args.split if (folder / "split.csv").is_file() else None
        report(f"{folder}{f' ({split})' if split else ''}", detector, load_pictures(folder, split))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train_parser = commands.add_parser("train")
    train_parser.add_argument("--generated", type=Path, nargs="*", default=[])
    train_parser.add_argument("--steps", type=int, default=3000)
    train_parser.add_argument("--hands", type=int, default=200, help="generated pictures with a hand in the tray")
    train_parser.add_argument("--width", type=int, default=8, help="channels of the first layer (shipped: 8)")
    train_parser.add_argument("--batch", type=int, default=24)
    train_parser.add_argument("--learning-rate", type=float, default=4e-3)
    train_parser.add_argument("--threads", type=int, default=1)
    train_parser.add_argument("--seed", type=int, default=1)
    train_parser.add_argument("--report-every", type=int, default=100)
    train_parser.add_argument("--resume", type=Path)
    train_parser.add_argument("--from-onnx", type=Path, help="start from an exported network (the shipped one)")
    train_parser.add_argument("--photos", action="append", metavar="FOLDER[:SPLIT]",
                              help="a labelled photo folder, or one split of it (repeat for several; default: "
                                   "the byler-d6 train split)")
    train_parser.add_argument("--save-weights", type=Path)
    train_parser.add_argument("--out", type=Path, default=MODEL_PATH)
    train_parser.set_defaults(run=train)
    evaluate_parser = commands.add_parser("evaluate")
    evaluate_parser.add_argument("folders", nargs="+", type=Path)
    evaluate_parser.add_argument("--split", default="test")
    evaluate_parser.add_argument("--model", type=Path, default=MODEL_PATH)
    evaluate_parser.set_defaults(run=evaluate)
    args = parser.parse_args(argv)
    if args.command == "train" and not args.photos:
        args.photos = [f"{DATASET}:train"]
    args.run(args)


if __name__ == "__main__":
    main()
