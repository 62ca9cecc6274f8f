// The controls a question asks with, one place for each (`ask.control`: a kind's control
// from the server's message, xattn/live/messages.py): its answer's canonical form, its
// words, what a tap makes of the answer so far, and its buttons. Buttons carry a `data-key`,
// so that a redraw puts the focus back on the same one (view.js).
import { say } from "./strings.js";
import { el, tok } from "./dom.js";

export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// An option as the page's language says it (`ask.shown`): a text, or its pieces [words,
// token, words, token, ...] whose tokens stay untranslated ("les 2 premiers : le chat").
const optionPieces = (x) => (Array.isArray(x) ? x.map((p, k) => (k % 2 ? tok(p) : p)) : [x]);
const optionText = (x) => (Array.isArray(x) ? x.join("") : x);

// The answer as the store keeps it: a number at the step's decimals, links sorted and once.
export function canonical(ask, v) {
  if (v === null || v === undefined) return null;
  if (ask.control === "number") return Number(Number(v).toFixed(ask.decimals)) + 0;
  if (ask.control === "links") {
    const seen = new Set();
    return v.map((l) => [l[0], l[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .filter((l) => { const k = l.join("-"); if (seen.has(k)) return false; seen.add(k); return true; });
  }
  return v;
}

export function words(ask, v) {
  if (v === null || v === undefined) return say("none");
  if (ask.control === "tokens") return ask.choices[v] !== undefined ? ask.choices[v] : String(v);
  if (ask.control === "number") return Number(v).toFixed(ask.decimals);
  if (ask.control === "grid") {
    const said = ask.rows.map((r, i) => v[i] ? r + " " + ask.labels[ask.choices.indexOf(v[i])] : null)
      .filter(Boolean);
    return said.length ? said.join(", ") : say("none");
  }
  if (ask.control === "links") return say("links", { n: v.length });
  if (ask.control === "tap") return say("tap.patch", { row: ask.rows[v[0]], col: ask.choices[v[1]] });
  if (ask.control === "strip") return say("strip.bin", { time: ask.choices[v] });
  if (ask.shown && ask.choices.indexOf(v) >= 0) return optionText(ask.shown[ask.choices.indexOf(v)]);
  return String(v);
}

export function said(ask, v, lvl) {
  const l = lvl && ask.levels && ask.levels.find((x) => x[0] === lvl);
  return words(ask, v) + (l ? ", " + l[1] : "");
}

// Whether the control sends its answer itself (a number's own Send), with no homework Send.
export const sendsItself = (ask) => ask.control === "number";

// A typed number: the value to send, or why it is refused.
export function typedNumber(ask, text) {
  const v = parseFloat(String(text).replace(",", "."));
  if (!isFinite(v) || v < ask.low || v > ask.high) return { why: say("number.range", { low: ask.low, high: ask.high }) };
  return { value: v };
}

// A grid's part `k` tapped on `c` (again: taken back): the answer so far, or null for none.
export function tapPart(ask, value, k, c) {
  const parts = Array.isArray(value) ? value.slice() : ask.rows.map(() => null);
  parts[k] = parts[k] === c ? null : c;
  return parts.some((p) => p !== null) ? parts : null;
}

// A link from target `t` to source `s` tapped (again: taken back), at most 32: the links so
// far (null for none) and the target word to offer next (the next one without a link).
export function tapLink(ask, value, target, t, s) {
  const links = Array.isArray(value) ? value.map((l) => l.slice()) : [];
  const at = links.findIndex((l) => l[0] === t && l[1] === s);
  if (at >= 0) links.splice(at, 1);
  else if (links.length < 32) {
    links.push([t, s]);
    const linked = new Set(links.map((l) => l[0]));
    for (let d = 1; d <= ask.rows.length; d++) {
      const next = (t + d) % ask.rows.length;
      if (!linked.has(next)) { target = next; break; }
    }
  }
  return { value: links.length ? links : null, target: target };
}

// --- the buttons (act: the page's actions, phone.js) -----------------------------------------
// Each drawing of xattn.classroom.controls.DRAWN (tests/test_classroom_kinds.py compares).
const CONTROLS = {
  pills: (box, ask, value, open, target, act) => pills(box, ask, value, open, act, false),
  tokens: (box, ask, value, open, target, act) => pills(box, ask, value, open, act, true),
  number: (box, ask, value, open, target, act) => number(box, ask, value, open, act),
  grid: (box, ask, value, open, target, act) => grid(box, ask, value, open, act),
  links: (box, ask, value, open, target, act) => links(box, ask, value, open, target, act),
  tap: (box, ask, value, open, target, act) => tapImage(box, ask, value, open, act),
  strip: (box, ask, value, open, target, act) => tapTime(box, ask, value, open, act),
};
export function drawControl(box, ask, value, open, target, act) {
  const draw = Object.prototype.hasOwnProperty.call(CONTROLS, ask.control) && CONTROLS[ask.control];
  if (!draw) {            // a control this page does not know: said, never a silent blank
    box.append(el("p", { class: "receipt refused", role: "alert",
      text: say("control.unknown", { control: ask.control }) }));
    return;
  }
  draw(box, ask, value, open, target, act);
}
function pills(box, ask, value, open, act, byPosition) {
  const group = el("div", { class: "group", role: "group", "aria-labelledby": "prompt" });
  ask.choices.forEach((c, i) => {
    const v = byPosition ? i : c;
    group.append(el("button", { type: "button", class: "pill", "aria-pressed": String(same(v, value)),
      "data-key": "choice-" + i, disabled: !open, onclick: () => act.tap(v) },
      ...(ask.shown ? optionPieces(ask.shown[i]) : [tok(c)])));   // options in this page's language
  });
  box.append(group);
}
function number(box, ask, value, open, act) {
  const input = el("input", { type: "number", inputmode: "decimal", min: ask.low, max: ask.high,
    step: Math.pow(10, -ask.decimals), id: "number", "aria-labelledby": "prompt", "data-key": "number",
    placeholder: say("number.placeholder"), disabled: !open });
  if (value !== null) input.value = Number(value).toFixed(ask.decimals);
  const go = () => act.typed(input.value);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
  box.append(el("div", { class: "row" }, input,
    el("button", { type: "button", class: "primary", "data-key": "number-send", disabled: !open, onclick: go, text: say("send") })));
}
function grid(box, ask, value, open, act) {
  const parts = Array.isArray(value) ? value : ask.rows.map(() => null);
  ask.rows.forEach((row, k) => {
    const name = el("div", { class: "part-name", id: "part-" + k, text: row });
    const group = el("div", { class: "group", role: "group", "aria-labelledby": "part-" + k });
    ask.choices.forEach((c, j) => {
      group.append(el("button", { type: "button", class: "pill", "aria-pressed": String(parts[k] === c),
        "data-key": "part-" + k + "-" + j, disabled: !open, text: ask.labels[j], title: c,
        onclick: () => act.part(k, c) }));
    });
    box.append(el("div", { class: "part" }, name, group));
  });
}
function links(box, ask, value, open, target, act) {
  const drawn = Array.isArray(value) ? value : [];
  const linked = new Set(drawn.map((l) => l[0]));
  if (target >= ask.rows.length) target = 0;
  const tgt = el("div", { class: "group", role: "group", "aria-label": say("links.aria.target") });
  ask.rows.forEach((w, i) => tgt.append(el("button", { type: "button", class: "pill",
    "aria-pressed": String(target === i), "data-key": "target-" + i, disabled: !open,
    onclick: () => act.target(i) }, tok(w), linked.has(i) ? " ✓" : "")));
  const src = el("div", { class: "group", role: "group", "aria-label": say("links.aria.source", { word: ask.rows[target] }) });
  ask.choices.forEach((w, j) => {
    const on = drawn.some((l) => l[0] === target && l[1] === j);
    src.append(el("button", { type: "button", class: "pill", "aria-pressed": String(on), disabled: !open,
      "data-key": "source-" + j, onclick: () => act.link(target, j) }, tok(w), on ? " ✓" : ""));
  });
  box.append(el("div", { class: "part-name", text: say("links.tap") }), tgt,
    el("div", { class: "part-name" }, tok(ask.rows[target]), say("links.translates")), src);
  if (drawn.length) {
    const list = el("div", { class: "group", role: "group", "aria-label": say("links.aria.yours") });
    drawn.forEach((l) => list.append(el("button", { type: "button", class: "pill", disabled: !open,
      "data-key": "link-" + l[0] + "-" + l[1], dir: "ltr", title: say("links.back"), onclick: () => act.link(l[0], l[1]) },
      tok(ask.rows[l[0]]), " → ", tok(ask.choices[l[1]]), " ✕")));
    box.append(el("div", { class: "part-name", text: say("links.yours", { n: drawn.length }) }), list);
  }
}
// The image under a grid of its patches, one button each: a tap on a point is the patch under
// it (a screen reader reads each patch's row and column); the patch tapped is outlined.
function tapImage(box, ask, value, open, act) {
  const n = ask.rows.length, m = ask.choices.length;
  const grid = el("div", { class: "tap-grid", role: "group", "aria-label": say("tap.aria"),
    style: "grid-template-columns: repeat(" + m + ", 1fr); grid-template-rows: repeat(" + n + ", 1fr);" +
      (ask.image ? " background-image: url(" + JSON.stringify(ask.image) + ");" : "") });
  ask.rows.forEach((r, i) => ask.choices.forEach((c, j) => {
    const on = Array.isArray(value) && value[0] === i && value[1] === j;
    grid.append(el("button", { type: "button", class: "patch", "aria-pressed": String(on),
      "data-key": "patch-" + i + "-" + j, disabled: !open, title: say("tap.patch", { row: r, col: c }),
      "aria-label": say("tap.patch", { row: r, col: c }), onclick: () => act.tap([i, j]) }));
  }));
  box.append(el("div", { class: "part-name", text: say("tap.hint") }), grid);
}
// The clip's spectrogram under a strip of its time bins, one button each (a screen reader
// reads each bin's time in seconds); the bin tapped is outlined.
function tapTime(box, ask, value, open, act) {
  const n = ask.choices.length;   // each bin at least 1.5rem wide (a target): a long strip scrolls
  const strip = el("div", { class: "time-strip", role: "group", "aria-label": say("strip.aria"),
    style: "grid-template-columns: repeat(" + n + ", 1fr);" +
      (ask.image ? " background-image: url(" + JSON.stringify(ask.image) + ");" : "") });
  ask.choices.forEach((c, i) => strip.append(el("button", { type: "button", class: "patch",
    "aria-pressed": String(value === i), "data-key": "bin-" + i, disabled: !open,
    title: say("strip.bin", { time: c }), "aria-label": say("strip.bin", { time: c }),
    onclick: () => act.tap(i) })));
  const ends = el("div", { class: "strip-ends", "aria-hidden": "true" },
    el("span", { text: ask.choices[0].split("–")[0] + " s" }), el("span", { text: ask.choices[n - 1].split("–")[1] }));
  box.append(el("div", { class: "part-name", text: say("strip.hint") }),
    el("div", { class: "strip-box" }, el("div", { style: "min-width: " + 1.5 * n + "rem" }, strip, ends)));
}
