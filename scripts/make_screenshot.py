"""Screenshot of the default view for the README: docs/screenshot.png.

    python -m scripts.make_screenshot [--out docs/screenshot.png] [--width 1400]

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens it in headless Chromium (Debian's
/usr/bin/chromium driven by the pip package playwright; no browser download), waits until the
script has finished and every per-head heatmap is drawn, saves the top of the page (sidebar,
title, the two sentences, the per-head heatmaps) as a PNG under 400 kB, and stops the app.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from devtools.browser import (
    RUN_COUNTER_JS,
    StreamlitServer,
    browser_missing,
    launch_chromium,
    wait_for_app,
)

ROOT = Path(__file__).resolve().parent.parent

MAX_BYTES = 400_000


def drawn(heads: int) -> str:
    """JS condition: the per-head chart holds `heads` heatmaps and Plotly drew them all."""
    return (f"traces && traces.filter((t) => t.type === 'heatmap').length === {heads} && "
            f"document.querySelectorAll('.st-key-per_head g.hm image').length === {heads}")


def shoot(url: str, out: Path, width: int, heads: int = 4) -> tuple[int, int]:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": width, "height": 1400})
        page.add_init_script(RUN_COUNTER_JS)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(url)
        wait_for_app(page, drawn(heads))
        page.evaluate("document.fonts.ready")
        if page.locator('[data-testid="stException"]').count() or errors:
            raise SystemExit(f"the page shows an error: {errors}")
        box = page.locator(".st-key-per_head").bounding_box()
        bottom = int(box["y"] + box["height"] + 16)
        png = page.screenshot(clip={"x": 0, "y": 0, "width": width, "height": bottom},
                              animations="disabled", caret="hide")
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
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.png")
    ap.add_argument("--width", type=int, default=1400)
    a = ap.parse_args()
    missing = browser_missing()
    if missing:
        print(f"cannot take the screenshot: {missing}", file=sys.stderr)
        return 2
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with StreamlitServer() as server:
        size = shoot(server.url, a.out, a.width)
    n_bytes = a.out.stat().st_size
    print(f"{a.out}: {size[0]} x {size[1]} px, {n_bytes / 1000:.0f} kB")
    if n_bytes > MAX_BYTES:
        print(f"warning: larger than {MAX_BYTES // 1000} kB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
