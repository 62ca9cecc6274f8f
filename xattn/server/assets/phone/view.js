// The page drawn from the state (state.js): what changed is drawn again, each part by its
// key; the controls are drawn again by theirs, with the focus kept on the same button.
// `act`: the page's actions (phone.js), each one dispatch to the reducer.
import { LANG, num, say, told } from "./strings.js";
import { $, el, keepTokens } from "./dom.js";
import { drawControl, said, same, sendsItself, words } from "./controls.js";
import { late } from "./late.js";
import { closed, levelOf, serverNow, shown } from "./state.js";

const memo = { drawn: null, control: null, verdict: null, chartWidth: 0, seen: new WeakMap() };

export function draw(s, act, t) {
  const r = s.room;
  status(s);
  if (s.gone !== null) return gone(s);
  if (!r) return;
  $("where").textContent = say("where", { mode: say(s.hw ? "mode.homework" : "mode.class"), code: r.code,
    step: r.step, n: r.n_steps }) + (r.round > 1 ? say("where.round", { round: r.round }) : "");
  nav(s, r, act, t);
  textsLanguage(r);
  document.title = say("title", { step: r.step, title: r.title });
  const key = [r.code, r.version, r.phase, r.step, r.round].join("|");
  const fresh = key !== memo.drawn;
  if (fresh) {
    $("title").textContent = r.step + ". " + r.title;
    $("question").innerHTML = r.question;
    keepTokens($("question"));
    $("note").innerHTML = r.note || "";           // a follow-up's new case, a missing word
    $("note").hidden = !r.note;
    $("about-text").innerHTML = r.about;
    $("about").hidden = !r.about;
    $("about").open = r.phase === "revealed" && !r.ask;
    $("reads").hidden = !r.reads;
    if (s.hw) $("reads").textContent = say("reads.homework");
    $("more").hidden = !!s.hw && r.phase !== "revealed";    // a homework's step: once answered
    $("explore").href = "?room=" + encodeURIComponent(r.code) + "&explore=1" + (s.hw ? "&lesson=" + r.step : "");
  }
  const open = s.open;
  if (r.ask) controls(s, r.ask, open, act);
  $("ask").hidden = !r.ask || r.phase === "locked";
  const send = $("hw-send"), draft = s.draft && s.draft.step === r.step ? s.draft.value : null;
  send.hidden = !s.hw || r.phase !== "asking" || !r.ask || sendsItself(r.ask);
  send.disabled = !open || draft === null || !!(s.pending && s.pending.step === r.step);
  const past = $("earlier"), earlier = r.phase !== "revealed" && r.earlier;
  past.hidden = !earlier;                 // a revote: how the class answered the round before
  if (!earlier) { past.textContent = ""; past.dataset.key = ""; }
  else if (past.dataset.key !== key && late("charts")) {   // (drawn again once they come)
    const c = late("charts");
    past.textContent = "";
    past.append(c.chart(r.earlier.chart, past.clientWidth || Math.min(innerWidth, 748) - 31));
    past.querySelectorAll("svg").forEach(c.fit);
    past.dataset.key = key;
  }
  receipt(s, t);
  $("wait").textContent = s.hw ? (r.phase === "asking" ? "" : r.line || "")
    : r.phase === "revealed" ? "" : closed(s, t) || r.phase === "closed" ? say("wait.closed") : say("wait.reveal");
  if (fresh || memo.verdict !== JSON.stringify(s.me)) reveal(s);
  revisit(s, act);
  memo.drawn = key;
  // a table wider than the phone scrolls sideways (phone.css): by keyboard too (axe: scrollable-region-focusable)
  document.querySelectorAll("main table:not([tabindex])").forEach((tb) => { tb.tabIndex = 0; });
  timer(s, t);
}

function status(s) {
  const text = told(s.status) || (s.problem ? say("store.out") : null), box = $("status");
  box.hidden = !text;
  box.textContent = text || "";
}

function gone(s) {
  $("main").hidden = true;
  $("join").hidden = false;
  const g = s.gone;                 // a room gone (the server's words), or the phone's own
  $("join-why").textContent = typeof g === "string" ? g : g.alone ? told(g) : say("gone", { why: told(g) });
}

// The controls, drawn again when what they show changed (by key), the focus kept on the
// button of the same key (a tap never sends a keyboard's or a screen reader's focus away).
function controls(s, ask, open, act) {
  const r = s.room, value = shown(s), lvl = ask.levels ? levelOf(s) : null;
  const key = JSON.stringify([r.step, r.round, r.version, open, value, lvl, s.target, !!s.hw]);
  if (key === memo.control) return;
  memo.control = key;
  const box = $("controls"), ask_ = $("ask"), focused = document.activeElement;
  const had = focused && ask_.contains(focused) ? focused.dataset.key : null;
  box.textContent = "";
  $("prompt").innerHTML = ask.prompt;
  keepTokens($("prompt"));
  sure(ask, open, lvl, act);
  drawControl(box, ask, value, open, s.target, act);
  if (had) {
    const again = ask_.querySelector('[data-key="' + had + '"]');
    if (again && !again.disabled) again.focus();
  }
}

