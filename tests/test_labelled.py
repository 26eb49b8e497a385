"""Labelled folders: the published labels, and the known errors in them set right."""

from pathlib import Path

import pytest

from vision.labelled import KNOWN_LABEL_ERRORS, LabelError, load_folder


def write_folder(root: Path, lines: list[str], values: str) -> Path:
    (root / "images").mkdir()
    (root / "labels").mkdir()
    (root / "images" / "a.jpg").write_bytes(b"")
    (root / "labels" / "a.txt").write_text("\n".join(lines) + "\n")
    (root / "manifest.csv").write_text(f"image,values\na.jpg,{values}\n")
    return root


def test_a_label_error_is_set_right_in_the_die_and_in_the_picture_values(tmp_path):
    folder = write_folder(tmp_path, ["4 0.2 0.4 0.06 0.05", "1 0.5 0.5 0.06 0.05"], "2-5")
    (label,) = load_folder(folder, corrections=(LabelError("a.jpg", line=0, labelled=5, seen=6),))
    assert [die.value for die in label.dice] == [6, 2]
    assert label.values == (2, 6)


def test_labels_as_published_when_asked(tmp_path):
    folder = write_folder(tmp_path, ["4 0.2 0.4 0.06 0.05"], "5")
    (label,) = load_folder(folder, corrections=())
    assert label.values == (5,)
    assert [die.value for die in label.dice] == [5]


def test_a_correction_that_no_longer_matches_the_labels_is_an_error(tmp_path):
    """Should the set's authors fix or renumber their labels, the correction must be reviewed, not
    silently applied to another die."""
    folder = write_folder(tmp_path, ["2 0.2 0.4 0.06 0.05"], "3")
    with pytest.raises(ValueError, match="a.jpg"):
        load_folder(folder, corrections=(LabelError("a.jpg", line=0, labelled=5, seen=6),))
    with pytest.raises(ValueError, match="a.jpg"):
        load_folder(folder, corrections=(LabelError("a.jpg", line=3, labelled=3, seen=2),))


def test_the_known_errors_of_the_shared_photos_apply_to_their_labels():
    photos = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "byler-d6"
    if not (photos / "manifest.csv").is_file():
        pytest.skip(f"the shared photo set is not here: {photos}")
    corrected = {label.path.name: label for label in load_folder(photos)}
    published = {label.path.name: label for label in load_folder(photos, corrections=())}
    for error in KNOWN_LABEL_ERRORS["byler-d6"]:
        assert published[error.image].dice[error.line].value == error.labelled
        assert corrected[error.image].dice[error.line].value == error.seen
    changed = [name for name in published if published[name] != corrected[name]]
    assert len(changed) == len(KNOWN_LABEL_ERRORS["byler-d6"])
