"""A class in a room, end to end: ``deploy/serve.sh 2`` behind HAProxy, a host and three
students in separate Chromium contexts (their own cookie jars), the class store shared by both
Streamlit processes (one SQLite file, or a real redis-server).

- The host opens ``?class=new``; the students open ``?room=CODE`` and land on both processes
  (HAProxy's affinity cookie ``XATTN_SERVER`` says where); each taps a prediction (one on a
  phone, by touch), their receipts say "Saved" and the host's page counts "3 of 3 answered";
  *Reveal* reaches every student's screen; *Next step* moves every student's page, and the
  number the students type at step 2 is counted too. The host key never reaches a student's
  page or link.
- A backend killed (SIGKILL) while two of its students are answering: one taps 0.3 s after the
  kill (while the page reconnects), one changes a pick 1.5 s after it; both are in the store,
  the host counts them, and each student's highlighted choice, receipt and verdict after the
  reveal agree with what the store has.
- A reconnected or reloaded student is still the same student (their id comes from the
  browser's XSRF token, which every process sees); *Ask again* starts every prediction afresh;
  a timer closes the question at zero on the pages of both processes.

Skipped, with the reason printed, where Chromium, HAProxy or redis-server is missing; failed
instead where XATTN_REQUIRE_BROWSER, XATTN_REQUIRE_HAPROXY or XATTN_REQUIRE_REDIS is set (CI).
Nothing here asserts on time: every wait polls a condition with a generous deadline, and the
times measured (the host's click to each student's screen) are printed (``-s``).
"""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import pytest
from classroom_helpers import Backend, RedisServer, redis_or_skip

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, runs, wait_for_app
from devtools.lecture_hall import REQUIRE_ENV, LectureHall, haproxy_missing, haproxy_required
from xattn.classroom.codes import student_of
from xattn.ui.identity import STUDENT_COOKIE

pytestmark = pytest.mark.browser

DEADLINE_MS = 120_000         # a busy 2-core machine: a student's full rerun can take seconds
HIDDEN = "appears here when your teacher reveals it"
SAVED = "Saved: "
PREDICT = '[class*="st-key-predict-"]'            # a student's prediction (its key: the question)
# Per page: the first time (Date.now(), ms) each watched condition held, checked every 50 ms.
WATCH_JS = """
([name, condition]) => {
  window.__xattnAt = window.__xattnAt || {};
  delete window.__xattnAt[name];
  const test = new Function(`return (${condition});`);
  const timer = setInterval(() => {
    if (test()) { window.__xattnAt[name] = Date.now(); clearInterval(timer); }
  }, 50);
}
"""
PREDICT_DRAWN = f"!!document.querySelector('{PREDICT} button:not([disabled]), {PREDICT} input')"
REVEALED = ("!!document.querySelector('.st-key-answer_chart_0 .js-plotly-plot .main-svg') && "
            f"!document.body.innerText.includes('{HIDDEN}')")
CHECKED = f"{PREDICT} button[aria-checked=true]"


# --- the lecture hall, per store backend -----------------------------------------------------

@dataclass
class Classroom:
    """The running hall and the store its processes share (opened here too, to check it)."""

    hall: LectureHall
    backend: Backend
    kind: str

    def store(self):
        return self.backend.open()


@pytest.fixture(scope="module", params=("sqlite", "redis"))
def classroom(request, chromium, tmp_path_factory):
    if haproxy_missing():
        if haproxy_required():
            pytest.fail(f"{REQUIRE_ENV} is set but the room's browser tests cannot run: "
                        f"{haproxy_missing()}", pytrace=False)
        pytest.skip(f"room browser tests skipped: {haproxy_missing()}")
    kind = request.param
    tmp = tmp_path_factory.mktemp(f"room-{kind}")
    redis = None
    if kind == "redis":
        redis_or_skip()
        redis = RedisServer(tmp)
        backend = Backend("redis", redis.url)          # the app's default key prefix
    else:
        backend = Backend("sqlite", str(tmp / "classes.sqlite3"))
    # Both processes get the same store; XATTN_REDIS_URL="" is no Redis (open_store).
    env = {"XATTN_CLASS_STORE": str(tmp / "classes.sqlite3"),
           "XATTN_REDIS_URL": redis.url if redis else ""}
    try:
        with LectureHall(processes=2, env=env, run_dir=ARTIFACTS / f"room-hall-{kind}") as hall:
            yield Classroom(hall, backend, kind)
    finally:
        if redis is not None:
            redis.stop()


