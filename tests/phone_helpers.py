"""A student's phone as the server sees it, in the tests' own process: an id, its answers
stored as the phone's route stores them, and the message the server sends it
(``xattn.live.messages.room_message``, the function every server process calls).

The real HTTP path (page, stream, answer route, receipts) is in tests/test_phone_routes.py and
the browser tests; here the lecturer's page runs under AppTest beside phones that cost
nothing, so every step and kind is checked from both sides in seconds.
"""

from __future__ import annotations

import json

from xattn.classroom import NO_QUESTION, new_student_id


def store():
    from xattn.live.stores import class_store
    return class_store()


class Phone:
    """One student's phone in room ``code`` (joined: present, as an open stream makes it)."""

    def __init__(self, code: str):
        self.code, self.id = code, new_student_id()
        store().touch(code, [self.id])

    def view(self):
        return store().room_view(self.code)

    def answer(self, value, confidence=None):
        """Answer the room's current question (as ``POST /live/CODE/answer`` does), with how
        sure (``confidence``, where the room asks it); the value as stored."""
        return store().answer(self.code, self.view().step, self.id, value, confidence)

    def answer_step(self, n: int, value, confidence=None):
        """Answer step ``n`` of a homework (any of its steps, as the route takes it)."""
        return store().answer(self.code, n, self.id, value, confidence)

    def homework_step(self, n) -> dict:
        """What the server sends this phone of a homework's step ``n`` (``GET
        /live/CODE/step/N``, ``"next"``: the first it has not answered): ``{"room", "me"}``."""
        from xattn.live.homework import json_number, step_json
        return json.loads(json.dumps(step_json(store(), self.code, str(n), self.id),
                                     default=json_number))

    def mine(self):
        view = self.view()
        return store().my_answer(self.code, view.step, self.id)

    def message(self) -> dict:
        """What the server sends this phone now: ``{"room": ..., "me": ...}`` (its own part
        with its stored confidence where the room asks it, as the hub adds it)."""
        from xattn.live.build import earlier
        from xattn.live.catalog import room_lesson
        from xattn.live.messages import room_message
        view = self.view()
        msg = room_message(view, room_lesson(store(), self.code), earlier(store(), view))
        text = store().round_answers(self.code, view.step, view.round).get(self.id)
        me = msg.personal(text)
        if msg.confidence:
            me["level"] = store().round_levels(self.code, view.step, view.round).get(self.id)
        return {"room": json.loads(msg.room), "me": me}

    def answer_any(self) -> bool:
        """Answer the step's question whatever its kind (a tap, a number, a job for the
        first head, one link); False when the step asks nothing."""
        q = self.view().question
        if q == NO_QUESTION:
            return False
        if q.kind == "links":
            value = [(0, 0)]
        elif q.kind == "parts":
            value = [q.choices[0]] + [None] * (len(q.rows) - 1)
        elif q.kind == "number":
            value = q.low
        else:
            value = q.options()[0]
        self.answer(value)
        return True


def chart_values(spec: dict) -> list:
    """Every number of a phone chart, panel by panel (z, or each series' y)."""
    out = []
    for panel in spec["panels"]:
        if panel["kind"] == "heat":
            out.append(panel["z"])
        else:
            out.append([s["y"] for s in panel["series"]])
    return out
