"""A class in a room under AppTest, the details: *Back to the class*, the host's projector
notice, the class's expected attention after a tapped-word reveal, an unknown or expired code,
and presenter mode in Step through, Compare and Head statistics (larger chart text, tables
tall enough for every row). The store is a real SQLite file, as in test_app_room.py."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import streamlit.testing.v1.local_script_runner as script_runner
from apptest_helpers import chart, decode, heatmaps, run_app
from classroom_helpers import wait_for

# The room helpers, and the fixture that points the class store at this test's own SQLite file.
from phone_helpers import Phone
from streamlit import dataframe_util
from test_app_room import (
    class_file,  # noqa: F401  (an autouse fixture: imported to apply here)
    everything_sent,
    page,
    start_class,
)

from xattn.classroom import ALPHABET, Limits, Question, RoomNotFound, SQLiteStore
from xattn.ui.look import FONT_SCALE
from xattn.ui.room.typed import JOIN_FORM

pytestmark = pytest.mark.usefixtures("fresh_cache")

PROJECTOR = "Your devices"       # the host's expander: its key, its other devices


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def texts(at) -> str:
    return " ".join(m.value for m in at.markdown)


# --- 1. Explore, and back to the class --------------------------------------------------------

def test_a_student_who_explores_sees_the_full_page_and_the_way_back_to_the_class():
    host, code, key = start_class()
    student = page(room=code, explore="1")                             # from the phone's link
    assert student.session_state["view"] == "Lesson" and student.get("tabs")
    # step 1's own settings, as on the host's page (one head)
    assert dict(student.query_params) == {"room": code, "explore": "1", "view": "Lesson",
                                          "heads": "1"}
    assert student.session_state["heads"] == host.session_state["heads"] == 1
    student.session_state["view"] = "Heads"                              # explores a view
    student.run()
    assert "hidden until your teacher reveals" in " ".join(i.value for i in student.info)
    host.button(key="class_next").click().run()                          # the class moves on
    student.run()                                     # what its follow component asks for
    assert student.session_state["view"] == "Heads"                      # not pulled back
    assert "step 2" in " ".join(i.value for i in student.info)           # ... but told
    back = next(m.value for m in student.markdown if "Back to the class" in m.value)
    assert back == (f'<a href="?room={code}" target="_self">Back to the class</a> · class '
                    f"{code} is on step 2")                # the phone's page, in this tab
    assert key not in everything_sent(student)


def test_a_stale_hidden_notice_goes_once_the_step_is_revealed():
    host, code, _ = start_class()
    student = page(room=code, explore="1")
    student.session_state["view"] = "Heads"
    student.run()
    assert "hidden until" in " ".join(i.value for i in student.info)
    host.button(key="reveal").click().run()
    student.run()                                    # what its follow component asks for
    assert "hidden until" not in " ".join(i.value for i in student.info)
    assert student.get_by_key("head_1")


# --- 2. The projector notice --------------------------------------------------------------------

def test_the_host_key_is_never_on_the_hosts_screen_and_its_devices_note_is_the_hosts_only():
    host, code, key = start_class()
    phone = Phone(code)
    for act in (lambda: None, lambda: phone.answer(2),
                lambda: host.button(key="reveal").click().run(),
                lambda: host.button(key="class_next").click().run()):
        act()
        assert key not in everything_sent(host)                          # nor in its link
        notice = next(e for e in host.expander if e.label == PROJECTOR)  # at every moment
        words = " ".join(m.value for m in notice.markdown)
        assert "address holds no host key" in words and "second device" in words
        assert notice.button(key="rotate_host")                          # ... and the way out
        said = json.dumps(phone.message())
        assert "address" not in said and "host key" not in said.lower() and key not in said
    student = page(room=code, explore="1")
    student.session_state["view"] = "Heads"
    student.run()
    no_notice(student, key)                                              # exploring


def no_notice(at, key: str) -> None:
    """A student's page as it is now: no word of the host key, no way to change it."""
    assert not at.exception, at.exception
    assert not any(e.label == PROJECTOR for e in at.expander)
    sent = everything_sent(at)
    assert "address holds" not in sent and "host key" not in sent.lower() and key not in sent
    assert not any(b.key == "rotate_host" for b in at.button)


# --- 3. The class's expected attention after a tapped-word reveal --------------------------------