# --- pages -----------------------------------------------------------------------------------

@dataclass
class Tab:
    """One person's browser: a context of its own (cookies), its page, its websockets."""

    page: object
    name: str
    phone: bool = False
    sockets: list = field(default_factory=list)     # [opened at (s), frames received]
    sent: list = field(default_factory=list)        # (s, what) of every request it sent

    @property
    def context(self):
        return self.page.context

    def server(self) -> str:
        """The process HAProxy's affinity cookie names for this browser."""
        return next(c["value"] for c in self.context.cookies() if c["name"] == "XATTN_SERVER")

    def student_id(self, store) -> str:
        """The id the server issued this browser's student (its signed cookie)."""
        cookie = next(c["value"] for c in self.context.cookies()
                      if c["name"] == STUDENT_COOKIE)
        return student_of(store.signing_key(), cookie)

    def highlighted(self) -> list[str]:
        """The prediction's options shown as chosen."""
        return [t.strip() for t in self.page.locator(CHECKED).all_inner_texts()]

    def query(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.page.url).query))

    def text(self) -> str:
        return self.page.inner_text("body")

    def watch(self, name: str, condition: str) -> None:
        self.page.evaluate(WATCH_JS, [name, condition])

    def seen_at(self, name: str) -> float:
        """Wait for a watched condition; the time (s since the epoch) it first held."""
        self.page.wait_for_function(f"() => (window.__xattnAt || {{}})[{name!r}]",
                                    timeout=DEADLINE_MS, polling=100)
        return self.page.evaluate(f"window.__xattnAt[{name!r}]") / 1000


def open_tab(browser, url: str, name: str, *, phone: bool = False, server: str = "",
             ready: str = PREDICT) -> Tab:
    """A new context (``server``: presenting that affinity cookie), ``url`` loaded."""
    size = {"width": 390, "height": 844} if phone else {"width": 1400, "height": 1000}
    context = browser.new_context(viewport=size, has_touch=phone, is_mobile=phone)
    if server:
        context.add_cookies([{"name": "XATTN_SERVER", "value": server, "url": url}])
    tab = Tab(context.new_page(), name, phone)
    tab.page.set_default_timeout(DEADLINE_MS)
    tab.page.add_init_script(RUN_COUNTER_JS)

    def opened(ws):
        record = [time.time(), 0]
        tab.sockets.append(record)
        ws.on("framereceived", lambda _: record.__setitem__(1, record[1] + 1))
        ws.on("framesent", lambda payload: tab.sent.append((time.time(), _request(payload))))
    tab.page.on("websocket", opened)
    tab.page.goto(url)
    tab.page.wait_for_selector(ready, timeout=DEADLINE_MS)
    wait_for_app(tab.page, timeout=DEADLINE_MS)
    assert tab.page.locator('[data-testid="stException"]').count() == 0, name
    return tab


