#!/usr/bin/python3
"""`cuvilc report` in a real browser, with JavaScript off.

    check_report.py CUVILC WORK_DIR [--model NAME] [--target T]

Generates a benchmark model (bench/models.py; MobileNetV2 by default),
profiles one inference with `cuvilc run --profile --json` (on the host by
default: in-process, a few seconds), builds it with `cuvilc build --report`
for the node list, and writes its page with `cuvilc report
--profile-data`. Then headless Chromium, in a fresh profile whose content
settings block JavaScript (checked on a probe page whose script would
change its text), dumps the page's DOM and takes a screenshot:
  - the DOM has one graph row per node of the build, in order, the arena
    pictures, a heat-map row per profiled step, and no scripts
    (report_dom.py);
  - the screenshot (the top of the page) is a PNG of the requested size
    that is not blank: many colours, text and tables drawn.
Without chromium the test says so and exits 77, which ctest counts as
skipped (SKIP_RETURN_CODE), never as passed.
"""

import argparse
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import report_dom  # noqa: E402

SKIP = 77
WIDTH, HEIGHT = 1280, 1600


def run(cmd, **kw):
    start = time.monotonic()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, cmd))} exited {r.returncode}\n"
                 f"{r.stdout}{r.stderr}")
    print(f"ok ({time.monotonic() - start:.1f} s): {' '.join(map(str, cmd[:3]))} ...")
    return r


def chromium(browser, user_dir, *args):
    """Headless Chromium with nothing that reaches the network."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-extensions",
           f"--user-data-dir={user_dir}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def scripts_off_profile(tmp):
    """A fresh browser profile whose content settings block JavaScript."""
    user_dir = tmp / "chromium-profile"
    (user_dir / "Default").mkdir(parents=True)
    prefs = {"profile": {"default_content_setting_values": {"javascript": 2}}}
    (user_dir / "Default" / "Preferences").write_text(json.dumps(prefs))
    return user_dir


def png_pixels(path):
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"FAILED: {path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    if depth != 8 or color not in (2, 6):
        sys.exit(f"FAILED: {path}: unexpected PNG format (depth {depth}, color {color})")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def check_screenshot(path):
    width, height, rows = png_pixels(path)
    pixels = [p for row in rows for p in row]
    colours = len(set(pixels))
    ink = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
    lines, ok = [], True
    for good, text in [
            ((width, height) == (WIDTH, HEIGHT), f"screenshot {width}x{height}"),
            (colours >= 16, f"{colours} distinct colours"),
            (ink >= 0.02, f"{100 * ink:.1f}% of the pixels are not white")]:
        ok = ok and good
        lines.append(("" if good else "FAILED: ") + text)
    return lines, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cuvilc")
    ap.add_argument("work", type=pathlib.Path)
    ap.add_argument("--model", default="mobilenet_v2")
    ap.add_argument("--target", default="host")
    args = ap.parse_args()

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIPPED: no chromium on PATH (scripts/install-deps.sh installs "
              "Debian's chromium); the report was not checked in a browser")
        return SKIP

    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    run(["/usr/bin/python3", ROOT / "bench" / "models.py", args.work, "--only", args.model])
    model = args.work / args.model / "model.onnx"
    profile = args.work / "run.json"
    run([args.cuvilc, "run", model, "-t", args.target, "--profile", "--json", profile])
    profiled = len(json.loads(profile.read_text())["profile"]["steps"])
    build_json = args.work / "build.json"
    run([args.cuvilc, "build", model, "-t", args.target, "-o", args.work / "model.o",
         "--report", build_json])
    build_report = json.loads(build_json.read_text())
    page = args.work / "report.html"
    run([args.cuvilc, "report", model, "-t", args.target, "-o", page,
         "--profile-data", profile])

    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        user_dir = scripts_off_profile(pathlib.Path(tmp))
        # JavaScript must really be off: the probe's script would say so.
        probe = args.work / "probe.html"
        probe.write_text('<!DOCTYPE html><p id="p">static</p><script>'
                         'document.getElementById("p").textContent = "script ran";'
                         '</script>\n')
        dom = chromium(browser, user_dir, "--dump-dom", probe.as_uri())
        if "static" not in dom.stdout or "script ran</p>" in dom.stdout:
            sys.exit(f"FAILED: JavaScript is not off in the browser profile:\n"
                     f"{dom.stdout}{dom.stderr[-2000:]}")
        print("ok: JavaScript is off (the probe page's script did not run)")

        dom = chromium(browser, user_dir, "--dump-dom", page.as_uri())
        dumped = args.work / "report.dom.html"
        dumped.write_text(dom.stdout)
        lines, ok = report_dom.check(build_report, report_dom.parse(dumped))
        rows = len(report_dom.parse(dumped).profile_rows)
        lines.append(("" if rows == profiled else "FAILED: ")
                     + f"heat-map rows: {rows} of {profiled} profiled steps")
        ok = ok and rows == profiled

        shot = args.work / "report.png"
        chromium(browser, user_dir, f"--window-size={WIDTH},{HEIGHT}",
                 f"--screenshot={shot}", page.as_uri())
        if not shot.exists():
            sys.exit(f"FAILED: chromium wrote no screenshot {shot}")
        shot_lines, shot_ok = check_screenshot(shot)
    print("\n".join(lines + shot_lines))
    print(f"{args.model} on {args.target}: {len(build_report['nodes'])} nodes; "
          f"page {page}, screenshot {shot}")
    return 0 if ok and shot_ok else 1


if __name__ == "__main__":
    sys.exit(main())
