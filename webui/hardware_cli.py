"""The `calibrate` and `install-service` commands: setting the table's camera and its service up."""

from __future__ import annotations

import argparse
import getpass
import grp
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import hardware

from .engine.settings import default_config_path, load_settings, update_config_file

UNIT_TEMPLATE = Path(hardware.__file__).resolve().parent / "systemd" / "yacht-table.service"
UNIT_NAME = "yacht-table.service"


def add_commands(commands: argparse._SubParsersAction) -> None:
    calibrate_parser = commands.add_parser(
        "calibrate",
        help="capture the empty tray, save its region and lock the exposure",
        description="Capture the empty tray, find it (or take --region), check the light, lock the Pi "
                    "camera's exposure and white balance, and save all of it in the configuration file.",
    )
    calibrate_parser.add_argument("--camera", help="camera source (auto, pi, usb:N, /dev/videoN, URL, replay:PATH, "
                                                   "demo); default: the configured one")
    calibrate_parser.add_argument("--config", type=Path, help="configuration file to update "
                                                              f"(default: {default_config_path()})")
    calibrate_parser.add_argument("--region", help="tray region x,y,width,height in pixels, instead of finding it")
    calibrate_parser.add_argument("--frames", type=int, default=5, help="frames to average (default 5)")
    calibrate_parser.set_defaults(run=run_calibrate)

    service_parser = commands.add_parser(
        "install-service",
        help="install and start the systemd unit that runs the table at boot",
        description="Write the yacht-table systemd unit for this install and enable it. Run with sudo.",
    )
    service_parser.add_argument("--user", default=os.environ.get("SUDO_USER") or getpass.getuser(),
                                help="account the table runs as (default: the user who ran sudo)")
    service_parser.add_argument("--unit-dir", type=Path, default=Path("/etc/systemd/system"),
                                help="where to write the unit (default /etc/systemd/system)")
    service_parser.add_argument("--print", dest="print_only", action="store_true",
                                help="print the unit instead of installing it")
    service_parser.add_argument("--no-start", action="store_true", help="write the unit but do not enable or start it")
    service_parser.set_defaults(run=run_install_service)


def run_calibrate(args: argparse.Namespace) -> int:
    from hardware.calibrate import calibrate, parse_region, save_tray_image
    from hardware.camera import CameraError, open_camera

    if args.frames < 1:
        raise ValueError(f"--frames must be at least 1, got {args.frames}")
    region = parse_region(args.region) if args.region else None
    config_path = args.config or default_config_path()
    settings = load_settings(args.config, camera=args.camera)
    # meter afresh: previously locked values would only be measured back
    options = {**settings.camera_options(), "exposure_time_us": None, "analogue_gain": None, "colour_gains": None}
    try:
        with open_camera(settings.camera, **options) as camera:
            print(f"camera: {camera.name}")
            result = calibrate(camera, region, frames=args.frames)
    except CameraError as error:
        raise ValueError(f"camera {settings.camera}: {error}") from None
    update_config_file(config_path, result.config_changes())
    picture = save_tray_image(result, settings.data_dir)
    x, y, width, height = result.region
    print(f"tray region: x={x} y={y} width={width} height={height}"
          f" ({'given' if region else 'found'}; check {picture})")
    if result.exposure:
        print(f"locked exposure {result.exposure['ExposureTime']} us, gain {result.exposure['AnalogueGain']}, "
              f"white balance {tuple(result.exposure['ColourGains'])}")
    else:
        print("this camera has no exposure lock; only the tray region was saved")
    for warning in result.warnings:
        print(f"warning: {warning}")
    print(f"saved to {config_path}")
    return 0


def render_unit(user: str, executable: Path, groups: list[str]) -> str:
    """The unit text; `groups` (camera and GPIO access) must exist, or systemd refuses to start it."""
    template = UNIT_TEMPLATE.read_text(encoding="utf-8")
    groups_line = f"SupplementaryGroups={' '.join(groups)}" if groups else "# no video/gpio groups on this system"
    return template.format(user=user, executable=executable, groups_line=groups_line)


def existing_groups(names: tuple[str, ...] = ("video", "gpio")) -> list[str]:
    found = []
    for name in names:
        try:
            grp.getgrnam(name)
        except KeyError:
            continue
        found.append(name)
    return found


def run_install_service(args: argparse.Namespace) -> int:
    # the console script sits next to the interpreter running it, in the venv's bin/
    executable = Path(sys.executable).absolute().parent / "yacht-table"
    if not executable.exists():
        raise ValueError(f"cannot find the yacht-table command next to {sys.executable}; run it from the venv")
    try:
        pwd.getpwnam(args.user)
    except KeyError:
        raise ValueError(f"no user account named {args.user!r}") from None
    unit = render_unit(args.user, executable, existing_groups())
    if args.print_only:
        print(unit, end="")
        return 0
    target = args.unit_dir / UNIT_NAME
    try:
        args.unit_dir.mkdir(parents=True, exist_ok=True)
        target.write_text(unit, encoding="utf-8")
    except PermissionError:
        raise ValueError(f"cannot write {target}: run with sudo") from None
    print(f"wrote {target}")
    if args.no_start:
        return 0
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        raise ValueError("systemctl not found: is this a systemd system? The unit is written; start it by hand")
    for command in ([systemctl, "daemon-reload"], [systemctl, "enable", "--now", UNIT_NAME]):
        completed = subprocess.run(command, capture_output=True, text=True)
        if completed.returncode != 0:
            raise ValueError(f"{' '.join(command)} failed: {completed.stderr.strip()}")
    print(f"enabled and started {UNIT_NAME}: `systemctl status yacht-table`, logs: `journalctl -u yacht-table -f`")
    return 0