def _request(payload) -> str:
    """A browser's request as one line: its kind, fragment and the prediction's value."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    msg = BackMsg()
    msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
    if msg.WhichOneof("type") != "rerun_script":
        return str(msg.WhichOneof("type"))
    run = msg.rerun_script
    picks = [str(getattr(w, w.WhichOneof("value"))).strip() for w in run.widget_states.widgets
             if "predict-" in w.id and w.WhichOneof("value")]
    return f"rerun fragment={run.fragment_id[:8] or '-'} predict={picks}"


def start_class(browser, classroom: Classroom) -> tuple[Tab, str, str]:
    host = open_tab(browser, classroom.hall.url + "?class=new", "host", ready=".st-key-reveal")
    q = host.query()
    assert "class" not in q and q.get("view") == "Lesson", host.page.url
    return host, q["room"], q["host"]


def counted(host: Tab, answered: int, present: int | None = None) -> str:
    """Wait until the host's page counts ``answered`` ("N of M answered"); return the text."""
    of = r"\d+" if present is None else str(present)
    want = re.compile(rf"^{answered} of {of} answered$")
    host.page.wait_for_function(
        """(pattern) => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
                         .some((e) => new RegExp(pattern).test(e.textContent.trim()))""",
        arg=want.pattern, timeout=DEADLINE_MS, polling=100)
    return next(t.strip() for t in host.page.locator('[data-testid="stMetricValue"]')
                .all_inner_texts() if want.match(t.strip()))


def answer(classroom: Classroom, code: str, student: Tab, act, value) -> None:
    """Do ``act`` (a tap, a typed number) on a student's page; wait until the store has
    ``value`` as this student's answer and the page's receipt says it is saved."""
    act()
    deadline = time.monotonic() + DEADLINE_MS / 1000
    while mine(classroom, code, student) != value:
        assert time.monotonic() < deadline, f"{student.name}'s {value!r} was never saved"
        student.page.wait_for_timeout(100)     # poll interval of a bounded loop
    student.page.wait_for_function(
        f"() => document.body.innerText.includes({SAVED!r})", timeout=DEADLINE_MS)


def mine(classroom: Classroom, code: str, student: Tab):
    """What the store has as this browser's answer to the class's step."""
    store = classroom.store()
    return store.my_answer(code, store.room_view(code).step, student.student_id(store))


def tap(classroom: Classroom, code: str, student: Tab, option: int) -> None:
    """Tap (a phone) or click a prediction's option."""
    button = student.page.locator(f"{PREDICT} button").nth(option)
    answer(classroom, code, student, button.tap if student.phone else button.click, option)


def type_number(classroom: Classroom, code: str, student: Tab, value: str) -> None:
    box = student.page.locator(f"{PREDICT} input")

    def act():
        box.fill(value)
        box.press("Enter")
    answer(classroom, code, student, act, float(value))


def reveal(host: Tab, students: list[Tab], step: int) -> dict[str, float]:
    """Click *Reveal*; wait until every student's screen shows the answer's chart. Seconds
    from the click to each student's screen."""
    for s in students:
        s.watch(f"revealed{step}", REVEALED)
    clicked = click_alone(host.page, "reveal")
    took = {s.name: s.seen_at(f"revealed{step}") - clicked for s in students}
    host.page.wait_for_selector(".st-key-ask_again", timeout=DEADLINE_MS)
    wait_for_app(host.page, "document.querySelectorAll('.st-key-ask_again').length === 1",
                 timeout=DEADLINE_MS)             # one panel: nothing left of the last run
    return took


def reconnected(tab: Tab, since: float, runs_before: int) -> None:
    """Wait until the page opened a websocket after ``since`` that the server answered, and
    ran the page since (``runs_before``: its runs counted before the fault; an idle page in a
    class runs only when asked, so the run may be over by now)."""
    deadline = time.monotonic() + DEADLINE_MS / 1000
    while not any(opened > since and frames for opened, frames in tab.sockets):
        assert time.monotonic() < deadline, f"{tab.name} did not reconnect"
        tab.page.wait_for_timeout(200)    # poll interval of a bounded loop (events run here)
    wait_for_app(tab.page, after_runs=runs_before, timeout=DEADLINE_MS)


def click_alone(page, key: str) -> float:
    """Click a button once the page is idle and draws it once (a run in progress may show the
    last run's copy beside the new one for a moment); the time of the click."""
    wait_for_app(page, f"document.querySelectorAll('.st-key-{key}').length === 1",
                 timeout=DEADLINE_MS)
    clicked = time.time()
    # a button with help text is drawn twice in its box (the tooltip's and a hidden copy)
    page.locator(f".st-key-{key}").get_by_role("button").first.click()
    return clicked


