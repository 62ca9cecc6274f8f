"""Screenshots for README and docs: docs/screenshot.png, lesson.png, phone.png and presenter.png.

    python -m scripts.make_screenshot [--only screenshot]

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens each view in headless Chromium
(Debian's /usr/bin/chromium driven by the pip package playwright; no browser download) at its
window size, waits until the script has finished and every head's heatmap is drawn, saves the
picture as a PNG under 400 kB, and stops the app.
"""

from __future__ import annotations

import argparse
import io
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from devtools.browser import (
    HEADS_DRAWN_JS,
    RUN_COUNTER_JS,
    StreamlitServer,
    browser_missing,
    launch_chromium,
    wait_for_app,
)

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 400_000


@dataclass(frozen=True)
class Shot:
    name: str
    query: dict
    width: int
    height: int             # the window; the picture ends below the last head (or the window)
    heads: int = 4
    whole_window: bool = False


SHOTS = (
    Shot("screenshot", {}, 1400, 1400),
    Shot("lesson", {"view": "Lesson", "lesson": "6"}, 1400, 1600),
    Shot("phone", {}, 390, 1700, whole_window=True),
    Shot("presenter", {"present": "1"}, 1024, 768, whole_window=True),
)


def drawn(heads: int) -> str:
    """JS condition: the page holds `heads` heatmaps and Plotly drew them all."""
    return (f"traces && traces.filter((t) => t.type === 'heatmap').length === {heads} && "
            f"{HEADS_DRAWN_JS} === {heads}")


def shoot(base: str, shot: Shot, out: Path) -> tuple[int, int]:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": shot.width, "height": shot.height})
        page.add_init_script(RUN_COUNTER_JS)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        query = urllib.parse.urlencode(shot.query)
        page.goto(base + (f"?{query}" if query else ""))
        wait_for_app(page, drawn(shot.heads))
        page.evaluate("document.fonts.ready")
        if page.locator('[data-testid="stException"]').count() or errors:
            raise SystemExit(f"the page shows an error: {errors}")
        if shot.whole_window:
            clip = {"x": 0, "y": 0, "width": shot.width, "height": shot.height}
        else:
            box = page.locator(f".st-key-head_{shot.heads}").bounding_box()
            bottom = min(int(box["y"] + box["height"] + 16), shot.height)
            clip = {"x": 0, "y": 0, "width": shot.width, "height": bottom}
        png = page.screenshot(clip=clip, animations="disabled", caret="hide")
        browser.close()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.save(out, optimize=True)
    if out.stat().st_size > MAX_BYTES:
        # a palette PNG is several times smaller; it bands the colour bar slightly
        image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) \
             .save(out, optimize=True)
    return image.size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=[s.name for s in SHOTS], help="one picture only")
    a = ap.parse_args()
    missing = browser_missing()
    if missing:
        print(f"cannot take the screenshots: {missing}", file=sys.stderr)
        return 2
    (ROOT / "docs").mkdir(exist_ok=True)
    status = 0
    with StreamlitServer() as server:
        for shot in SHOTS:
            if a.only and shot.name != a.only:
                continue
            out = ROOT / "docs" / f"{shot.name}.png"
            size = shoot(server.url, shot, out)
            n_bytes = out.stat().st_size
            print(f"{out}: {size[0]} x {size[1]} px, {n_bytes / 1000:.0f} kB")
            if n_bytes > MAX_BYTES:
                print(f"warning: larger than {MAX_BYTES // 1000} kB", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
