"""A phone's steps to revisit (phone.js): at the last step of a live class, the three steps
where its own prediction was furthest from the computed answer (``surprise``), with the
verdict that says why, kept on the phone: nothing of it is sent, and a reload still lists it.
A real server, a real class store and a phone in Chromium."""

from __future__ import annotations

import json

import pytest

from devtools.browser import ARTIFACTS, Host, Phone, StreamlitServer
from xattn.lesson import STEPS
from xattn.lesson.misconceptions import surprise
from xattn.live.prepared import prepared_attention

LIST_JS = """[...document.querySelectorAll('#revisit-list li')].map((li) => [li.dataset.step,
  li.textContent])"""


def told_of(n: int):
    step = STEPS[n - 1]
    a = prepared_attention(step)
    return step.tell(a, step.layer(a.n_layers))


@pytest.fixture(scope="module")
def classroom(chromium, tmp_path_factory):
    from xattn.classroom import SQLiteStore

    path = tmp_path_factory.mktemp("revisit") / "classes.sqlite3"
    env = {"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": ""}
    with StreamlitServer(log=ARTIFACTS / "revisit-server.log", env=env) as server:
        yield server, SQLiteStore(path)


def test_the_last_step_lists_the_three_furthest_predictions_and_nothing_leaves_the_phone(
        chromium, classroom):
    server, store = classroom
    host = Host(chromium, server.url)
    code, key = host.start()
    host.close()
    phone = Phone(chromium, "phone", 390, 844).open(f"{server.url}?room={code}")
    sent: list[str] = []
    phone.page.on("request", lambda r: r.method == "POST" and sent.append(r.post_data or ""))
    wait_k = told_of(4)
    mask = next(d for d in wait_k.distractors if d.key == "mask")
    plan = {1: ("tap", 1), 2: ("number", "3"), 3: ("number", "0"),
            4: ("tap", wait_k.question.choices.index(mask.value))}
    scores = {}
    for n, (how, value) in plan.items():
        if n > 1:
            store.set_step(code, key, n)
        phone.on_step(n, open_=True)
        if how == "tap":
            phone.tap_option(value)
        else:
            phone.send_number(value)
        phone.wait_receipt("saved")
        store.reveal(code, key, n)
        phone.on_step(n, revealed=True)
        told = told_of(n)
        answer = told.question.options()[value] if how == "tap" else float(value)
        scores[n] = surprise(told, answer)
        assert phone.page.locator("#revisit").is_hidden()          # not before the end
    assert scores[3] == 0 and scores[2] == 2.0 and scores[4] == 2.0 and 1 < scores[1] < 2
    store.set_step(code, key, len(STEPS))                          # the last step
    phone.on_step(len(STEPS))
    phone.wait("!document.getElementById('revisit').hidden", what="the steps to revisit")
    listed = phone.page.evaluate(LIST_JS)
    assert [n for n, _ in listed] == ["2", "4", "1"]               # furthest first; 3 was right
    assert listed[0][1].startswith(f"Step 2. {STEPS[1].title}Off by 2")
    assert "known slip, mask ignored" in listed[1][1]
    assert f"Step 1. {STEPS[0].title}" in listed[2][1]
    (ARTIFACTS / "revisit-phone.png").write_bytes(phone.shot("#revisit"))   # for a reader
    # nothing of it was sent: the phone's POSTs are its join and its four answers
    bodies = [json.loads(b) for b in sent]
    assert all(set(b) <= {"step", "round", "value", "confidence", "challenge", "nonce"}
               for b in bodies), bodies
    phone.page.reload()                                            # kept on the phone
    phone.wait("!document.getElementById('revisit').hidden", what="the list after a reload")
    assert [n for n, _ in phone.page.evaluate(LIST_JS)] == ["2", "4", "1"]
    assert not phone.page_errors, phone.page_errors
    phone.close()
