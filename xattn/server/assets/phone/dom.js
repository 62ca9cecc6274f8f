// The page's elements: by id, and made (text always as text; HTML only where the server's
// own rendering of the lesson is meant: xattn/markup.py).
export const $ = (id) => document.getElementById(id);

export function el(tag, props, ...kids) {
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

// A model's token: never translated, isolated from the prose around it (right to left too),
// byte for byte the same in every language.
export const tok = (text) => el("bdi", { dir: "auto", translate: "no" }, el("code", { text: text }));
// The server's own rendering holds tokens as <code>: kept untranslated and isolated too.
export function keepTokens(box) {
  box.querySelectorAll("code").forEach((c) => { c.setAttribute("translate", "no"); c.setAttribute("dir", "auto"); });
  return box;
}
