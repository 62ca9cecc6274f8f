// The answer's charts as SVG, drawn on the phone from a few kilobytes of numbers (the
// server's figures as a phone's panels: xattn/figures/phone.py): heatmaps, bars and lines,
// each with its text alternative and its numbers in a table.
import { say } from "./strings.js";
import { el } from "./dom.js";

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
export function fit(s) {
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

export function chart(spec, room) {
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
    el("span", {}, el("span", { class: "swatch", style: "background:" + SERIES[k % SERIES.length] }), s.name || say("chart.series", { k: k + 1 })))));
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
  s.append(svg("text", { x: 120, y: 27, "text-anchor": "middle" }, say(p.reverse ? "chart.darker" : "chart.brighter")));
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
  const box = el("details", {}, el("summary", { text: say("chart.numbers") }));
  spec.panels.forEach((p) => {
    const t = el("table");
    if (p.name) t.append(el("caption", { text: p.name }));
    if (p.kind === "heat") {
      t.append(el("tr", {}, el("th", { text: "" }), ...p.x.map((c) => el("th", { scope: "col", text: c }))));
      p.z.forEach((row, i) => t.append(el("tr", {}, el("th", { scope: "row", text: p.y[i] }),
        ...row.map((v, j) => el("td", { text: p.text ? p.text[i][j] : fmt(v, false) })))));
    } else if (p.kind === "bars") {
      t.append(el("tr", {}, el("th", { text: p.xtitle || "" }), ...p.series.map((s) => el("th", { scope: "col", text: s.name || p.ytitle || say("chart.value") }))));
      p.x.forEach((c, i) => t.append(el("tr", {}, el("th", { scope: "row", text: c }),
        ...p.series.map((s) => el("td", { text: s.text && s.text[i] ? s.text[i] : fmt(s.y[i], p.percent) })))));
    } else {
      p.series.forEach((s) => t.append(el("tr", {}, el("th", { scope: "row", text: s.name + (s.dash ? say("chart.dashed") : "") }),
        ...s.y.map((v, i) => el("td", { text: s.x[i] + ": " + fmt(v, p.percent) })))));
    }
    box.append(t);
  });
  return box;
}

