"""Why a few CSV downloads fail under load even with affinity: a reproduction, no timing.

    python -m benchmarks.download_race

``st.download_button`` with callable data (the app's "Download the weights as CSV",
``on_click="ignore"``) works in two steps: the browser asks the session's process to run the
callable (a ``backend_operation_request`` over the websocket) and gets a ``/media/<id>.csv`` URL
back, then fetches that URL. Streamlit 1.67 stores the generated file without tying it to any
session (``MediaFileManager.execute_deferred``), and every script run of *any* session ends with
``remove_orphaned_files``, which marks an unreferenced download on its first pass and deletes it
on the second. So if two other script runs finish between the two steps, the fetch gets 404.
In a classroom that is one student's download racing the others' clicks, on one process or many.

The app sends small files with the page (bytes: the file belongs to the session and survives
other sessions' runs) and makes the others on click (more than
``xattn.ui.views.heads.SMALL_DOWNLOAD`` weights), with
``xattn/ui/internals/deferred_downloads.py`` tying the made file to the session that
clicked until its next full run. This starts one server and shows both, without timing: for
each, session A gets the URL; fetched at once it works; then A gets the URL again, session B
reruns twice, and A fetches: 200 for both (stock Streamlit: 404 for the one made on click;
``tests/test_streamlit_internals.py`` keeps a canary of that).
"""

from __future__ import annotations

import asyncio
import random
import sys

from benchmarks.students import CSV_HEADER, Session, Stats
from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import http_get

BIG = {"src": " ".join(f"s{i}" for i in range(64)), "tgt": " ".join(f"t{i}" for i in range(64)),
       "d_model": "64"}     # 4 x 64 x 64 weights: more than SMALL_DOWNLOAD, made on click


async def race(url: str, query: dict) -> list[tuple[str, int]]:
    stats = Stats()
    a = Session(0, url, stats, random.Random(0), download=False, query=query)
    b = Session(1, url, stats, random.Random(1), download=False)
    out = []
    async with a.connected() as tab_a, b.connected() as tab_b:
        await a.rerun(tab_a)
        await b.rerun(tab_b)
        kind = "sent with the page" if a.csv_url else "made on click (deferred)"
        status, _, _, body = await http_get(await a.csv_location(tab_a), a.cookies)
        out.append((f"{kind}: fetched at once", status if body.startswith(CSV_HEADER)
                    else -status))
        first = await a.csv_location(tab_a)
        for seed in (5, 6):          # two script runs of another session finish meanwhile
            b.values["seed"] = seed
            await b.rerun(tab_b)
        status, _, _, _ = await http_get(first, a.cookies)
        out.append((f"{kind}: fetched after two runs of another session", status))
    return out


def main() -> int:
    with StreamlitServer(log=ARTIFACTS / "download-race.log") as server:
        small = asyncio.run(race(server.url, {}))
        big = asyncio.run(race(server.url, BIG))
    for what, status in small + big:
        print(f"{what}: HTTP {status}")
    return 0 if small[-1][1] == big[-1][1] == 200 else 1   # 0: both kinds survive the race


if __name__ == "__main__":
    sys.exit(main())