def routed(hall: LectureHall) -> None:
    """Wait until HAProxy sends a request to each process its cookie names (a process
    restarted after an earlier test's kill is up again)."""
    deadline = time.monotonic() + DEADLINE_MS / 1000
    for name in hall.backends:
        request = urllib.request.Request(hall.url, headers={"Cookie": f"XATTN_SERVER={name}"})
        while True:
            try:
                with urllib.request.urlopen(request, timeout=10) as r:
                    if r.headers.get("X-Xattn-Server") == name:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"HAProxy never sent a request to {name}"
            time.sleep(0.5)                     # poll interval of a bounded loop


def close(*tabs: Tab) -> None:
    for t in tabs:
        t.context.close()


# --- the tests -------------------------------------------------------------------------------

def test_three_students_on_two_processes_predict_and_see_the_reveal(chromium, classroom):
    host, code, key = start_class(chromium, classroom)
    url = f"{classroom.hall.url}?room={code}"
    students = [open_tab(chromium, url, f"student {i}", phone=i == 0) for i in range(3)]
    try:
        where = {s.name: s.server() for s in students}
        assert set(where.values()) == {"s1", "s2"}, where      # both processes hold students
        for s in students:
            assert HIDDEN in s.text()                            # the weights wait
            assert s.page.locator(".st-key-answer_chart_0").count() == 0
            assert key not in s.page.content() and key not in s.page.url
            assert s.query() == {"room": code}
        for s, option in zip(students, (2, 2, 5), strict=True):
            tap(classroom, code, s, option)
        assert counted(host, 3, 3) == "3 of 3 answered"
        assert classroom.store().room_view(code).counts == {0: 0, 1: 0, 2: 2, 3: 0, 4: 0,
                                                            5: 1, 6: 0}
        took = reveal(host, students, 1)
        for s in students:
            assert re.search(r"Right|you chose ", s.text()), s.name   # their prediction marked
        print(f"\n[{classroom.kind}] students on {where}; reveal -> student's screen: "
              + ", ".join(f"{n} {t:.1f} s" for n, t in took.items()))

        # Next step: every student's page follows the host to step 2 and asks again
        for s in students:
            s.watch("step2", "document.body.innerText.includes('2. Every row sums to 1') && "
                             f"document.body.innerText.includes('{HIDDEN}')")
        clicked = click_alone(host.page, "class_next")
        followed = {s.name: s.seen_at("step2") - clicked for s in students}
        for s, value in zip(students, ("1.000", "1.000", "0.990"), strict=True):
            wait_for_app(s.page, PREDICT_DRAWN, timeout=DEADLINE_MS)
            type_number(classroom, code, s, value)
        assert counted(host, 3, 3) == "3 of 3 answered"
        assert classroom.store().room_view(code).counts == {0.99: 1, 1.0: 2}
        print(f"[{classroom.kind}] next step -> student's page: "
              + ", ".join(f"{n} {t:.1f} s" for n, t in followed.items()))
        for t in (host, *students):
            assert t.page.locator('[data-testid="stException"]').count() == 0, t.name
    finally:
        close(host, *students)