def test_after_a_tapped_word_reveal_the_host_sees_the_class_row_beside_the_true_one():
    host, code, _ = start_class()                                        # step 1: tap a word
    for token in (5, 5, 2, 6):                                           # "the (5)" twice
        Phone(code).answer(token)
    host.run()
    assert [m.value for m in host.metric] == ["4 of 4 answered"]
    assert not any(c.key == "class_taps" for c in host.get("plotly_chart"))   # not before
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    taps = chart(host, "class_taps")
    heat = heatmaps(taps)[0]
    z = decode(heat["z"])
    assert z.shape == (2, 7)
    assert heat["y"][0].startswith("the class") and heat["y"][1] == "head 1 (weights)"
    assert heat["x"] == ["0: the (0)", "1: black", "2: cat", "3: sat", "4: on", "5: the (5)",
                         "6: mat"]
    np.testing.assert_allclose(z[0], [0, 0, 0.25, 0, 0, 0.5, 0.25], atol=1e-6)
    # the true row: head 1's weights of the target the step asks about (chat), as on screen
    head_1 = heatmaps(chart(host, "head_1"))[0]
    i = next(n for n, label in enumerate(head_1["y"]) if label.endswith(": chat"))
    assert "chat" in taps["layout"]["title"]["text"]
    np.testing.assert_allclose(z[1], decode(head_1["z"])[i], atol=1e-6)


# --- 4. An unknown or an expired code -----------------------------------------------------------

def _refused(at, code: str) -> None:
    assert not at.exception, at.exception
    text = " ".join(w.value for w in at.warning)
    assert f"No class is running with the code {code}" in text
    assert "Type the class code below" in text
    assert "room" not in at.query_params and "room" not in at.session_state
    assert any(JOIN_FORM in h.proto.body for h in at.main.get("html"))   # on the page, not folded


def test_a_well_formed_unknown_code_gets_a_notice_and_a_box_that_opens_the_class():
    _, live, _ = start_class()
    unknown = next(c * 6 for c in ALPHABET if c * 6 != live)
    at = page(room=unknown.lower()[:3] + "-" + unknown[3:])          # as typed: "hhh-HHH"
    _refused(at, unknown)
    # the box is a plain form: the browser opens ?room=CODE, the phone's page, in this tab
    # (no rerun of this page: test_browser_typed.py follows it in Chromium, with its bytes)
    form = next(h.proto.body for h in at.main.get("html") if JOIN_FORM in h.proto.body)
    assert '<form class="xattn-join" method="get">' in form and 'name="room"' in form
    assert "action=" not in form                       # this page's own path: a proxy's prefix


def test_an_expired_rooms_code_gets_the_same_notice_and_a_box():
    store = SQLiteStore(os.environ["XATTN_CLASS_STORE"], Limits(ttl_seconds=1.0))
    code, _ = store.create_room((Question("token", ("a", "b")),))

    def gone():
        try:
            store.room_view(code)
            return False
        except RoomNotFound:
            return True
    wait_for(gone, what="the room to expire")
    store.close()
    _refused(page(room=code), code)


# --- 5. Presenter mode: larger chart text in every view -----------------------------------------

def _fonts(layout: dict) -> dict:
    """Every text size a chart's layout sets: its font, title, axis ticks and annotations."""
    sizes = {"font": layout["font"]["size"], "title": layout["title"]["font"]["size"]}
    for axis in ("xaxis", "yaxis"):
        if (layout.get(axis) or {}).get("tickfont"):
            sizes[axis] = layout[axis]["tickfont"]["size"]
    for n, note in enumerate(layout.get("annotations") or []):
        if (note.get("font") or {}).get("size"):
            sizes[f"annotation {n}"] = note["font"]["size"]
    return sizes


@pytest.mark.parametrize(("view", "keys"), [
    ("Step through", ("step_pick", "step_bar")),
    ("Compare", ("compare_a", "compare_b")),
    ("Head statistics", ("stats_normalised_entropy", "stats_effective_keys",
                         "stats_confidence", "stats_diagonal_alignment", "stats_monotonicity")),
])
def test_presenter_mode_enlarges_chart_text_in_more_views_than_heads(view, keys):
    small, big = run_app({"view": view}), run_app({"view": view, "present": "1"})
    for at in (small, big):
        assert not at.exception, at.exception
    for key in keys:
        normal, presented = _fonts(chart(small, key)["layout"]), _fonts(chart(big, key)["layout"])
        assert presented.keys() == normal.keys(), key
        assert presented == {k: round(v * FONT_SCALE) for k, v in normal.items()}, key


