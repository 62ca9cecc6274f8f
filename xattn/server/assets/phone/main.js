// xattn: a phone in a class. The room's moves arrive as server-sent events
// (live/CODE/events); a tap is POSTed (live/CODE/answer) and kept on the phone until the
// class store has it. In a homework the phone walks the steps itself: it asks for the step it
// shows (live/CODE/step/N), and a step's answer is shown once its own answer is saved. HTML
// comes only from the server's own rendering of the lesson (xattn/markup.py); every label,
// choice and token is set as text.
// This module holds the effects: the stream, the requests, storage, the clock. Every change
// of the state goes through `dispatch` (state.js's reducer), and the page is drawn from it.
import { LANG, STRINGS, WANTED, say } from "./strings.js";
import { $ } from "./dom.js";
import { dueToSend, initialState, reduce } from "./state.js";
import { draw, lateCame, resized, timer } from "./view.js";
import { late, onLate } from "./late.js";

const code = JOIN && JOIN.code;
const KEY = "xattn-pending-" + code;
const seconds = () => Date.now() / 1000;
const route = (what) => "live/" + encodeURIComponent(code) + "/" + what;
let stored = null;
try { stored = JSON.parse(localStorage.getItem(KEY)); } catch (err) { stored = null; }
let S = initialState(JOIN, stored);
let loaded = 0;                 // the homework step fetched last (state.want's seq)

const act = {
  tap: (value) => dispatch({ type: "tap", value: value }),
  typed: (text) => dispatch({ type: "typed", text: text }),
  part: (k, c) => dispatch({ type: "part", k: k, c: c }),
  link: (t, s) => dispatch({ type: "link", target: t, source: s }),
  target: (i) => dispatch({ type: "target", i: i }),
  level: (l) => dispatch({ type: "level", level: l }),
  go: (n) => dispatch({ type: "go", n: n }),
};

function dispatch(action) {
  const before = S;
  S = reduce(S, Object.assign({ t: seconds() }, action));
  if (S.pending && !before.pending) late("charts");   // answered: the reveal's charts, fetched
  if (S.pending !== before.pending) {          // the outbox kept on the phone
    if (S.pending) localStorage.setItem(KEY, JSON.stringify(S.pending));
    else localStorage.removeItem(KEY);
  }
  if (S.gone !== null && before.gone === null && es) es.close();
  if (S.want && S.want.seq !== loaded) { loaded = S.want.seq; load(S.want.n, loaded); }
  if (!S.joined && before.joined) join();
  if (dueToSend(S, seconds())) send();
  if (S !== before) { draw(S, act, seconds()); moreWords(); }
}

// The server's own sentences in this page's language (strings.js's `told`), asked for once
// one is to be shown (never in a first load: about 1.5 kB a page need not carry).
let asked = null;
function moreWords() {
  if (asked || !WANTED.words) return;
  asked = fetch("live/words/" + encodeURIComponent(LANG), { credentials: "same-origin" })
    .then((res) => (res.ok ? res.json() : Promise.reject(new Error(res.status))))
    .then((got) => { Object.assign(STRINGS, got.strings); draw(S, act, seconds()); })
    .catch(() => { setTimeout(() => { asked = null; }, 5000); });   // asked again later
}

onLate(() => lateCame(S, act, seconds()));

// --- the stream ----------------------------------------------------------------------------
let es = null, lost = null, drawnId = "";   // drawnId: the id of the room frame drawn last
function connect(had) {          // had: the room's frame this phone has (not sent again)
  es = new EventSource(route("events") + (had ? "?had=" + encodeURIComponent(had) : ""));
  es.onopen = () => {
    clearTimeout(lost);
    lost = null;
    dispatch({ type: "stream", connected: true });
    dispatch({ type: "status", text: null });
    dispatch({ type: "resend" });
  };
  es.onmessage = (e) => {
    const f = JSON.parse(e.data);
    drawnId = e.lastEventId;
    dispatch({ type: "frame", room: f.room, me: f.me, now: f.now, hash: location.hash });
    if (reopen) reopen();          // joined meanwhile: the stream again, with this frame's id
  };
  es.addEventListener("me", (e) => { const f = JSON.parse(e.data); dispatch({ type: "me", me: f.me, now: f.now }); });
  es.addEventListener("status", (e) => dispatch({ type: "problem", problem: JSON.parse(e.data).problem }));
  es.addEventListener("gone", (e) => { const f = JSON.parse(e.data); es.close(); dispatch({ type: "gone", why: { why: f.gone, say: f.say } }); });
  es.onerror = () => {
    dispatch({ type: "stream", connected: false });
    if (es.readyState === EventSource.CLOSED) {   // refused (503): the browser gives up; we do not
      setTimeout(() => { if (es.readyState === EventSource.CLOSED) connect(drawnId); }, 3000);
    }
    // (a retry fails every 1.5 s while offline: the 2 s wait is not started again each time)
    if (!lost) lost = setTimeout(() => { lost = null; if (!S.connected) dispatch({ type: "status", text: say("reconnecting") }); }, 2000);
  };
}

