"""The room's card on the host's page: the code, the students' link (the address phones
reach: ``XATTN_PUBLIC_URL`` or the page's own, with a warning where phones cannot reach it)
and its QR code; and the note a page in a room shows before the reveal."""

from __future__ import annotations

import base64
import html
import ipaddress
import os
from urllib.parse import urlencode, urlsplit

import streamlit as st

from xattn.classroom import qr_svg
from xattn.literal import md_code
from xattn.live.link import ROOM
from xattn.ui.i18n import gettext as _
from xattn.ui.room.framed import framed_warning
from xattn.ui.room.room import Room

__all__ = ["room_card", "student_link", "hidden_note", "PUBLIC_URL_ENV"]


PUBLIC_URL_ENV = "XATTN_PUBLIC_URL"      # the address phones reach the app at


_LOCAL = ("localhost", "localhost.localdomain", "ip6-localhost")


def student_link(code: str) -> tuple[str, str | None]:
    """The link students open (``?room=CODE`` on the address phones reach), and why phones
    cannot reach it, if they cannot: ``$XATTN_PUBLIC_URL``, else Streamlit's
    ``browser.serverAddress`` (and ``browser.serverPort``) when set to another host than
    localhost, else this page's own address."""
    query = "?" + urlencode({ROOM.key: code})
    public = os.environ.get(PUBLIC_URL_ENV, "").strip()
    if public:
        return public.split("?")[0].rstrip("/") + "/" + query, None
    address = str(st.get_option("browser.serverAddress") or "")
    if address and not _is_local(address):
        port = st.get_option("browser.serverPort")
        scheme = "https" if str(port) == "443" else "http"
        default = str(port) in ("80", "443")
        return f"{scheme}://{address}{'' if default else f':{port}'}/{query}", None
    base = (st.context.url or "http://localhost:8501/").split("?")[0].split("#")[0]
    if not base.endswith("/"):
        # st.context.url drops the path's last slash: behind a proxy at /xattn/ the link was
        # .../xattn?room=CODE, whose page's relative fetches (live/CODE/...) missed the prefix
        base += "/"
    host = urlsplit(base).hostname or ""
    if _is_local(host):
        return base + query, (
            f"This page's address ({md_code(host)}) is this computer's own: phones cannot "
            f"open it. Start the app with {md_code(f'{PUBLIC_URL_ENV}=http://ADDRESS:8501')} "
            "(this computer's address on the room's network, e.g. from `hostname -I`), or set "
            "`browser.serverAddress` in `.streamlit/config.toml`, or open this page at that "
            "address, and the QR code follows.")
    return base + query, None


def _is_local(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOCAL:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def room_card(room: Room, present: bool) -> None:
    """The host's card: the code, the student link and its QR code, large on a projector
    while the class joins (the room's first step), a strip afterwards so that the question's
    answers fit the same screen."""
    link, unreachable = student_link(room.code)
    large = room.view is not None and room.view.step == 1
    widths = ([2, 3] if present else [1, 2]) if large else [1, 4]
    qr, words = st.columns(widths, vertical_alignment="center")
    with qr:
        svg = base64.b64encode(qr_svg(link).encode()).decode()
        alt = html.escape(_("QR code of the class link {link}", link=link), quote=True)
        width = (200 if present else 160) if large else 96
        st.html(f'<img alt="{alt}" src="data:image/svg+xml;base64,{svg}" '
                f'style="width:100%;max-width:{width}px;image-rendering:pixelated">')
    with words:
        size = ("2.6rem" if present else "2rem") if large else "1.6rem"
        st.html(f'<div style="font-size:1rem">{html.escape(_("Join the class: code"))}</div>'
                f'<div style="font-size:{size};font-weight:700;letter-spacing:0.12em" '
                f'dir="ltr" translate="no">{room.code}</div>')  # A-Z, 2-9
        st.markdown(_("or open {link}", link=md_code(link)))
        framed_warning()
    if unreachable:
        st.warning(unreachable, icon=":material/wifi_off:")


def hidden_note(room: Room) -> None:
    """What a page in a room shows instead of the weights before the reveal."""
    step = room.view.step if room.view is not None else "?"
    st.info(_("The weights of step {step} are hidden until you reveal them: predict first, "
              "then see.", step=step) if room.host else
            _("The weights of step {step} are hidden until your teacher reveals them: predict "
              "first, then see.", step=step), icon=":material/visibility_off:")