def test_presenter_mode_enlarges_the_saturation_chart_of_step_through():
    small = chart(run_app({"view": "Step through"}), "saturation")["layout"]
    big = chart(run_app({"view": "Step through", "present": "1"}), "saturation")["layout"]
    assert _fonts(big) == {k: round(v * FONT_SCALE) for k, v in _fonts(small).items()}


# --- 6. Step through's tables show every row ----------------------------------------------------

@pytest.fixture
def sent_tables(monkeypatch):
    """After each run, every table the page sent: (height in px, row height in px, the rows),
    read from the messages themselves (AppTest's elements do not keep a table's height)."""
    tables: list[tuple[int | None, int, list]] = []
    parse = script_runner.parse_tree_from_messages

    def spy(messages):
        elements = {}
        for msg in messages:                   # a later delta at the same place replaces one
            if msg.HasField("delta") and msg.delta.WhichOneof("type") == "new_element":
                elements[tuple(msg.metadata.delta_path)] = msg.delta.new_element
        tables.clear()
        for _, element in sorted(elements.items()):
            if element.WhichOneof("type") == "dataframe":
                rows = dataframe_util.convert_arrow_bytes_to_pandas_df(
                    element.dataframe.arrow_data.data)
                pixels = (element.height_config.pixel_height
                          if element.height_config.WhichOneof("height_spec") == "pixel_height"
                          else None)
                tables.append((pixels, element.dataframe.row_height,
                               [str(r) for r in rows.iloc[:, 0]]))
        return parse(messages)
    monkeypatch.setattr(script_runner, "parse_tree_from_messages", spy)
    return tables


def test_step_throughs_tables_are_tall_enough_for_every_row(sent_tables):
    row_heights = {}
    for present in (False, True):
        at = run_app({"view": "Step through", **({"present": "1"} if present else {})})
        assert not at.exception, at.exception
        assert len(sent_tables) == len(at.dataframe) >= 5
        for height, row_px, rows in sent_tables:
            assert row_px > 0 and height is not None, (present, rows[:2])
            # the header row, every row (W_Q's d_model rows: 16 of them, the rest scroll),
            # and the grid's 1 px border above and below
            shown = min(len(rows), 16)
            assert height >= row_px * (shown + 1) + 2, (present, height, row_px, len(rows))
        sources = [rows for _, _, rows in sent_tables if rows and rows[-1] == "6: mat"]
        assert len(sources) >= 3 and all(len(rows) == 7 for rows in sources)   # k, 3-6, 7
        row_heights[present] = {row_px for _, row_px, _ in sent_tables}
    assert min(row_heights[True]) > max(row_heights[False])    # presenter text: taller rows


def test_an_answer_between_the_hosts_two_reads_is_redrawn(monkeypatch):
    """The host's page reads the room's tally, then the room (the count it draws). An answer
    that lands between the two reads must leave the tally the page drew older than the
    store's, so that its follow component asks for the count again; the other way round the
    count would stay one answer short for good ("the host's page stays at 99 while the store
    counts 100")."""
    from xattn.classroom import new_student_id, open_store
    from xattn.ui.room import room as room_module

    host, code, key = start_class()
    real = open_store()
    step = real.room_view(code).step

    class Racing:                      # the store, with a student answering mid-read
        def __getattr__(self, name):
            return getattr(real, name)

        def room_view(self, *args, **kwargs):
            seen = real.room_view(*args, **kwargs)
            real.answer(code, step, new_student_id(), 1)
            return seen

    monkeypatch.setattr(room_module, "class_store", Racing)
    at = page(room=code, host=key)
    (follow,) = [c for c in at.get("bidi_component") if c.proto.id.endswith("xattn_follow")]
    drawn = json.loads(follow.proto.json)
    assert drawn["url"] == f"live/{code}/pulse" and drawn["version"] == real.room_view(code).version
    assert drawn["tally"] < real.pulse([code])[code].tally  # the page will be asked again
    real.close()