function sure(ask, open, now, act) {
  const box = $("sure");
  box.textContent = "";
  box.hidden = !ask.levels;
  if (!ask.levels) return;
  const group = el("div", { class: "group", role: "group", "aria-labelledby": "sure-label" });
  ask.levels.forEach((l) => group.append(el("button", { type: "button", class: "pill", "data-key": "sure-" + l[0],
    "aria-pressed": String(now === l[0]), disabled: !open, onclick: () => act.level(l[0]), text: l[1] })));
  box.append(el("div", { class: "part-name", id: "sure-label", text: say("sure.label") }), group);
}

const MARKS = { right: " ✓", wrong: " ✗", answered: " •", held: " •" };
function nav(s, r, act, t) {
  const box = $("steps");
  box.hidden = !s.hw;
  if (!s.hw) return;
  $("at").textContent = say("step.at", { step: r.step, n: r.n_steps });
  $("prev").disabled = r.step <= 1;
  $("next").disabled = r.step >= r.n_steps;
  const chips = $("chips"), key = JSON.stringify([r.steps, r.step]);
  if (chips.dataset.key !== key) {
    const had = chips.contains(document.activeElement) ? document.activeElement.dataset.key : null;
    chips.textContent = "";
    r.steps.forEach((st, i) => chips.append(el("button", { type: "button", class: "pill chip " + st,
      "aria-current": i + 1 === r.step ? "step" : null, "data-key": "chip-" + i,
      "aria-label": say("step.chip", { n: i + 1, said: say("chip." + st) }),
      onclick: () => act.go(i + 1), text: (i + 1) + (MARKS[st] || "") })));
    chips.dataset.key = key;
    if (had) { const again = chips.querySelector('[data-key="' + had + '"]'); if (again) again.focus(); }
  }
  const when = new Date(s.hw.closes_at * 1000).toLocaleString(LANG, { weekday: "short", day: "numeric",
    month: "short", hour: "2-digit", minute: "2-digit" });
  const left = s.hw.closes_at - serverNow(s, t), d = Math.floor(left / 86400), h = Math.floor(left % 86400 / 3600);
  $("hw").textContent = left > 0 ? say("hw.open", { when: when, left: d ? say("left.days", { d: d, h: h })
    : h ? say("left.hours", { h: h }) : say("left.minutes", { m: Math.ceil(left / 60) }) })
    : say("hw.closed", { when: when });
}

function receipt(s, t) {
  const box = $("receipt"), r = s.room, ask = r.ask;
  const say_ = (cls, text) => { box.className = cls ? "receipt " + cls : ""; box.textContent = text; };
  say_("", "");
  const round = (n) => (n > 1 ? say("round", { round: n }) : "");
  if (s.lost && !s.pending) {       // a tap of an earlier question that never reached the class
    return say_("refused", say("receipt.lost", { step: s.lost.step, round: round(s.lost.round) }));
  }
  const old = s.receipt;          // a tap refused for a step the class has left (its retry
  if (!s.pending && old && old.state === "refused"           // beat the room's new frame)
      && (old.step !== r.step || old.round !== r.round)
      && !(memo.seen.has(old) && t - memo.seen.get(old) > 5)) {   // read for 5 s on its step
    return say_("refused", say("receipt.left", { step: old.step, round: round(old.round), why: told(old) }));
  }
  if (!ask) return;
  const open = s.open;
  const until = say(r.timer ? "until.timer" : "until.reveal");
  const rc = s.receipt && s.receipt.step === r.step && s.receipt.round === r.round ? s.receipt : null;
  if (s.pending && (!s.hw || s.pending.step === r.step)) {
    const w = said(ask, s.pending.value, s.pending.confidence);
    if (s.net === "offline" || !s.connected) return say_("retrying", say("receipt.offline", { said: w }));
    if (!s.joined) return say_("sending", say("receipt.joining", { said: w }));
    if (rc && rc.state === "retrying" && same(rc.value, s.pending.value))
      return say_("retrying", say("receipt.retrying", { why: told(rc), said: w }));
    return say_("sending", say("receipt.sending", { said: w }));
  }
  if (rc && rc.state === "refused") {
    if (!memo.seen.has(rc)) memo.seen.set(rc, t);
    const had = s.me && s.me.mine !== null && s.me.mine !== undefined && !same(s.me.mine, rc.value)
      ? say("receipt.had", { said: words(ask, s.me.mine) }) : "";
    return say_("refused", say("receipt.refused", { why: told(rc), said: words(ask, rc.value), had: had }));
  }
  const mine = s.me && s.me.mine !== null && s.me.mine !== undefined ? s.me.mine : null;
  if (mine !== null) return say_("saved", say("receipt.saved", { said: said(ask, mine, s.me.level),
    change: open && !s.hw ? say("receipt.change", { until: until }) : "" }));
  if (s.hw && open) {
    const d = shown(s);
    return say_("hint", d !== null ? say("hint.draft", { said: said(ask, d, levelOf(s)) }) : say("hint.homework"));
  }
  if (open) return say_("hint", say("hint.live"));
}

