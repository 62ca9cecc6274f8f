"""What ``st.App`` adds to the Streamlit page (``app.py``): a class's phones and live rooms.

- `ROUTES`: a phone's stream of its room (``/live/CODE/events``), its answers
  (``/live/CODE/answer``) and a host page's stream (``/live/CODE/pulse``); whether this
  process can start a class (``/live/ready``: ``ready.py``);
- `MIDDLEWARE`: every request's body bounded by its route before anything reads it
  (``bodies.py``), a page of another origin refused, websocket included (``origin.py``), what
  one client address may hold open in this process (``bounds.py``), and a
  student's link (``/?room=CODE``) answered with the phone's own light page (``phone.py``);
- `lifespan`: the process's hub of live rooms, started before the first request
  (``live.py``);
- `SCRIPT`: the Streamlit page every other request gets (``xattn/ui/main.py``).

Only public Streamlit and Starlette APIs: ``st.App``'s routes, middleware and lifespan.
"""

from pathlib import Path

from starlette.middleware import Middleware
from starlette.routing import Route

from xattn.ui.server.bodies import Bodies
from xattn.ui.server.bounds import Bounds
from xattn.ui.server.live import lifespan
from xattn.ui.server.origin import SameOrigin
from xattn.ui.server.phone import ROUTES, PhoneMiddleware
from xattn.ui.server.ready import ready

ROUTES = [*ROUTES, Route("/live/ready", ready)]

__all__ = ["ROUTES", "MIDDLEWARE", "lifespan", "SCRIPT"]

MIDDLEWARE = [Middleware(Bodies), Middleware(SameOrigin), Middleware(Bounds),
              Middleware(PhoneMiddleware)]
SCRIPT = str(Path(__file__).resolve().parent.parent / "main.py")
