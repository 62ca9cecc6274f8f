// The phone's one state, and the pure reducer of everything that moves it: the room's frames,
// receipts, taps and timers, the stream, the outbox. `reduce(state, action)` returns a new
// state (or the same one) and touches nothing else: no DOM, no storage, no clock (an action
// carries `t`, this phone's clock in seconds). phone.js does the effects that follow from it.
import { say } from "./strings.js";
import { canonical, same, tapLink, tapPart, typedNumber } from "./controls.js";

// room: the step as the class sees it (a homework: this phone's own step); me: this phone's
// answer and verdict; pending: the tap not saved yet (the outbox, kept in localStorage);
// receipt: what became of the last one sent; lost: a tap the class moved away from; held: a
// "how sure" tapped before an answer; draft: a homework's answer not sent yet; hw: the
// homework's own frame; at: its step shown; want: a homework step to fetch ({n, seq});
// inflight/lastSend/net: the outbox's send; connected/problem/status: the stream; gone: why
// this phone is out of the class (status, gone: the phone's own words, or the server's
// message {why, say}: strings.js's `told`); open: whether the question takes answers now.
export function initialState(join, stored) {
  const valid = stored && typeof stored === "object" && Number.isInteger(stored.step)
    && Number.isInteger(stored.round) && "value" in stored;
  return {
    code: (join && join.code) || null, joined: !(join && join.challenge), offset: 0,
    room: null, me: null, pending: valid ? stored : null, receipt: null, lost: null,
    held: null, draft: null, hw: null, at: null, lastRc: null, want: null, target: 0,
    inflight: false, lastSend: 0, net: null, connected: false, problem: null,
    status: null, gone: null, open: false,
  };
}

// --- what the state says ---------------------------------------------------------------------
export const serverNow = (s, t) => t + s.offset;

export function closed(s, t) {
  const tm = s.room && s.room.timer;
  return (!!tm && serverNow(s, t) >= tm.ends_at) || (!!s.hw && serverNow(s, t) >= s.hw.closes_at);
}

export function isOpen(s, t) {
  return !!s.room && s.room.phase === "asking" && !closed(s, t);
}

// The answer the controls show: the tap on its way, the saved one, a homework's draft.
export function shown(s) {
  const r = s.room;
  if (s.pending && (!s.hw || s.pending.step === r.step)) return s.pending.value;
  if (s.me && s.me.mine !== null && s.me.mine !== undefined) return s.me.mine;
  if (s.draft && s.draft.step === r.step) return s.draft.value;
  return null;
}

// How sure, where the room asks: the tap on its way's, one held for the answer to come, the saved.
export function levelOf(s) {
  const r = s.room;
  if (s.pending && s.pending.confidence !== undefined) return s.pending.confidence;
  if (s.held && r && s.held.step === r.step && s.held.round === r.round) return s.held.level;
  return (s.me && s.me.level) || null;
}

// Whether the outbox should send its tap now (`t`: seconds): not in flight, joined, and not
// sent in the last 4 s (the server's own outbox may be gone: sent again).
export function dueToSend(s, t) {
  return !!s.pending && !s.inflight && s.joined && !s.gone && (s.lastSend === 0 || t - s.lastSend > 4);
}

// --- the reducer -----------------------------------------------------------------------------
const HANDLERS = {
  clock: (s, a) => clock(s, a.now, a.t),
  frame: (s, a) => {                 // the room's frame (a homework: it opened, closed, moved)
    s = clock(s, a.now, a.t);
    if (a.room.mode === "homework") return homework(homeworkMe(s, a.me), a.room, a.hash);
    return live({ ...s, room: a.room }, a.me, a.t);
  },
  me: (s, a) => {                    // this phone's own answer and receipt
    s = clock(s, a.now, a.t);
    return s.hw ? homeworkMe(s, a.me) : live(s, a.me, a.t);
  },
  step: (s, a) => {                  // a homework's step fetched
    const f = a.data;
    s = clock(s, f.now, a.t);
    const draft = !s.room || s.room.step !== f.room.step ? null : s.draft;
    return { ...s, draft: draft, room: f.room, me: f.me, at: f.room.step };
  },
  go: (s, a) => (s.room && a.n >= 1 && a.n <= s.room.n_steps
    ? want({ ...s, at: a.n, draft: null }, a.n) : s),
  tap: (s, a) => tap(s, a.value, a.commit, a.t),
  typed: (s, a) => {                 // a number typed and sent
    const r = s.room, got = typedNumber(r.ask, a.text);
    if (got.why) return { ...s, receipt: { state: "refused", step: r.step, round: r.round, value: a.text, why: got.why } };
    return tap(s, got.value, true, a.t);
  },
  part: (s, a) => tapped(s, tapPart(s.room.ask, shown(s), a.k, a.c), a.t),
  link: (s, a) => {
    const got = tapLink(s.room.ask, shown(s), s.target, a.target, a.source);
    return tapped({ ...s, target: got.target }, got.value, a.t);
  },
  target: (s, a) => ({ ...s, target: a.i }),
  level: (s, a) => {                 // how sure: tapped again, taken back
    const r = s.room;
    if (!r || !r.ask || !isOpen(s, a.t)) return s;
    s = { ...s, held: { step: r.step, round: r.round, level: levelOf(s) === a.level ? null : a.level } };
    const value = shown(s);
    return value !== null ? tap(s, value, false, a.t) : s;
  },
  sending: (s, a) => ({ ...s, inflight: true, lastSend: a.t }),
  sent: (s, a) => sent({ ...s, inflight: false, net: null }, a.pending, a.receipt, a.status),
  offline: (s) => ({ ...s, inflight: false, net: "offline" }),
  resend: (s) => ({ ...s, lastSend: 0 }),
  stream: (s, a) => ({ ...s, connected: a.connected }),
  problem: (s, a) => ({ ...s, problem: a.problem || null }),
  status: (s, a) => ({ ...s, status: a.text || null }),
  joined: (s) => ({ ...s, joined: true, status: null }),
  gone: (s, a) => ({ ...s, gone: a.why, pending: null }),
  tick: (s, a) => (isOpen(s, a.t) === s.open ? s : { ...s, open: isOpen(s, a.t) }),
};

