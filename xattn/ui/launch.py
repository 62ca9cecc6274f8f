"""``python -m xattn.ui.launch app.py [options]``: ``streamlit run`` with the page loaded first.

``streamlit run app.py`` imports nothing of the page until a browser's first request starts the
first script run; only then do the changes ``xattn.ui.page.install_patches`` makes to
Streamlit take effect. In a lecture hall a restarted process is reached by browsers the moment
it listens: a student who reconnects and taps while that first run is still importing the page
(about a second) sends a tap that stock Streamlit drops, because the tap names a fragment the
new session has not drawn yet (``xattn/ui/late_fragments.py``), and the student's screen shows a
choice the class never got. ``deploy/serve.sh`` therefore starts each process through this
module: the page is imported and Streamlit patched before the server accepts a connection, so
the first run is quick and no early tap is dropped. The arguments are ``streamlit run``'s.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from xattn.ui import page

    page.install_patches()        # all but the reaper, which starts with the first run
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
