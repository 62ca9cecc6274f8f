"""What ``st.App`` adds to the Streamlit page (``app.py``): a class's phones and live rooms.

- `ROUTES`: a phone's stream of its room (``/live/CODE/events``), its answers
  (``/live/CODE/answer``) and a host page's stream (``/live/CODE/pulse``); whether this
  process can start a class (``/live/ready``: ``ready.py``);
- `middleware`: every request's body bounded by its route before anything reads it
  (``bodies.py``), a page of another origin refused, websocket included (``origin.py``), what
  one client address may hold open in this process (``bounds.py``), and a
  student's link (``/?room=CODE``) answered with the phone's own light page (``phone.py``);
- `lifespan`: the process's hub of live rooms, started before the first request
  (``live.py``).

Every other request gets the Streamlit page (``xattn.ui.SCRIPT``); ``app.py`` composes the two.
No streamlit import here (``tests/test_package.py``): what a class's step is comes from
``xattn/live/``.

Only public Streamlit and Starlette APIs: ``st.App``'s routes, middleware and lifespan.
"""

from collections.abc import Callable

from starlette.middleware import Middleware
from starlette.routing import Route

from xattn.server.bodies import Bodies
from xattn.server.bounds import Bounds
from xattn.server.live import lifespan
from xattn.server.origin import SameOrigin
from xattn.server.phone import ROUTES, PhoneMiddleware
from xattn.server.ready import ready

ROUTES = [*ROUTES, Route("/live/ready", ready)]

__all__ = ["ROUTES", "middleware", "lifespan"]



def middleware(upload_bytes: Callable[[], int]) -> list[Middleware]:
    """The middleware in front of the page and the routes, in order; ``upload_bytes()``: the
    largest file the page takes, in bytes (``app.py``: Streamlit's ``server.maxUploadSize``)."""
    return [Middleware(Bodies, upload_bytes=upload_bytes), Middleware(SameOrigin),
            Middleware(Bounds), Middleware(PhoneMiddleware)]