def test_taps_while_a_backend_is_killed_are_saved_and_the_screens_tell_the_truth(
        chromium, classroom):
    hall = classroom.hall
    routed(hall)
    host, code, _ = start_class(chromium, classroom)
    live = host.server()
    dead = next(name for name in hall.backends if name != live)
    url = f"{hall.url}?room={code}"
    # one student with the host's process, two on the one that dies (all phones)
    students = [open_tab(chromium, url, f"student {i}", server=server, phone=True)
                for i, server in enumerate((live, dead, dead))]
    try:
        assert [s.server() for s in students] == [live, dead, dead]
        tap(classroom, code, students[0], 1)
        tap(classroom, code, students[2], 6)                # the pick that will change
        counted(host, 2, 3)

        killed = time.time()
        os.kill(hall.backends[dead][0], signal.SIGKILL)
        first, changer = students[1], students[2]
        time.sleep(max(0.0, killed + 0.3 - time.time()))
        # A tap 0.3 s after the kill: the page is reconnecting (its controls are disabled
        # until it is back, so a tap cannot be taken and shown as chosen meanwhile); the tap
        # lands as soon as it can be taken.
        first.page.locator(f"{PREDICT} button").nth(3).tap()
        time.sleep(max(0.0, killed + 1.5 - time.time()))
        changer.page.locator(f"{PREDICT} button").nth(4).tap()
        tapped = time.time() - killed
        for s, value in ((first, 3), (changer, 4)):
            deadline = time.monotonic() + DEADLINE_MS / 1000
            while mine(classroom, code, s) != value:
                assert time.monotonic() < deadline, (
                    f"{s.name}'s {value} was lost; lit {s.highlighted()}; it sent "
                    + "; ".join(f"+{t - killed:.2f} s {r}" for t, r in s.sent if t > killed))
                s.page.wait_for_timeout(100)        # poll interval of a bounded loop
            s.page.wait_for_function(f"() => document.body.innerText.includes({SAVED!r})",
                                     timeout=DEADLINE_MS)
        assert counted(host, 3).startswith("3 of ")
        view = classroom.store().room_view(code)
        assert view.counts == {0: 0, 1: 1, 2: 0, 3: 1, 4: 1, 5: 0, 6: 0}
        names = view.question.choices
        for s in students:                          # what is lit is what the store has
            assert s.highlighted() == [names[mine(classroom, code, s)]], s.name
            assert SAVED + names[mine(classroom, code, s)] in s.text(), s.name
        print(f"\n[{classroom.kind}] killed {dead}; taps done {tapped:.1f} s after; "
              + ", ".join(f"{s.name} now on {s.server()}" for s in students[1:]))

        took = reveal(host, students, 1)
        for s in students:                          # the verdict names the lit choice
            choice = names[mine(classroom, code, s)]
            assert s.highlighted() == [choice], s.name
            assert re.search(rf"(Right: `?{re.escape(choice)}|you chose `?"
                             rf"{re.escape(choice)})", s.text()), (s.name, s.text()[:400])
        print(f"[{classroom.kind}] reveal -> student's screen after the kill: "
              + ", ".join(f"{n} {t:.1f} s" for n, t in took.items()))
        for t in (host, *students):
            assert t.page.locator('[data-testid="stException"]').count() == 0, t.name
    finally:
        close(host, *students)


def test_a_reconnected_student_is_still_the_same_student(chromium, classroom):
    hall = classroom.hall
    routed(hall)
    host, code, _ = start_class(chromium, classroom)
    dead = next(name for name in hall.backends if name != host.server())
    student = open_tab(chromium, f"{hall.url}?room={code}", "student", server=dead)
    try:
        tap(classroom, code, student, 2)
        counted(host, 1, 1)
        before = runs(student.page)
        killed = time.time()
        os.kill(hall.backends[dead][0], signal.SIGKILL)
        reconnected(student, killed, before)
        wait_for_app(student.page, PREDICT_DRAWN, timeout=DEADLINE_MS)
        assert student.highlighted() == ["cat"]           # the store's answer, still lit
        tap(classroom, code, student, 4)                  # changes their answer
        view = classroom.store().room_view(code)
        assert (view.n_answered, view.counts[4], view.counts[2]) == (1, 1, 0)
    finally:
        close(host, student)


def test_a_student_who_reloads_the_page_is_still_the_same_student(chromium, classroom):
    host, code, _ = start_class(chromium, classroom)
    student = open_tab(chromium, f"{classroom.hall.url}?room={code}", "student")
    try:
        tap(classroom, code, student, 2)
        counted(host, 1, 1)
        student.page.reload()                             # a phone's browser does it too
        wait_for_app(student.page, PREDICT_DRAWN, timeout=DEADLINE_MS)
        assert SAVED in student.text()                    # the page knows the answer is in
        assert student.highlighted() == ["cat"]
        tap(classroom, code, student, 4)                  # changes their answer
        view = classroom.store().room_view(code)
        assert (view.n_answered, view.counts[4], view.counts[2]) == (1, 1, 0)
        assert counted(host, 1) == "1 of 1 answered"      # one student, not two
    finally:
        close(host, student)


