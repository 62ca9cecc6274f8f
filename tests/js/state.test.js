// The phone's reducer (xattn/server/assets/phone/state.js), run by node's own test runner
// (`node --test tests/js/`; in pytest: tests/test_js.py). Every case is a state and an action
// and what the next state must hold; the reducer touches no DOM, no storage and no clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dueToSend, initialState, levelOf, reduce, shown } from "../../xattn/server/assets/phone/state.js";
import { STRINGS, WANTED, say, told } from "../../xattn/server/assets/phone/strings.js";
import { canonical, tapLink, tapPart, words } from "../../xattn/server/assets/phone/controls.js";

const T = 1000;                                    // this phone's clock, seconds
const ASK = { control: "tokens", choices: ["the", "cat", "sat"] };
const room = (over) => ({ code: "HJK23M", mode: "live", version: 3, phase: "asking", step: 2, round: 1,
  n_steps: 14, title: "A step", ask: ASK, timer: null, ...over });
const joinedIn = (over) => reduce(initialState({ code: "HJK23M" }, null),
  { type: "frame", room: room(over), me: { mine: null }, now: T, t: T });
const frozen = (s) => JSON.parse(JSON.stringify(s));

test("a tap goes to the outbox, canonical, and is due to be sent once", () => {
  const s = joinedIn();
  const before = frozen(s);
  const next = reduce(s, { type: "tap", value: 1, t: T });
  assert.deepEqual(frozen(s), before);                          // pure: the old state as it was
  assert.deepEqual(next.pending, { step: 2, round: 1, value: 1 });
  assert.equal(dueToSend(next, T), true);
  const sending = reduce(next, { type: "sending", t: T });
  assert.equal(dueToSend(sending, T + 1), false);              // one POST at a time
  const retry = reduce(sending, { type: "offline", t: T + 1 });
  assert.equal(retry.net, "offline");
  assert.equal(dueToSend(retry, T + 2), false);                 // again 4 s after it was sent
  assert.equal(dueToSend(retry, T + 4.5), true);
});

test("the store's receipt settles the tap; a newer tap meanwhile is kept and sent next", () => {
  const a = reduce(joinedIn(), { type: "tap", value: 1, t: T });
  const p = a.pending;
  const b = reduce(reduce(a, { type: "sending", t: T }), { type: "tap", value: 2, t: T + 0.1 });
  const c = reduce(b, { type: "sent", pending: p, receipt: { state: "saved", value: 1 }, status: 200, t: T + 0.2 });
  assert.equal(c.pending.value, 2);                              // the newer one wins
  assert.equal(c.inflight, false);
  assert.equal(dueToSend(c, T + 0.2), true);
  const d = reduce(c, { type: "sent", pending: c.pending, receipt: { state: "saved", value: 2 }, status: 200, t: T + 0.3 });
  assert.equal(d.pending, null);
  assert.equal(d.me.mine, 2);
  assert.equal(d.receipt.state, "saved");
});

test("a frame of the next step drops the tap on its way and says it was not confirmed", () => {
  const a = reduce(joinedIn(), { type: "tap", value: 0, t: T });
  const b = reduce(a, { type: "frame", room: room({ step: 3, version: 4 }), me: { mine: null }, now: T, t: T + 1 });
  assert.equal(b.pending, null);
  assert.deepEqual(b.lost, { step: 2, round: 1, value: 0 });
});

test("the class's own copy of the answer saves the tap; a closed question refuses it", () => {
  const a = reduce(joinedIn(), { type: "tap", value: 2, t: T });
  const saved = reduce(a, { type: "me", me: { mine: 2 }, now: T, t: T });
  assert.equal(saved.pending, null);
  assert.equal(saved.receipt.state, "saved");
  const closed = reduce(a, { type: "frame", room: room({ phase: "closed", version: 4 }), me: { mine: null }, now: T, t: T });
  assert.equal(closed.pending, null);
  assert.equal(closed.receipt.state, "refused");
  assert.equal(closed.receipt.why, say("closed.before"));
});

test("a timer at zero closes the question: taps do nothing, the tick says so once", () => {
  const s = joinedIn({ timer: { ends_at: T + 5 } });
  assert.equal(s.open, true);
  const later = reduce(s, { type: "tick", t: T + 6 });
  assert.equal(later.open, false);
  assert.equal(reduce(later, { type: "tick", t: T + 7 }), later);      // nothing new: same state
  assert.equal(reduce(later, { type: "tap", value: 1, t: T + 7 }).pending, null);
});

test("the server's clock: a phone whose own clock is 1 h off still closes on time", () => {
  const s = reduce(initialState({ code: "HJK23M" }, null),
    { type: "frame", room: room({ timer: { ends_at: T + 5 } }), me: { mine: null }, now: T, t: T - 3600 });
  assert.equal(reduce(s, { type: "tick", t: T - 3600 + 4 }).open, true);
  assert.equal(reduce(s, { type: "tick", t: T - 3600 + 6 }).open, false);
});

test("how sure: held for the answer to come, sent with it, tapped again taken back", () => {
  const levels = [["sure", "Sure"], ["guess", "A guess"]];
  const s = joinedIn({ ask: { ...ASK, levels: levels } });
  const held = reduce(s, { type: "level", level: "guess", t: T });
  assert.equal(levelOf(held), "guess");
  assert.equal(held.pending, null);
  const tapped = reduce(held, { type: "tap", value: 0, t: T });
  assert.deepEqual(tapped.pending, { step: 2, round: 1, value: 0, confidence: "guess" });
  const back = reduce(tapped, { type: "level", level: "guess", t: T });
  assert.equal(back.pending.confidence, null);                    // the answer again, unsure
});

