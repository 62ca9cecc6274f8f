"""A room's default language (issue 45): set by its lecturer, kept in the class store (the
same tests on SQLite and a real redis-server), and what a phone without a language of its
own opens in (xattn/server/phone.py on a real HTTP server)."""

from __future__ import annotations

import pytest
from test_phone_routes import QUESTIONS, Server, page_of

from xattn.classroom import HostRefused, Limits, Question, RoomNotFound, SQLiteStore
from xattn.server import languages as L
from xattn.server import live
from xattn.server.phone import LANG_COOKIE

ROOM = (Question("choice", ("up", "down")),)


def test_a_room_has_no_language_until_its_lecturer_sets_one_and_every_process_reads_it(
        backend, store):
    code, secret = store.create_room(ROOM)
    assert store.language(code) == ""
    version = store.room_view(code).version
    store.set_language(code, secret, "es")
    assert store.language(code.lower()) == "es"
    assert store.room_view(code).version == version + 1        # its pages and phones redraw
    other = backend.open()                                     # another process reads it
    assert other.language(code) == "es"
    other.set_language(code, secret, "ar")
    other.close()
    assert store.language(code) == "ar"
    store.set_language(code, secret, "")                       # none: each phone's browser
    assert store.language(code) == ""


def test_a_rooms_language_is_one_of_the_offered_or_refused(backend, store):
    code, secret = store.create_room(ROOM)
    with pytest.raises(ValueError, match=r"a room's language \(en, fr, de, es, zh, ar or '' "
                                         r"for none\) is one of en, fr, de, es, zh, ar, "
                                         r"received 'pt'"):
        store.set_language(code, secret, "pt")
    with pytest.raises(ValueError, match="received 'en-XA'"):    # the pseudo-locale: tests only
        store.set_language(code, secret, "en-XA")
    with pytest.raises(TypeError, match="is a str, received NoneType"):
        store.set_language(code, secret, None)
    with pytest.raises(HostRefused):
        store.set_language(code, secret + "x", "fr")
    assert store.language(code) == ""
    with pytest.raises(RoomNotFound):
        store.language("ZZZZZZ")


def test_a_room_the_store_lost_comes_back_in_its_language(backend, store):
    code, secret = store.create_room(ROOM)
    store.set_language(code, secret, "zh")
    snap = store.snapshot(code)
    backend.wipe()
    assert store.restore(snap) is True
    assert store.language(code) == "zh"


@pytest.mark.parametrize(("header", "cookie", "room", "lang"), [
    ("ar-EG", None, "es", "es"),          # the room's default before the browser's
    ("ar-EG", "fr", "es", "fr"),          # the phone's own pick wins
    ("ar-EG", None, "", "ar"),            # no default: the browser's
    ("ar-EG", None, None, "ar"),          # unread: the browser's
    (None, None, "pt", "en"),             # not one of ours: as none
    ("de", "en-XA", "zh", "en-XA"),
])
def test_a_phones_language_is_its_pick_then_the_rooms_then_its_browsers(header, cookie, room,
                                                                         lang):
    assert L.negotiate(header, cookie, room) == lang


@pytest.fixture
def store_file(tmp_path):
    s = SQLiteStore(tmp_path / "c.sqlite3", Limits(join_work_bits=8, join_work_pieces=1))
    yield s
    s.close()


@pytest.fixture
def site(store_file, monkeypatch):
    server = Server(store_file)
    monkeypatch.setattr(live, "_made", [server.hub])
    yield server
    server.stop()


def lang_of(site, code, cookie=None, accept="ar-EG,ar;q=0.9"):
    headers = {"Accept-Language": accept, **({"Cookie": cookie} if cookie else {})}
    r, body = site.request("GET", f"/?room={code}", headers=headers)
    assert r.status == 200
    return body.decode().split('<html lang="')[1].split('"')[0]


def test_a_phone_with_no_cookie_opens_in_the_rooms_language_and_its_own_pick_wins(
        site, store_file):
    code, secret = store_file.create_room(QUESTIONS)
    assert lang_of(site, code) == "ar"                           # no default: its browser's
    store_file.set_language(code, secret, "es")
    assert lang_of(site, code) == "es"
    assert 'dir="ltr"' in page_of(site, code)[1]
    assert lang_of(site, code, f"{LANG_COOKIE}=fr") == "fr"      # the phone's picker wins
    assert lang_of(site, "ZZZZZZ") == "ar"                       # no such room: its browser's