def test_ask_again_starts_every_students_prediction_afresh(chromium, classroom):
    host, code, _ = start_class(chromium, classroom)
    student = open_tab(chromium, f"{classroom.hall.url}?room={code}", "student")
    try:
        tap(classroom, code, student, 2)
        counted(host, 1, 1)
        reveal(host, [student], 1)
        student.watch("again", f"document.body.innerText.includes({HIDDEN!r})")
        click_alone(host.page, "ask_again")
        student.seen_at("again")                          # the answer hidden again
        wait_for_app(student.page, PREDICT_DRAWN, timeout=DEADLINE_MS)
        assert classroom.store().room_view(code).n_answered == 0     # a new round
        assert SAVED not in student.text()
        assert student.highlighted() == []                # nothing shown as chosen
        tap(classroom, code, student, 2)                  # the same answer, after discussing
        assert classroom.store().room_view(code).counts[2] == 1
    finally:
        close(host, student)


def test_a_timer_closes_the_question_on_both_processes_at_zero(chromium, classroom):
    hall = classroom.hall
    routed(hall)
    host, code, key = start_class(chromium, classroom)
    url = f"{hall.url}?room={code}"
    students = [open_tab(chromium, url, f"student {i}", server=name)
                for i, name in enumerate(hall.backends)]
    try:
        tap(classroom, code, students[0], 1)
        for s in students:
            s.watch("closed", "document.body.innerText.includes('Time is up')")
        classroom.store().start_timer(code, key, 1, 5)    # the host's Timer, made shorter
        ends = classroom.store().room_view(code).timer.ends_at
        for s in students:
            s.page.wait_for_selector('[role="timer"]', timeout=DEADLINE_MS)   # the countdown
        closed_at = {s.name: s.seen_at("closed") - ends for s in students}
        for s in students:
            wait_for_app(s.page, timeout=DEADLINE_MS)
            buttons = s.page.locator(f"{PREDICT} button")
            assert all(buttons.nth(i).is_disabled() for i in range(buttons.count())), s.name
        assert students[0].highlighted() == ["black"] and students[1].highlighted() == []
        assert mine(classroom, code, students[1]) is None
        host.page.wait_for_function(
            "() => document.body.innerText.includes('Time is up: answers are closed.')",
            timeout=DEADLINE_MS)
        print(f"\n[{classroom.kind}] zero -> 'Time is up' on screen: "
              + ", ".join(f"{n} {t:+.1f} s" for n, t in closed_at.items()))
    finally:
        close(host, *students)


def touch_label(classroom: Classroom, code: str, phone: Tab, part: int, job: str,
                expected: tuple) -> None:
    """Tap ``job`` on head ``part + 1``'s row of pills; wait until the store has ``expected``."""
    pill = phone.page.locator(f'[class*="-open_part_{part}"]').get_by_role(
        "radio", name=job, exact=True)
    answer(classroom, code, phone, pill.tap, expected)


def touch_link(classroom: Classroom, code: str, phone: Tab, t: int, s: str,
               expected: tuple) -> None:
    """Tap target word ``t`` (unless picked already), then the source word named ``s``."""
    target = phone.page.locator('[class*="-open_tgt"]').get_by_role("radio").nth(t)
    if target.get_attribute("aria-checked") != "true":
        target.tap()
        phone.page.wait_for_function(
            "(n) => document.querySelectorAll('[class*=\"-open_tgt\"] [role=radio]')[n]"
            ".getAttribute('aria-checked') === 'true'", arg=t, timeout=DEADLINE_MS)
    source = phone.page.locator('[class*="-open_src"]').get_by_role("radio", name=s, exact=True)
    answer(classroom, code, phone, source.tap, expected)
    # the run that saved it also picks the next target word: wait for its receipt (an earlier
    # "Saved: ..." is already on the screen), so that the next look at the targets is current
    n = len(expected)
    said = f"{SAVED}{n} link{'s' if n != 1 else ''}."
    phone.page.wait_for_function(f"() => document.body.innerText.includes({said!r})",
                                 timeout=DEADLINE_MS)
    wait_for_app(phone.page, "true", timeout=DEADLINE_MS)


