// xattn: a phone in a class. The room's moves arrive as server-sent events
// (live/CODE/events); a tap is POSTed (live/CODE/answer) and kept on the phone until the
// class store has it. In a homework the phone walks the steps itself: it asks for the step it
// shows (live/CODE/step/N), and a step's answer is shown once its own answer is saved. HTML comes only from the server's own rendering of the lesson
// (xattn/markup.py); every label, choice and token is set as text.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const code = JOIN && JOIN.code;
  const S = { room: null, me: null, offset: 0, pending: null, inflight: false, net: null,
    receipt: null, connected: false, drawn: null, links: [], target: 0, parts: [],
    lastSend: 0, joined: !(JOIN && JOIN.challenge) };
  const KEY = "xattn-pending-" + code;

  function el(tag, props, ...kids) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "text") n.textContent = v;
      else if (k === "html") n.innerHTML = v;          // trusted: the server's own rendering
      else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) n.setAttribute(k, v);
    }
    for (const kid of kids) if (kid) n.append(kid);
    return n;
  }
  const now = () => Date.now() / 1000 + S.offset;

  // --- answers: canonical forms, words -------------------------------------------------------
  function canonical(ask, v) {
    if (v === null || v === undefined) return null;
    if (ask.control === "number") return Number(Number(v).toFixed(ask.decimals)) + 0;
    if (ask.control === "links") {
      const seen = new Set();
      return v.map((l) => [l[0], l[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1])
        .filter((l) => { const k = l.join("-"); if (seen.has(k)) return false; seen.add(k); return true; });
    }
    return v;
  }
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  function words(ask, v) {
    if (v === null || v === undefined) return "none";
    if (ask.control === "tokens") return ask.choices[v] !== undefined ? ask.choices[v] : String(v);
    if (ask.control === "number") return Number(v).toFixed(ask.decimals);
    if (ask.control === "grid") {
      const said = ask.rows.map((r, i) => v[i] ? r + " " + ask.labels[ask.choices.indexOf(v[i])] : null)
        .filter(Boolean);
      return said.length ? said.join(", ") : "none";
    }
    if (ask.control === "links") return v.length + (v.length === 1 ? " link" : " links");
    return String(v);
  }

  // --- the stream ----------------------------------------------------------------------------
  let es = null, lost = null;
  function connect() {
    es = new EventSource("live/" + encodeURIComponent(code) + "/events");
    es.onopen = () => { S.connected = true; clearTimeout(lost); lost = null; status(null); resend(); };
    es.onmessage = (e) => frame(JSON.parse(e.data));
    es.addEventListener("me", (e) => { const f = JSON.parse(e.data); clock(f.now); if (S.hw) hwMe(f.me); else me(f.me); draw(); });
    es.addEventListener("status", (e) => {
      const f = JSON.parse(e.data);
      S.problem = f.problem;
      status(f.problem ? "The class store is not answering: your answers are kept and sent as soon as it is back." : null);
    });
    es.addEventListener("gone", (e) => { es.close(); gone(JSON.parse(e.data).gone); });
    es.onerror = () => {
      S.connected = false;
      if (es.readyState === EventSource.CLOSED) {   // refused (503): the browser gives up; we do not
        setTimeout(() => { if (es.readyState === EventSource.CLOSED) connect(); }, 3000);
      }
      // (a retry fails every 1.5 s while offline: the 2 s wait is not started again each time)
      if (!lost) lost = setTimeout(() => { lost = null; if (!S.connected) status("Reconnecting to the class… your answers are kept on this phone meanwhile."); }, 2000);
    };
  }
  function clock(t) { if (typeof t === "number") S.offset = t - Date.now() / 1000; }
  function status(text) { const s = $("status"); s.hidden = !text; s.textContent = text || ""; }
  function gone(why) {
    $("main").hidden = true;
    $("join").hidden = false;
    $("join-why").textContent = why + " Type the class code your teacher shows.";
    localStorage.removeItem(KEY);
  }

  function frame(f) {
    clock(f.now);
    if (f.room.mode === "homework") { hwMe(f.me); homework(f.room); return; }
    S.room = f.room;
    me(f.me);
    draw();
  }
  function me(m) {
    S.me = m || { mine: null };
    const r = S.room, ask = r && r.ask, p = S.pending;
    if (m && m.receipt) S.receipt = m.receipt;
    if (!p || !r) return;
    if (p.step !== r.step || p.round !== r.round) {      // the class moved on meanwhile
      S.lost = p;
      drop();
      return;
    }
    if (S.me.mine !== null && same(S.me.mine, p.value) && (p.confidence === undefined
        || !("level" in S.me) || (S.me.level || null) === p.confidence)) {
      S.receipt = { step: p.step, round: p.round, value: p.value, confidence: p.confidence, state: "saved" };
      drop();
    } else if (r.phase !== "asking" || closed()) {
      S.receipt = { step: p.step, round: p.round, value: p.value, state: "refused",
        why: "the question closed before your answer reached the class." };
      drop();
    } else if (ask && S.receipt && S.receipt.state === "refused" && same(S.receipt.value, p.value)) {
      drop();
    }
  }
  function drop() { S.pending = null; localStorage.removeItem(KEY); }
  function closed() {
    const t = S.room && S.room.timer;
    return (!!t && now() >= t.ends_at) || (!!S.hw && now() >= S.hw.closes_at);
  }

  // --- a homework: this phone's own step (xattn/live/homework.py) -----------------------
  function homework(room) {          // the room's frame: it opened, closed or moved its closing
    const fresh = !S.hw || S.hw.version !== room.version || S.hw.phase !== room.phase;
    S.hw = room;
    if (fresh || !S.room) load(S.at || (/^#\d+$/.test(location.hash) ? location.hash.slice(1) : "next"));
  }
  async function load(n) {
    S.loading = n;
    try {
      const res = await fetch("live/" + encodeURIComponent(code) + "/step/" + n, { credentials: "same-origin" });
      const f = await res.json();
      if (S.loading !== n) return;                     // another step asked for meanwhile
      if (!res.ok) { if (res.status === 404) gone(f.why); else status(f.why); return; }
      clock(f.now);
      if (!S.room || S.room.step !== f.room.step) S.draft = null;
      S.room = f.room;
      S.me = f.me;
      S.at = f.room.step;
      history.replaceState(null, "", "#" + S.at);
      S.control = null;
      draw();
    } catch (err) {
      if (S.loading === n) setTimeout(() => { if (S.loading === n) load(n); }, 3000);
    }
  }
  function go(n) { if (S.room && n >= 1 && n <= S.room.n_steps) { S.at = n; S.draft = null; load(n); } }
  function hwMe(m) {                 // a receipt, of whichever step
    const rc = m && m.receipt, p = S.pending;
    if (!rc || JSON.stringify(rc) === S.lastRc) return;
    S.lastRc = JSON.stringify(rc);
    S.receipt = rc;
    if (p && rc.step === p.step && same(rc.value, p.value) && (rc.state === "saved" || rc.state === "refused")) drop();
    if (rc.state === "saved" && S.room) load(S.room.step);
  }
  const MARKS = { right: " ✓", wrong: " ✗", answered: " •", held: " •" };
  const SAID = { right: "answered, right", wrong: "answered, not right", answered: "answered",
    held: "answered, its answer comes after the lesson", open: "not answered yet",
    read: "to read", locked: "after the check before the lesson" };
  function nav(r) {
    const box = $("steps");
    box.hidden = !S.hw;
    if (!S.hw) return;
    $("at").textContent = "Step " + r.step + " of " + r.n_steps;
    $("prev").disabled = r.step <= 1;
    $("next").disabled = r.step >= r.n_steps;
    const chips = $("chips");
    chips.textContent = "";
    r.steps.forEach((st, i) => chips.append(el("button", { type: "button", class: "pill chip " + st,
      "aria-current": i + 1 === r.step ? "step" : null, "aria-label": "Step " + (i + 1) + ": " + SAID[st],
      onclick: () => go(i + 1), text: (i + 1) + (MARKS[st] || "") })));
    const when = new Date(S.hw.closes_at * 1000).toLocaleString([], { weekday: "short", day: "numeric",
      month: "short", hour: "2-digit", minute: "2-digit" });
    const left = S.hw.closes_at - now(), d = Math.floor(left / 86400), h = Math.floor(left % 86400 / 3600);
    $("hw").textContent = left > 0 ? "Homework: open until " + when + " (" + (d ? d + " d " + h + " h"
      : h ? h + " h" : Math.ceil(left / 60) + " min") + " left). Each step's answer shows once you sent yours."
      : "This homework closed on " + when + ": every step's answer is shown.";
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
    const started = Date.now();
    const shown = setTimeout(() => { if (!S.joined) status("Joining the class… (this phone proves it is a browser: a second or two)"); }, 1500);
    XATTN_WORK.solve(challenge || JOIN.challenge, JOIN.bits, JOIN.pieces || 1, async (nonce) => {
      for (let wait = 1000; ; wait = Math.min(wait * 2, 8000)) {
        try {
          const res = await fetch("live/" + encodeURIComponent(code) + "/join", {
            method: "POST", headers: FRAMED ? { "Content-Type": "application/json", "X-Xattn-Framed": "1" } : { "Content-Type": "application/json" }, credentials: "same-origin",
            body: JSON.stringify({ challenge: challenge || JOIN.challenge, nonce: nonce }) });
          const out = await res.json();
          if (res.ok && out.joined) break;
          if (res.status === 403 && /reload/.test(out.why)) { location.reload(); return; }
          if (res.status === 429 && out.retry) {        // the room's joins from this network
            status(out.why);                             // come one a second after a burst
            await new Promise((r) => setTimeout(r, out.retry * 1000 + Math.random() * 1000));
            continue;
          }
          if (res.status !== 503) { clearTimeout(shown); joining = false; gone(out.why); return; }
          status(out.why);
        } catch (err) { status("Joining the class… waiting for the network."); }
        await new Promise((r) => setTimeout(r, wait));
      }
      clearTimeout(shown);
      joining = false;
      S.joined = true;
      S.joinMs = Date.now() - started;
      window.__xattnJoinedAt = performance.now();   // for measurements (benchmarks/phone_load.py)
      status(null);
      if (es) es.close();
      connect();                   // the stream again, now as this student: receipts, presence
      resend();
      draw();
    });
  }

  // --- sending a tap -------------------------------------------------------------------------
  function choose(value, commit) {   // a homework's taps make a draft; its Send commits it
    const r = S.room;
    if (!r || !r.ask || r.phase !== "asking" || closed()) return;
    value = canonical(r.ask, value);
    if (S.hw && !commit) {
      S.draft = value === null ? null : { step: r.step, value: value };
      S.control = null;
      draw();
      return;
    }
    if (value === null) return;
    S.draft = null;
    S.lost = null;
    S.pending = { step: r.step, round: r.round, value: value };
    if (r.ask.levels) S.pending.confidence = level();     // how sure, sent with it
    S.held = null;
    localStorage.setItem(KEY, JSON.stringify(S.pending));
    S.receipt = null;
    S.net = null;
    S.control = null;           // the controls redraw with the new choice pressed
    draw();
    send();
  }
  function resend() {
    if (S.pending) { S.lastSend = 0; send(); }
  }
  async function send() {
    const p = S.pending;
    if (!p || S.inflight || !S.joined) return;     // sent once the phone has joined
    S.inflight = true;
    S.lastSend = Date.now();
    try {
      const res = await fetch("live/" + encodeURIComponent(code) + "/answer", {
        method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
        body: JSON.stringify({ step: p.step, round: p.round, value: p.value, confidence: p.confidence }) });
      const receipt = await res.json();
      S.net = null;
      if (S.pending === p) {
        S.receipt = Object.assign({ step: p.step, round: p.round, value: p.value, confidence: p.confidence }, receipt);
        if (receipt.state === "saved" && S.room && S.room.step === p.step && S.room.round === p.round)
          S.me = Object.assign({}, S.me, { mine: receipt.value },    // the store has it now
            p.confidence === undefined ? {} : { level: receipt.confidence || null });
        if (receipt.state === "saved" || receipt.state === "refused") drop();
        if (res.status === 401) { S.joined = false; S.receipt = null; join(); }
        if (S.hw && receipt.state === "saved") { S.lastRc = JSON.stringify(receipt); load(S.at); }
      }
    } catch (err) {
      S.net = "offline";
    } finally {
      S.inflight = false;
      draw();
      if (S.pending && S.pending !== p) send();     // a newer tap came meanwhile: it wins
    }
  }
  setInterval(() => {       // a tap not saved yet is sent again (the server's outbox may be gone)
    if (S.pending && !S.inflight && Date.now() - S.lastSend > 4000) send();
    tick();
  }, 250);

  // --- drawing -------------------------------------------------------------------------------
  function draw() {
    const r = S.room;
    if (!r) return;
    $("where").textContent = "xattn · " + (S.hw ? "homework " : "class ") + r.code + " · step " + r.step + " of " + r.n_steps +
      (r.round > 1 ? " · round " + r.round : "");
    nav(r);
    document.title = r.step + ". " + r.title + " · xattn";
    const key = [r.code, r.version, r.phase, r.step, r.round].join("|");
    const fresh = key !== S.drawn;
    if (fresh) {
      $("title").textContent = r.step + ". " + r.title;
      $("question").innerHTML = r.question;
      $("note").innerHTML = r.note || "";           // a follow-up's new case, a missing word
      $("note").hidden = !r.note;
      $("about-text").innerHTML = r.about;
      $("about").hidden = !r.about;
      $("about").open = r.phase === "revealed" && !r.ask;
      $("reads").hidden = !r.reads;
      $("reads").textContent = S.hw ? "Nothing to predict on this step: read it, then go on." : $("reads").textContent;
      $("more").hidden = !!S.hw && r.phase !== "revealed";    // a homework's step: once answered
      $("explore").href = "?room=" + encodeURIComponent(r.code) + "&explore=1" + (S.hw ? "&lesson=" + r.step : "");
    }
    const open = r.phase === "asking" && !closed();
    const control = [r.step, r.round, r.version, open].join("|");
    if (r.ask && control !== S.control) {
      S.control = control;
      controls(r.ask, open);
    }
    $("ask").hidden = !r.ask || r.phase === "locked";
    const send = $("hw-send"), draft = S.draft && S.draft.step === r.step ? S.draft.value : null;
    send.hidden = !S.hw || r.phase !== "asking" || !r.ask || r.ask.control === "number";
    send.disabled = !open || draft === null || !!(S.pending && S.pending.step === r.step);
    const past = $("earlier"), earlier = r.phase !== "revealed" && r.earlier;
    past.hidden = !earlier;                 // a revote: how the class answered the round before
    if (!earlier) { past.textContent = ""; past.dataset.key = ""; }
    else if (past.dataset.key !== key) {
      past.textContent = "";
      past.append(chart(r.earlier.chart, past.clientWidth || Math.min(innerWidth, 748) - 31));
      past.querySelectorAll("svg").forEach(fit);
      past.dataset.key = key;
    }
    receipt();
    $("wait").textContent = S.hw ? (r.phase === "asking" ? "" : r.line || "")
      : r.phase === "revealed" ? "" : closed() || r.phase === "closed"
      ? "Time is up: answers are closed. Your teacher reveals the answer next."
      : "The answer appears here when your teacher reveals it.";
    if (fresh || S.verdictShown !== JSON.stringify(S.me)) reveal();
    revisit();
    S.drawn = key;
    // a table wider than the phone scrolls sideways (phone.css): by keyboard too (axe: scrollable-region-focusable)
    document.querySelectorAll("main table:not([tabindex])").forEach((t) => { t.tabIndex = 0; });
    tick();
  }

  function shown() {
    const r = S.room;
    if (S.pending && (!S.hw || S.pending.step === r.step)) return S.pending.value;
    if (S.me && S.me.mine !== null && S.me.mine !== undefined) return S.me.mine;
    if (S.draft && S.draft.step === r.step) return S.draft.value;
    return null;
  }

  // --- how sure (where the room asks): one tap under the answer, sent with it ----------------
  function level() {
    const r = S.room;
    if (S.pending && S.pending.confidence !== undefined) return S.pending.confidence;
    if (S.held && r && S.held.step === r.step && S.held.round === r.round) return S.held.level;
    return (S.me && S.me.level) || null;
  }
  function pick(lvl) {
    const r = S.room;
    if (!r || !r.ask || r.phase !== "asking" || closed()) return;
    S.held = { step: r.step, round: r.round, level: level() === lvl ? null : lvl };  // again: taken back
    const value = shown();
    if (value !== null) choose(value);            // the answer again, with how sure
    else { S.control = null; draw(); }            // kept for the answer to come
  }
  function sure(ask, open) {
    const box = $("sure"), now = level();
    box.textContent = "";
    box.hidden = !ask.levels;
    if (!ask.levels) return;
    const group = el("div", { class: "group", role: "group", "aria-labelledby": "sure-label" });
    ask.levels.forEach((l) => group.append(el("button", { type: "button", class: "pill",
      "aria-pressed": String(now === l[0]), disabled: !open, onclick: () => pick(l[0]), text: l[1] })));
    box.append(el("div", { class: "part-name", id: "sure-label", text: "How sure are you?" }), group);
  }
  function said(ask, v, lvl) {
    const l = lvl && ask.levels && ask.levels.find((x) => x[0] === lvl);
    return words(ask, v) + (l ? ", " + l[1] : "");
  }

  // Each drawing of xattn.classroom.controls.DRAWN (tests/test_classroom_kinds.py compares).
  const CONTROLS = {
    pills: (box, ask, value, open) => pills(box, ask, value, open, false),
    tokens: (box, ask, value, open) => pills(box, ask, value, open, true),
    number: (box, ask, value, open) => number(box, ask, value, open),
    grid: (box, ask, value, open) => parts(box, ask, value, open),
    links: (box, ask, value, open) => links(box, ask, value, open),
  };
  function controls(ask, open) {
    const box = $("controls");
    box.textContent = "";
    $("prompt").innerHTML = ask.prompt;
    sure(ask, open);
    const value = shown();
    const draw = Object.prototype.hasOwnProperty.call(CONTROLS, ask.control) && CONTROLS[ask.control];
    if (!draw) {            // a control this page does not know: said, never a silent blank
      box.append(el("p", { class: "receipt refused", role: "alert",
        text: "This page cannot show this question's control (" + ask.control + "): reload the page." }));
      return;
    }
    draw(box, ask, value, open);
  }
  function pills(box, ask, value, open, byPosition) {
    const group = el("div", { class: "group", role: "group", "aria-labelledby": "prompt" });
    ask.choices.forEach((c, i) => {
      const v = byPosition ? i : c;
      group.append(el("button", { type: "button", class: "pill", "aria-pressed": String(same(v, value)),
        disabled: !open, onclick: () => choose(v) }, el("code", { text: c })));
    });
    box.append(group);
  }
  function number(box, ask, value, open) {
    const input = el("input", { type: "number", inputmode: "decimal", min: ask.low, max: ask.high,
      step: Math.pow(10, -ask.decimals), id: "number", "aria-labelledby": "prompt",
      placeholder: "type a number", disabled: !open });
    if (value !== null) input.value = Number(value).toFixed(ask.decimals);
    const go = () => {
      const v = parseFloat(input.value.replace(",", "."));
      if (!isFinite(v) || v < ask.low || v > ask.high) {
        S.receipt = { state: "refused", step: S.room.step, round: S.room.round, value: input.value,
          why: "this step takes a number from " + ask.low + " to " + ask.high + "." };
        draw();
        return;
      }
      choose(v, true);
    };
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
    box.append(el("div", { class: "row" }, input,
      el("button", { type: "button", class: "primary", disabled: !open, onclick: go, text: "Send" })));
  }
  function parts(box, ask, value, open) {
    S.parts = Array.isArray(value) ? value.slice() : ask.rows.map(() => null);
    ask.rows.forEach((row, k) => {
      const name = el("div", { class: "part-name", id: "part-" + k, text: row });
      const group = el("div", { class: "group", role: "group", "aria-labelledby": "part-" + k });
      ask.choices.forEach((c, j) => {
        group.append(el("button", { type: "button", class: "pill", "aria-pressed": String(S.parts[k] === c),
          disabled: !open, text: ask.labels[j], title: c, onclick: () => {
            S.parts[k] = S.parts[k] === c ? null : c;
            tapped(S.parts.some((p) => p !== null) ? S.parts.slice() : null);
          } }));
      });
      box.append(el("div", { class: "part" }, name, group));
    });
  }
  function links(box, ask, value, open) {
    S.links = Array.isArray(value) ? value.map((l) => l.slice()) : [];
    const linked = new Set(S.links.map((l) => l[0]));
    if (S.target >= ask.rows.length) S.target = 0;
    const tgt = el("div", { class: "group", role: "group", "aria-label": "Target word" });
    ask.rows.forEach((w, i) => tgt.append(el("button", { type: "button", class: "pill",
      "aria-pressed": String(S.target === i), disabled: !open,
      onclick: () => { S.target = i; S.control = null; draw(); } },
      el("code", { text: w }), linked.has(i) ? " ✓" : "")));
    const src = el("div", { class: "group", role: "group", "aria-label": ask.rows[S.target] + " translates" });
    ask.choices.forEach((w, j) => {
      const on = S.links.some((l) => l[0] === S.target && l[1] === j);
      src.append(el("button", { type: "button", class: "pill", "aria-pressed": String(on), disabled: !open,
        onclick: () => toggle(ask, S.target, j) }, el("code", { text: w }), on ? " ✓" : ""));
    });
    box.append(el("div", { class: "part-name", text: "Tap a target word:" }), tgt,
      el("div", { class: "part-name" }, el("code", { text: ask.rows[S.target] }), " translates:"), src);
    if (S.links.length) {
      const list = el("div", { class: "group", role: "group", "aria-label": "Your links" });
      S.links.forEach((l) => list.append(el("button", { type: "button", class: "pill", disabled: !open,
        title: "Take this link back", onclick: () => toggle(ask, l[0], l[1]) },
        el("code", { text: ask.rows[l[0]] }), " → ", el("code", { text: ask.choices[l[1]] }), " ✕")));
      box.append(el("div", { class: "part-name", text: "Your " + S.links.length + " link" +
        (S.links.length === 1 ? "" : "s") + " (tap one to take it back):" }), list);
    }
  }
  function toggle(ask, t, s) {
    const at = S.links.findIndex((l) => l[0] === t && l[1] === s);
    if (at >= 0) S.links.splice(at, 1);
    else if (S.links.length < 32) {
      S.links.push([t, s]);
      const linked = new Set(S.links.map((l) => l[0]));
      for (let d = 1; d <= ask.rows.length; d++) {
        const next = (t + d) % ask.rows.length;
        if (!linked.has(next)) { S.target = next; break; }
      }
    }
    S.control = null;
    tapped(S.links.length ? S.links.slice() : null);
  }
  function tapped(value) {            // a part or link tapped: the answer so far, or none
    if (value !== null || S.hw) choose(value);
    else draw();
  }

  function receipt() {
    const box = $("receipt"), r = S.room, ask = r.ask;
    box.className = "";
    box.textContent = "";
    if (S.lost && !S.pending) {       // a tap of an earlier question that never reached the class
      box.className = "receipt refused";
      box.textContent = "Not confirmed: your answer to step " + S.lost.step + (S.lost.round > 1 ? " (round " + S.lost.round + ")" : "") +
        " was still on its way when the class moved on, so it may not have been counted.";
      return;
    }
    const old = S.receipt;          // a tap refused for a step the class has left (its retry
    if (!S.pending && old && old.state === "refused"           // beat the room's new frame)
        && (old.step !== r.step || old.round !== r.round)
        && !(old.seenAt && Date.now() - old.seenAt > 5000)) {   // read for 5 s on its step
      box.className = "receipt refused";
      box.textContent = "Not saved: your answer to step " + old.step + (old.round > 1 ? " (round " + old.round + ")" : "") +
        " did not reach the class: " + old.why;
      return;
    }
    if (!ask) return;
    const open = r.phase === "asking" && !closed();
    const until = r.timer ? "time is up or your teacher reveals the answer" : "your teacher reveals the answer";
    const rc = S.receipt && S.receipt.step === r.step && S.receipt.round === r.round ? S.receipt : null;
    const say = (cls, text) => { box.className = "receipt " + cls; box.textContent = text; };
    if (S.pending && (!S.hw || S.pending.step === r.step)) {
      const w = said(ask, S.pending.value, S.pending.confidence);
      if (S.net === "offline" || !S.connected)
        return say("retrying", "Not sent yet: this phone has no connection to the class. Your answer " + w + " is kept here and sent as soon as the connection is back: keep this page open.");
      if (!S.joined)
        return say("sending", "Joining the class… your answer " + w + " is kept here and sent as soon as this phone has joined.");
      if (rc && rc.state === "retrying" && same(rc.value, S.pending.value))
        return say("retrying", "Not saved yet: the class store does not answer (" + rc.why + "). Your answer " + w + " is kept and sent again every few seconds: keep this page open.");
      return say("sending", "Sending " + w + " to the class…");
    }
    if (rc && rc.state === "refused") {
      if (!rc.seenAt) rc.seenAt = Date.now();
      const had = S.me && S.me.mine !== null && !same(S.me.mine, rc.value) ? " The class has your earlier answer " + words(ask, S.me.mine) + "." : "";
      return say("refused", "Not saved: " + rc.why + " Your tap on " + words(ask, rc.value) + " did not reach the class." + had);
    }
    const mine = S.me && S.me.mine !== null && S.me.mine !== undefined ? S.me.mine : null;
    if (mine !== null) return say("saved", "Saved: " + said(ask, mine, S.me.level) + "." + (open && !S.hw ? " You can change it until " + until + "." : ""));
    if (S.hw && open) {
      const d = shown();
      return say("hint", d !== null ? "Your answer: " + said(ask, d, level()) + ". Send it to see this step's answer: it cannot change afterwards."
        : "Choose your answer, then send it: you see this step's answer at once, and it cannot change afterwards.");
    }
    if (open) return say("hint", "Tap your answer: it is saved for the class at once.");
  }

  function reveal() {
    const r = S.room, sec = $("reveal");
    S.verdictShown = JSON.stringify(S.me);
    if (r.phase !== "revealed" || !r.answer) { sec.hidden = true; return; }
    sec.hidden = false;
    $("verdict").innerHTML = (r.ask && S.me && S.me.verdict) || "";
    remember();
    $("versus").innerHTML = r.answer.versus || "";
    $("answer").innerHTML = r.answer.text;
    const charts = $("charts");
    const key = [r.code, r.version, r.step, r.round].join("|");
    if (charts.dataset.key !== key) {
      charts.textContent = "";
      const room = charts.clientWidth || Math.min(innerWidth, 748) - 31;   // CSS px for a chart
      r.answer.charts.forEach((c) => charts.append(chart(c, room)));
      charts.querySelectorAll("svg").forEach(fit);     // measured once on the screen
      charts.dataset.key = key;
      S.chartWidth = innerWidth;
    }
  }
  // --- steps to revisit: this phone's own answers, kept on the phone (nothing is sent) ---------
  // Each revealed step's surprise (the server's measure of how far this phone's own answer
  // is from the computed one: xattn.lesson.misconceptions.surprise) with its verdict; at the
  // last step of a live class and in a homework, the three furthest are listed.
  const SKEY = "xattn-surprise-" + code;
  function surprises() {
    try { return JSON.parse(localStorage.getItem(SKEY)) || {}; } catch (err) { return {}; }
  }
  function remember() {
    const r = S.room;
    if (!r || r.phase !== "revealed" || !r.ask || !S.me || typeof S.me.surprise !== "number") return;
    const all = surprises();
    all[r.step] = { score: S.me.surprise, title: r.title, why: $("verdict").textContent };
    try { localStorage.setItem(SKEY, JSON.stringify(all)); } catch (err) { /* full: not kept */ }
  }
  function revisit() {
    const r = S.room, box = $("revisit"), list = $("revisit-list");
    const top = Object.entries(surprises()).filter((e) => e[1].score > 0)
      .sort((a, b) => b[1].score - a[1].score || a[0] - b[0]).slice(0, 3);
    box.hidden = !r || !(S.hw || r.step === r.n_steps) || !top.length;
    const key = JSON.stringify(top) + !!S.hw;
    if (box.hidden || list.dataset.key === key) return;
    list.dataset.key = key;
    list.textContent = "";
    top.forEach(([n, v]) => list.append(el("li", { "data-step": n },
      S.hw ? el("button", { type: "button", class: "pill", onclick: () => go(Number(n)), text: "Step " + n + ". " + v.title })
        : el("strong", { text: "Step " + n + ". " + v.title }),
      el("div", { class: "muted", text: v.why }))));
  }

  addEventListener("resize", () => {     // a phone turned: its charts laid out for the new width
    if (S.room && S.chartWidth && Math.abs(innerWidth - S.chartWidth) > 40) {
      $("charts").dataset.key = "";
      reveal();
    }
  });

  function tick() {
    const r = S.room, t = r && r.timer, box = $("timer");
    if (S.hw && closed() && S.control && S.control.endsWith("true")) { S.control = null; draw(); }
    if (!t || r.phase !== "asking") { box.hidden = true; return; }
    const left = Math.max(0, Math.ceil(t.ends_at - now()));
    box.hidden = false;
    box.textContent = left > 0 ? Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0") + " left" : "time is up";
    if (left === 0 && S.control && S.control.endsWith("true")) { S.control = null; draw(); }
  }

  // --- charts as SVG -------------------------------------------------------------------------
  const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779",
    "#6ece58", "#b5de2b", "#fde725"];
  const SERIES = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"];
  function rgb(h) { return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)); }
  function colour(v, lo, hi, reverse) {
    let t = hi > lo ? (v - lo) / (hi - lo) : 0;
    t = Math.min(1, Math.max(0, reverse ? 1 - t : t)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(t)), f = t - i;
    const a = rgb(VIRIDIS[i]), b = rgb(VIRIDIS[i + 1]);
    return "rgb(" + a.map((x, k) => Math.round(x + (b[k] - x) * f)).join(",") + ")";
  }
  function light(v, lo, hi, reverse) {
    let t = hi > lo ? (v - lo) / (hi - lo) : 0;
    t = reverse ? 1 - t : t;
    return t > 0.62;
  }
  const NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    return n;
  }
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  function wrap(s, n) {             // a long name on two lines of at most n characters
    const at = s.length > n ? s.lastIndexOf(" ", n) : -1;
    return at > 0 ? [s.slice(0, at), cut(s.slice(at + 1), n)] : [cut(s, n)];
  }
  // Every panel is laid out for `room`, the CSS px the phone gives a chart (its labels' room
  // guessed from their characters); `fit` then widens its box to what was drawn, measured
  // (a font wider or larger than guessed), and CSS scales the box to the screen: nothing drawn
  // falls outside the box, where an SVG clips it.
  function fit(s) {
    const b = s.getBBox(), v = s.viewBox.baseVal;
    if (!b.width) return;                            // not on the screen: nothing measured
    const x = Math.min(v.x, Math.floor(b.x) - 1), y = Math.min(v.y, Math.floor(b.y) - 1);
    const w = Math.max(v.x + v.width, Math.ceil(b.x + b.width) + 1) - x;
    const h = Math.max(v.y + v.height, Math.ceil(b.y + b.height) + 1) - y;
    s.setAttribute("viewBox", [x, y, w, h].join(" "));
    s.setAttribute("width", w);
    s.setAttribute("height", h);
  }
  const fmt = (v, pct) => (v === null ? "–" : pct ? Math.round(v * 100) + "%" : String(v));

  function chart(spec, room) {
    const fig = el("figure", {}, el("figcaption", { text: spec.title }));
    const small = spec.panels.length > 2;            // small multiples, two or more a row
    const grid = el("div", { class: small ? "group" : "" });
    const each = small ? Math.floor((room - 8) / Math.max(2, Math.floor(room / 190))) : room;
    spec.panels.forEach((p) => {
      const drawn = p.kind === "heat" ? heat(p, small, each) : p.kind === "bars" ? bars(p, room) : lines(p, room);
      drawn.setAttribute("role", "img");
      drawn.setAttribute("aria-label", (p.name ? p.name + ": " : "") + spec.alt);
      grid.append(small ? el("div", {}, el("div", { class: "muted", text: p.name || "" }), drawn) : drawn);
    });
    fig.append(grid);
    const scale = spec.panels.find((p) => p.kind === "heat" && !p.text);
    if (scale) fig.append(colourbar(scale));
    const legend = spec.panels.find((p) => p.kind !== "heat" && p.series.length > 1);
    if (legend) fig.append(el("div", { class: "legend" }, ...legend.series.map((s, k) =>
      el("span", {}, el("span", { class: "swatch", style: "background:" + SERIES[k % SERIES.length] }), s.name || ("series " + (k + 1))))));
    fig.append(numbers(spec));
    return fig;
  }
  function colourbar(p) {
    const s = svg("svg", { viewBox: "0 0 240 30", width: 240, height: 30, "aria-hidden": "true" });
    for (let k = 0; k < 24; k++) {
      const v = p.zmin + (p.zmax - p.zmin) * (k + 0.5) / 24;
      s.append(svg("rect", { x: 30 + k * 7.5, y: 2, width: 7.6, height: 12, fill: colour(v, p.zmin, p.zmax, p.reverse) }));
    }
    s.append(svg("text", { x: 26, y: 12, "text-anchor": "end" }, fmt(p.zmin, false)));
    s.append(svg("text", { x: 214, y: 12 }, fmt(p.zmax, false)));
    s.append(svg("text", { x: 120, y: 27, "text-anchor": "middle" }, p.reverse ? "darker is higher" : "brighter is higher"));
    return s;
  }
  function heat(p, small, room) {
    const nr = p.z.length, nc = p.z[0].length;
    // a few rows (the class, the weights) may have long names: on two lines
    const names = p.y.map((t) => (nr <= 3 ? wrap(t, 18) : [cut(t, 14)]));
    const left = small ? 4 : Math.min(Math.round(room * 0.45), 14 + 6.6 * Math.max(...names.flat().map((t) => t.length)));
    const cell = small ? Math.max(6, Math.min(18, Math.floor((room - 8) / nc)))
      : Math.max(12, Math.min(40, Math.floor((room - left - 4) / nc)));
    const tall = small ? cell : Math.max(cell, 13 * Math.max(...names.map((l) => l.length)) + 4);
    const bottom = small ? 4 : Math.min(110, 16 + 6 * Math.max(...p.x.map((s) => cut(s, 14).length)));
    const w = left + nc * cell + 4, h = 6 + nr * tall + bottom;
    const s = svg("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h });
    p.z.forEach((row, i) => row.forEach((v, j) => {
      const x = left + j * cell, y = 6 + i * tall;
      s.append(svg("rect", { x: x, y: y, width: cell - 1, height: tall - 1,
        fill: v === null ? "#ddd" : colour(v, p.zmin, p.zmax, p.reverse) },));
      if (p.text && !small) s.append(svg("text", { x: x + cell / 2, y: y + tall / 2 + 4, "text-anchor": "middle",
        style: "fill:" + (light(v, p.zmin, p.zmax, p.reverse) ? "#1b1b1f" : "#fff") }, p.text[i][j]));
    }));
    p.marks.forEach((m) => {
      const x = left + m[1] * cell, y = 6 + m[0] * tall;
      if (m[2] === "masked") {
        s.append(svg("path", { d: "M" + (x + 3) + " " + (y + 3) + "L" + (x + cell - 4) + " " + (y + tall - 4) + "M" + (x + cell - 4) + " " + (y + 3) + "L" + (x + 3) + " " + (y + tall - 4), stroke: "#bebebe", "stroke-width": 2 }));
      } else {
        s.append(svg("rect", { x: x + 1, y: y + 1, width: cell - 3, height: tall - 3, fill: "none", stroke: "#ff2d55", "stroke-width": 2.5 }));
      }
    });
    if (!small) {
      names.forEach((lines, i) => {
        const y = 6 + i * tall + tall / 2 + 4 - 6.5 * (lines.length - 1);
        const t = svg("text", { x: left - 4, y: y, "text-anchor": "end" });
        lines.forEach((l, k) => t.append(svg("tspan", { x: left - 4, dy: k ? 13 : 0 }, l)));
        s.append(t);
      });
      p.x.forEach((t, j) => {
        const x = left + j * cell + cell / 2, y = 6 + nr * tall + 6;
        s.append(svg("text", { x: x, y: y, "text-anchor": "end", transform: "rotate(-60 " + x + " " + y + ")" }, cut(t, 14)));
      });
    }
    return s;
  }
  function bars(p, room) {
    const n = p.x.length, k = p.series.length;
    const all = p.series.flatMap((s) => s.y.filter((v) => v !== null));
    const top = Math.max(1e-9, ...all), low = Math.min(0, ...all);
    const left = 34, bottom = Math.min(110, 16 + 6 * Math.max(0, ...p.x.map((s) => cut(s, 16).length)));
    const slot = Math.max(14, Math.min(56, Math.floor((room - left - 6) / n))), plot = 150;
    const w = left + n * slot + 6, h = 16 + plot + bottom;
    const s = svg("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h });
    const y = (v) => 16 + plot * (top - v) / (top - low);
    s.append(svg("line", { x1: left, x2: w, y1: y(0), y2: y(0), stroke: "#888" }));
    s.append(svg("text", { x: left - 4, y: y(top) + 4, "text-anchor": "end" }, fmt(Math.max(0, ...all), p.percent)));
    p.series.forEach((ser, q) => ser.y.forEach((v, i) => {
      if (v === null) return;
      const bw = (slot - 6) / k, x = left + i * slot + 3 + q * bw;
      s.append(svg("rect", { x: x, y: Math.min(y(v), y(0)), width: Math.max(1, bw - 1), height: Math.abs(y(0) - y(v)), fill: SERIES[q % SERIES.length] }));
      if (ser.text && ser.text[i]) s.append(svg("text", { x: x + bw / 2, y: y(v) - 3, "text-anchor": "middle" }, ser.text[i]));
    }));
    p.x.forEach((t, i) => {
      const x = left + i * slot + slot / 2, yy = 16 + plot + 8;
      s.append(svg("text", { x: x, y: yy, "text-anchor": "end", transform: "rotate(-50 " + x + " " + yy + ")" }, cut(t, 16)));
    });
    return s;
  }
  function lines(p, room) {
    const xs = p.series.flatMap((s) => s.x), ys = p.series.flatMap((s) => s.y).filter((v) => v !== null);
    const fx = (v) => (p.log ? Math.log10(Math.max(v, 1e-9)) : v);
    const x0 = Math.min(...xs.map(fx)), x1 = Math.max(...xs.map(fx));
    const y0 = Math.min(0, ...ys), y1 = Math.max(...ys, 1e-9);
    const left = 40, w = Math.max(240, Math.min(360, room)), h = 200, top = 10, plot = 160;
    const X = (v) => left + (w - left - 8) * (x1 > x0 ? (fx(v) - x0) / (x1 - x0) : 0.5);
    const Y = (v) => top + plot * (y1 - v) / (y1 - y0 || 1);
    const s = svg("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h });
    s.append(svg("line", { x1: left, x2: w - 8, y1: Y(y0), y2: Y(y0), stroke: "#888" }));
    s.append(svg("text", { x: left - 4, y: Y(y1) + 4, "text-anchor": "end" }, fmt(y1, p.percent)));
    s.append(svg("text", { x: left - 4, y: Y(y0) + 4, "text-anchor": "end" }, fmt(y0, p.percent)));
    s.append(svg("text", { x: left, y: h - 8 }, String(Math.min(...xs))));
    s.append(svg("text", { x: w - 8, y: h - 8, "text-anchor": "end" }, String(Math.max(...xs)) + (p.xtitle ? "  " + p.xtitle : "")));
    const colours = {};
    p.series.forEach((ser, q) => {
      if (!(ser.name in colours)) colours[ser.name] = SERIES[Object.keys(colours).length % SERIES.length];
      const pts = ser.x.map((v, i) => (ser.y[i] === null ? null : X(v) + "," + Y(ser.y[i]))).filter(Boolean);
      s.append(svg("polyline", { points: pts.join(" "), fill: "none", stroke: colours[ser.name], "stroke-width": 2, "stroke-dasharray": ser.dash ? "5 4" : "none" }));
    });
    return s;
  }
  function numbers(spec) {
    const box = el("details", {}, el("summary", { text: "The numbers" }));
    spec.panels.forEach((p) => {
      const t = el("table");
      if (p.name) t.append(el("caption", { text: p.name }));
      if (p.kind === "heat") {
        t.append(el("tr", {}, el("th", { text: "" }), ...p.x.map((c) => el("th", { scope: "col", text: c }))));
        p.z.forEach((row, i) => t.append(el("tr", {}, el("th", { scope: "row", text: p.y[i] }),
          ...row.map((v, j) => el("td", { text: p.text ? p.text[i][j] : fmt(v, false) })))));
      } else if (p.kind === "bars") {
        t.append(el("tr", {}, el("th", { text: p.xtitle || "" }), ...p.series.map((s) => el("th", { scope: "col", text: s.name || p.ytitle || "value" }))));
        p.x.forEach((c, i) => t.append(el("tr", {}, el("th", { scope: "row", text: c }),
          ...p.series.map((s) => el("td", { text: s.text && s.text[i] ? s.text[i] : fmt(s.y[i], p.percent) })))));
      } else {
        p.series.forEach((s) => t.append(el("tr", {}, el("th", { scope: "row", text: s.name + (s.dash ? " (dashed)" : "") }),
          ...s.y.map((v, i) => el("td", { text: s.x[i] + ": " + fmt(v, p.percent) })))));
      }
      box.append(t);
    });
    return box;
  }

  // --- start ---------------------------------------------------------------------------------
  $("prev").addEventListener("click", () => go(S.at - 1));
  $("next").addEventListener("click", () => go(S.at + 1));
  $("hw-send").addEventListener("click", () => { if (S.draft) choose(S.draft.value, true); });
  $("join").addEventListener("submit", (e) => {
    e.preventDefault();
    const typed = $("code").value.replace(/[\s-]/g, "").toUpperCase();
    location.href = "?room=" + encodeURIComponent(typed);
  });
  if (!JOIN || !JOIN.code || (JOIN.problem && !JOIN.retry)) {
    gone(JOIN && JOIN.problem ? JOIN.problem : "That is not a class code.");
    $("join-why").textContent = (JOIN && JOIN.problem) || "Type the class code your teacher shows.";
    if (JOIN && JOIN.typed) $("code").value = JOIN.typed;
    return;
  }
  if (JOIN.problem) {
    status(JOIN.problem);
    setTimeout(() => location.reload(), 5000);
    return;
  }
  try { S.pending = JSON.parse(localStorage.getItem(KEY)); } catch (err) { S.pending = null; }
  connect();
  if (!S.joined) join(); else window.__xattnJoinedAt = performance.now();
})();