export function reduce(s, a) {
  const handler = HANDLERS[a.type];
  if (!handler) throw new TypeError("an action is one of " + Object.keys(HANDLERS).join(", ") + "; received " + a.type);
  const next = handler(s, a);
  const open = "t" in a ? isOpen(next, a.t) : next.open;
  return open === next.open ? next : { ...next, open: open };
}

function clock(s, now, t) {
  return typeof now === "number" ? { ...s, offset: now - t } : s;
}

function want(s, n) {
  return { ...s, want: { n: n, seq: s.want ? s.want.seq + 1 : 1 } };
}

// A live class: this phone's answer as the class has it settles the tap on its way.
function live(s, m, t) {
  s = { ...s, me: m || { mine: null } };
  if (m && m.receipt) s.receipt = m.receipt;
  const r = s.room, p = s.pending;
  if (!p || !r) return s;
  if (p.step !== r.step || p.round !== r.round) return { ...s, lost: p, pending: null };  // moved on
  const me = s.me;
  if (me.mine !== null && same(me.mine, p.value) && (p.confidence === undefined
      || !("level" in me) || (me.level || null) === p.confidence)) {
    return { ...s, pending: null, receipt: { step: p.step, round: p.round, value: p.value,
      confidence: p.confidence, state: "saved" } };
  }
  if (r.phase !== "asking" || closed(s, t)) {
    return { ...s, pending: null, receipt: { step: p.step, round: p.round, value: p.value,
      state: "refused", why: say("closed.before") } };
  }
  if (r.ask && s.receipt && s.receipt.state === "refused" && same(s.receipt.value, p.value)) return { ...s, pending: null };
  return s;
}

// A homework's frame: fetch this phone's step again where the homework opened, closed or moved.
function homework(s, room, hash) {
  const fresh = !s.hw || s.hw.version !== room.version || s.hw.phase !== room.phase;
  s = { ...s, hw: room };
  return fresh || !s.room ? want(s, s.at || (/^#\d+$/.test(hash || "") ? hash.slice(1) : "next")) : s;
}

// A homework's receipt, of whichever step: a saved one shows its step's answer (fetched again).
function homeworkMe(s, m) {
  const rc = m && m.receipt, p = s.pending;
  if (!rc || JSON.stringify(rc) === s.lastRc) return s;
  s = { ...s, lastRc: JSON.stringify(rc), receipt: rc };
  if (p && rc.step === p.step && same(rc.value, p.value) && (rc.state === "saved" || rc.state === "refused")) s.pending = null;
  return rc.state === "saved" && s.room ? want(s, s.room.step) : s;
}

// A tap: a homework's makes a draft (its Send commits it); a live class's goes to the outbox.
function tap(s, value, commit, t) {
  const r = s.room;
  if (!r || !r.ask || !isOpen(s, t)) return s;
  value = canonical(r.ask, value);
  if (s.hw && !commit) return { ...s, draft: value === null ? null : { step: r.step, value: value } };
  if (value === null) return s;
  const pending = { step: r.step, round: r.round, value: value };
  if (r.ask.levels) pending.confidence = levelOf({ ...s, pending: null });    // sent with it
  return { ...s, draft: null, lost: null, pending: pending, held: null, receipt: null, net: null, lastSend: 0 };
}

// A part or a link tapped: the answer so far; none left is no answer in a live class.
function tapped(s, value, t) {
  return value !== null || s.hw ? tap(s, value, false, t) : s;
}

// The store's receipt for `p` (the tap sent): a newer tap meanwhile wins and is sent next.
function sent(s, p, receipt, status) {
  if (s.pending !== p) return s;
  s = { ...s, receipt: { step: p.step, round: p.round, value: p.value, confidence: p.confidence, ...receipt } };
  const r = s.room;
  if (receipt.state === "saved" && r && r.step === p.step && r.round === p.round) {
    s.me = { ...s.me, mine: receipt.value, ...(p.confidence === undefined ? {} : { level: receipt.confidence || null }) };
  }
  if (receipt.state === "saved" || receipt.state === "refused") s.pending = null;
  if (status === 401) s = { ...s, joined: false, receipt: null };     // joins again (phone.js)
  if (s.hw && receipt.state === "saved") s = want({ ...s, lastRc: JSON.stringify(receipt) }, s.at);
  return s;
}