def test_phones_label_each_head_and_align_words_by_touch(chromium, classroom):
    """Steps 12 and 14 on touch phones: a row of pills a head, then a target word and its
    source word a link (one taken back from the list); the store holds each phone's answer,
    the host counts them, and after the reveal each phone shows its own verdict."""
    from xattn.ui.predict import SHORT
    host, code, key = start_class(chromium, classroom)
    store = classroom.store()
    store.set_step(code, key, 12)
    url = f"{classroom.hall.url}?room={code}"
    phones = [open_tab(chromium, url, f"phone {i}", phone=True) for i in range(2)]
    gold = {(0, 0): "the (0)", (1, 2): "king", (2, 1): "sick", (3, 3): "hears",
            (4, 4): "the (4)", (5, 5): "dog"}
    try:
        labels = [("aligns words", "aligns words", "aligns words", "sink"),
                  ("follows position", None, None, "sink")]
        for phone, said in zip(phones, labels, strict=True):
            got = [None] * 4
            for k, job in enumerate(said):
                if job is not None:
                    got[k] = job
                    touch_label(classroom, code, phone, k, SHORT[job], tuple(got))
        assert counted(host, 2, 2) == "2 of 2 answered"
        reveal(host, phones, 12)
        assert re.search(r"\d of 4 right", phones[0].text())
        assert re.search(r"\d of 2 right\*?\*? \(2 not guessed\)", phones[1].text().replace(
            "**", "")), phones[1].text()[:600]

        for s in phones:
            s.watch("step14", f"document.body.innerText.includes({HIDDEN!r}) && "
                              "document.body.innerText.includes('14. The class aligns')")
        store.set_step(code, key, 14)                       # the host's step picker
        for s in phones:
            s.seen_at("step14")
            wait_for_app(s.page, "!!document.querySelector('[class*=\"-open_src\"]')",
                         timeout=DEADLINE_MS)
        drawn = {}
        for (t, src), name in sorted(gold.items()):         # phone 0: the gold alignment
            drawn[t, src] = name
            touch_link(classroom, code, phones[0], t, name, tuple(sorted(drawn)))
        mine = [(0, "the (0)"), (1, "sick"), (2, "king"), (4, "the (0)")]   # word for word
        drawn = {}
        for t, name in mine:
            src = ("the (0)", "sick", "king", "hears", "the (4)", "dog").index(name)
            drawn[t, src] = name
            touch_link(classroom, code, phones[1], t, name, tuple(sorted(drawn)))
        undo = phones[1].page.locator('[class*="-open_drawn"] button',
                                      has_text="le (4) → the (0)")
        answer(classroom, code, phones[1], undo.tap, ((0, 0), (1, 1), (2, 2)))
        assert "Saved: 3 links." in phones[1].text()
        assert phones[1].page.evaluate("document.documentElement.scrollWidth") <= 390
        assert counted(host, 2, 2) == "2 of 2 answered"
        view = store.room_view(code)
        assert view.counts[(0, 0)] == 2 and view.counts[(1, 2)] == 1 and view.n_answered == 2
        reveal(host, phones, 14)
        assert "Right: the gold alignment exactly" in phones[0].text()
        own = 1 - 2 * 1 / (3 + 6)                           # one of 3 links is gold, of 6
        assert f"Your AER {own:.2f}" in phones[1].text()
        # links both drew: only "le -> the"; more than half of 2 is both
        host.page.wait_for_function(
            "() => document.body.innerText.includes('the class 0.71 · layer 2 0.00')",
            timeout=DEADLINE_MS)
        for t in (host, *phones):
            assert t.page.locator('[data-testid="stException"]').count() == 0, t.name
    finally:
        close(host, *phones)