test("a homework's tap is a draft until sent; a saved receipt fetches its step again", () => {
  const hw = { mode: "homework", version: 1, phase: "open", closes_at: T + 86400 };
  let s = reduce(initialState({ code: "HJK23M" }, null), { type: "frame", room: hw, me: null, now: T, hash: "#4", t: T });
  assert.deepEqual(s.want, { n: "4", seq: 1 });                    // the step the link named
  s = reduce(s, { type: "step", data: { now: T, room: room({ step: 4 }), me: { mine: null } }, t: T });
  s = reduce(s, { type: "tap", value: 1, t: T });
  assert.deepEqual(s.draft, { step: 4, value: 1 });
  assert.equal(s.pending, null);
  assert.equal(shown(s), 1);
  s = reduce(s, { type: "tap", value: 1, commit: true, t: T });
  assert.equal(s.pending.value, 1);
  s = reduce(s, { type: "sent", pending: s.pending, receipt: { state: "saved", value: 1 }, status: 200, t: T });
  assert.deepEqual(s.want, { n: 4, seq: 2 });
});

test("a refused join (401) on an answer makes the phone join again", () => {
  const a = reduce(joinedIn(), { type: "tap", value: 1, t: T });
  const b = reduce(a, { type: "sent", pending: a.pending, receipt: { state: "refused", why: "not joined" }, status: 401, t: T });
  assert.equal(b.joined, false);
  assert.equal(b.receipt, null);
});

test("a typed number out of range is refused with its range; in range it is sent", () => {
  const s = joinedIn({ ask: { control: "number", low: 0, high: 1, decimals: 2 } });
  const bad = reduce(s, { type: "typed", text: "7", t: T });
  assert.equal(bad.receipt.state, "refused");
  assert.equal(bad.receipt.why, say("number.range", { low: 0, high: 1 }));
  assert.equal(reduce(s, { type: "typed", text: "0,456", t: T }).pending.value, 0.46);
});

test("links: a tap adds one and offers the next target; tapped again takes it back", () => {
  const ask = { control: "links", rows: ["le", "chat", "dort"], choices: ["the", "cat", "sleeps"] };
  const one = tapLink(ask, null, 0, 0, 0);
  assert.deepEqual(one, { value: [[0, 0]], target: 1 });
  assert.deepEqual(tapLink(ask, one.value, 1, 0, 0).value, null);
  assert.deepEqual(canonical(ask, [[2, 1], [0, 0], [2, 1]]), [[0, 0], [2, 1]]);
  assert.equal(words(ask, [[0, 0]]), say("links", { n: 1 }));
  const grid = { control: "grid", rows: ["head 1", "head 2"], choices: ["a", "b"], labels: ["A", "B"] };
  assert.deepEqual(tapPart(grid, null, 1, "b"), [null, "b"]);
  assert.equal(tapPart(grid, [null, "b"], 1, "b"), null);
});

test("an unknown action is a TypeError naming the known ones", () => {
  assert.throws(() => reduce(joinedIn(), { type: "nope", t: T }), /one of clock, frame.*received nope/);
});

test("every message id the modules say is in the English catalog, and every entry is used", async () => {
  const { readFileSync, readdirSync } = await import("node:fs");
  const dir = new URL("../../xattn/server/assets/phone/", import.meta.url);
  const code = readdirSync(dir).filter((f) => f !== "strings.js")
    .map((f) => readFileSync(new URL(f, dir), "utf8")).join("\n");
  const po = readFileSync(new URL("../../xattn/locale/en/LC_MESSAGES/phone.po", import.meta.url), "utf8");
  const ids = [...po.matchAll(/^msgid "([\w.]+)"$/gm)].map((m) => m[1]);
  const html = readFileSync(new URL("../phone.html", dir), "utf8");
  const said = new Set([...code.matchAll(/say\("([\w.]+)"[,)]/g)].map((m) => m[1])
    .concat([...html.matchAll(/\{\{(html\.[\w.]+)\}\}/g)].map((m) => m[1])));
  for (const id of said) assert.ok(ids.includes(id), id);
  const built = ["mode.class", "mode.homework", "chart.darker", "chart.brighter", "until.timer", "until.reveal"]
    .concat(ids.filter((k) => k.startsWith("chip.")))
    .concat(ids.filter((k) => k.startsWith("why.")));    // the server's (tests/test_languages.py)
  for (const id of ids) assert.ok(said.has(id) || built.includes(id), "unused: " + id);
  assert.equal(say("where", { mode: "class", code: "X", step: 1, n: 2 }), "where");   // no catalog: the id
  assert.equal(Object.keys(STRINGS).length, 0);
});

test("a server's sentence is said from the catalog once it is there, in English until then", () => {
  assert.equal(told("plain words"), "plain words");
  assert.equal(told(null), null);
  WANTED.words = false;
  const refused = { why: "step 2 is revealed: answers are closed.", say: ["why.revealed", { step: 2 }] };
  assert.equal(told(refused), refused.why);             // not fetched yet: the English
  assert.equal(WANTED.words, true);                     // ... and main.js asks for them
  STRINGS["why.revealed"] = "L'étape {step} est révélée.";
  try {
    assert.equal(told(refused), "L'étape 2 est révélée.");
    assert.equal(told({ why: "old server", say: undefined }), "old server");   // no id: its English
  } finally {
    delete STRINGS["why.revealed"];
  }
});