// --- a homework: this phone's own step (xattn/live/homework.py) -----------------------
async function load(n, seq) {
  try {
    const res = await fetch(route("step/" + n), { credentials: "same-origin" });
    const f = await res.json();
    if (loaded !== seq) return;                     // another step asked for meanwhile
    if (!res.ok) { dispatch(res.status === 404 ? { type: "gone", why: f } : { type: "status", text: f }); return; }
    dispatch({ type: "step", data: f });
    history.replaceState(null, "", "#" + S.at);
  } catch (err) {
    if (loaded === seq) setTimeout(() => { if (loaded === seq) load(n, seq); }, 3000);
  }
}

// --- joining: the work of work.js, then the room's cookie (xattn/server/join.py) ----------
// In a frame of another page the server sets its cookies Partitioned (over https) when told
// (xattn/server/cookies.py); over plain http no browser keeps them there: say so.
const FRAMED = (function () {
  if (window.top === window.self) return false;
  try { return window.top.location.origin !== window.location.origin; } catch (e) { return true; }
})();
if (FRAMED && location.protocol !== "https:") {
  const box = $("framed"), a = box.querySelector("a");
  a.href = location.href;
  a.textContent = location.href;
  box.hidden = false;
}
let joining = false;
function join(challenge) {
  if (joining) return;
  joining = true;
  const shown = setTimeout(() => { if (!S.joined) dispatch({ type: "status", text: say("joining.work") }); }, 1500);
  const headers = FRAMED ? { "Content-Type": "application/json", "X-Xattn-Framed": "1" } : { "Content-Type": "application/json" };
  XATTN_WORK.solve(challenge || JOIN.challenge, JOIN.bits, JOIN.pieces || 1, async (nonce) => {
    for (let wait = 1000; ; wait = Math.min(wait * 2, 8000)) {
      try {
        const res = await fetch(route("join"), { method: "POST", headers: headers, credentials: "same-origin",
          body: JSON.stringify({ challenge: challenge || JOIN.challenge, nonce: nonce }) });
        const out = await res.json();
        if (res.ok && out.joined) break;
        if (res.status === 403 && out.say && out.say[0] === "why.join.reload") { location.reload(); return; }
        if (res.status === 429 && out.retry) {        // the room's joins from this network
          dispatch({ type: "status", text: out });      // come one a second after a burst
          await new Promise((r) => setTimeout(r, out.retry * 1000 + Math.random() * 1000));
          continue;
        }
        if (res.status !== 503) { clearTimeout(shown); joining = false; dispatch({ type: "gone", why: out }); return; }
        dispatch({ type: "status", text: out });
      } catch (err) { dispatch({ type: "status", text: say("joining.network") }); }
      await new Promise((r) => setTimeout(r, wait));
    }
    clearTimeout(shown);
    joining = false;
    window.__xattnJoinedAt = performance.now();   // for measurements (benchmarks/phone_load.py)
    dispatch({ type: "joined" });
    dispatch({ type: "resend" });
    again();
  });
}

// The stream again, now as this student (receipts, presence), saying which room's frame it
// has (`had`: not sent again). A first frame still on its way on the stream before (a room
// the server is building) is waited for, 2 s at most, rather than downloaded twice.
let reopen = null;
function again() {
  const old = es;
  let wait = null;
  const go = () => {
    clearTimeout(wait);
    reopen = null;
    if (old) old.close();
    connect(drawnId);
  };
  if (old && old.readyState === EventSource.OPEN && !drawnId) {
    reopen = go;
    wait = setTimeout(go, 2000);
  } else go();
}

// --- the outbox: a tap not saved yet is sent, and again every 4 s until the store has it ----
async function send() {
  const p = S.pending;
  dispatch({ type: "sending" });
  try {
    const res = await fetch(route("answer"), {
      method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
      body: JSON.stringify({ step: p.step, round: p.round, value: p.value, confidence: p.confidence }) });
    const receipt = await res.json();
    dispatch({ type: "sent", pending: p, receipt: receipt, status: res.status });
  } catch (err) {
    dispatch({ type: "offline" });
  }
}
setInterval(() => {
  dispatch({ type: "tick" });
  timer(S, seconds());
}, 250);
addEventListener("resize", () => resized(S));

// --- start ---------------------------------------------------------------------------------
$("prev").addEventListener("click", () => act.go(S.at - 1));
$("next").addEventListener("click", () => act.go(S.at + 1));
$("hw-send").addEventListener("click", () => { if (S.draft) dispatch({ type: "tap", value: S.draft.value, commit: true }); });
$("join").addEventListener("submit", (e) => {
  e.preventDefault();
  const typed = $("code").value.replace(/[\s-]/g, "").toUpperCase();
  location.href = "?room=" + encodeURIComponent(typed);
});
if (!JOIN || !JOIN.code || (JOIN.problem && !JOIN.retry)) {
  dispatch({ type: "gone", why: JOIN && JOIN.problem ? { why: JOIN.problem, say: JOIN.say, alone: true } : say("type.code") });
  if (JOIN && JOIN.typed) $("code").value = JOIN.typed;
} else if (JOIN.problem) {
  dispatch({ type: "status", text: { why: JOIN.problem, say: JOIN.say } });
  setTimeout(() => location.reload(), 5000);
} else {
  connect();
  if (!S.joined) join(); else window.__xattnJoinedAt = performance.now();
}

// The language picker: this phone's language kept in a cookie the server reads; the page is
// fetched again in it (the tap on its way stays in localStorage meanwhile).
$("lang").addEventListener("change", (e) => {
  document.cookie = "xattn_lang=" + e.target.value + "; path=/; max-age=31536000; samesite=lax";
  location.reload();
});