function reveal(s) {
  const r = s.room, sec = $("reveal");
  memo.verdict = JSON.stringify(s.me);
  if (r.phase !== "revealed" || !r.answer) { sec.hidden = true; return; }
  sec.hidden = false;
  $("verdict").innerHTML = (r.ask && s.me && s.me.verdict) || "";
  remember(s);
  $("versus").innerHTML = r.answer.versus || "";
  $("answer").innerHTML = r.answer.text;
  keepTokens($("answer"));
  keepTokens($("verdict"));
  const charts = $("charts");
  const key = [r.code, r.version, r.step, r.round].join("|");
  const c = late("charts");                          // (null until fetched: `lateCame`)
  if (charts.dataset.key !== key && c) {
    charts.textContent = "";
    const room = charts.clientWidth || Math.min(innerWidth, 748) - 31;   // CSS px for a chart
    r.answer.charts.forEach((spec) => charts.append(c.chart(spec, room)));
    charts.querySelectorAll("svg").forEach(c.fit);   // measured once on the screen
    charts.dataset.key = key;
    memo.chartWidth = innerWidth;
  }
}

// A phone turned: its charts laid out for the new width.
// The lesson lacks this page's language: its words come in its own (the message's `lang`),
// said once in one line above the step, never inside a step's text.
function textsLanguage(r) {
  const line = $("texts-lang");
  if (!r.lang || r.lang === LANG.split("-")[0] || !line.hidden) return;
  let name = r.lang;
  try { name = new Intl.DisplayNames([LANG], { type: "language" }).of(r.lang) || r.lang; } catch (e) { /* a name in code */ }
  line.textContent = say("lesson.language", { language: name });
  line.hidden = false;
}

// A late module came (late.js): the parts that wait for it drawn again.
export function lateCame(s, act, t) {
  memo.verdict = null;                    // the reveal, charts included
  draw(s, act, t);
}

export function resized(s) {
  if (s.room && memo.chartWidth && Math.abs(innerWidth - memo.chartWidth) > 40) {
    $("charts").dataset.key = "";
    reveal(s);
  }
}

// --- steps to revisit: this phone's own answers, kept on the phone (nothing is sent) ---------
// Each revealed step's surprise (the server's measure of how far this phone's own answer
// is from the computed one: xattn.lesson.misconceptions.surprise) with its verdict; at the
// last step of a live class and in a homework, the three furthest are listed.
const skey = (s) => "xattn-surprise-" + s.code;
function surprises(s) {
  try { return JSON.parse(localStorage.getItem(skey(s))) || {}; } catch (err) { return {}; }
}
function remember(s) {
  const r = s.room;
  if (!r || r.phase !== "revealed" || !r.ask || !s.me || typeof s.me.surprise !== "number") return;
  const all = surprises(s);
  all[r.step] = { score: s.me.surprise, title: r.title, why: $("verdict").textContent };
  try { localStorage.setItem(skey(s), JSON.stringify(all)); } catch (err) { /* full: not kept */ }
}
function revisit(s, act) {
  const r = s.room, box = $("revisit"), list = $("revisit-list");
  const top = Object.entries(surprises(s)).filter((e) => e[1].score > 0)
    .sort((a, b) => b[1].score - a[1].score || a[0] - b[0]).slice(0, 3);
  box.hidden = !r || !(s.hw || r.step === r.n_steps) || !top.length;
  const key = JSON.stringify(top) + !!s.hw;
  if (box.hidden || list.dataset.key === key) return;
  list.dataset.key = key;
  list.textContent = "";
  top.forEach(([n, v]) => list.append(el("li", { "data-step": n },
    s.hw ? el("button", { type: "button", class: "pill", onclick: () => act.go(Number(n)), text: say("revisit.step", { n: n, title: v.title }) })
      : el("strong", { text: say("revisit.step", { n: n, title: v.title }) }),
    el("div", { class: "muted", text: v.why }))));
}

export function timer(s, t) {
  const r = s.room, tm = r && r.timer, box = $("timer");
  if (!tm || r.phase !== "asking") { box.hidden = true; return; }
  const left = Math.max(0, Math.ceil(tm.ends_at - serverNow(s, t)));
  box.hidden = false;
  box.textContent = left > 0 ? say("timer.left", { m: Math.floor(left / 60), s: num(left % 60, 2) }) : say("timer.up");
}
