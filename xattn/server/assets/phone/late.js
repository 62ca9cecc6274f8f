// The modules the page fetches when it first needs them (xattn/server/scripts.py's
// LATE_MODULES: the answer's charts, about 3 kB gzipped a first load need not carry). Each
// is one classic script (LATE: its address, filled by the server; the browser keeps it a year
// under a name that changes with its text) calling XATTN_LATE with the function that makes
// it from the page's names it imports (scripts.LATE_SHARED: say, el).
import { say } from "./strings.js";
import { el } from "./dom.js";

const made = {}, fetching = {};
let came = () => {};

// `fn(name)` runs when a late module has come (the page is drawn again with it), or when a
// fetch failed and may be asked again.
export function onLate(fn) { came = fn; }

// Late module `name`'s functions once fetched; until then null, and it is asked for (once).
export function late(name) {
  if (made[name]) return made[name];
  if (!fetching[name]) {
    fetching[name] = true;
    const tag = document.createElement("script");
    tag.src = LATE[name];
    tag.onerror = () => {                   // offline: asked again at the next draw after 3 s
      tag.remove();
      setTimeout(() => { fetching[name] = false; came(name); }, 3000);
    };
    document.head.append(tag);
  }
  return null;
}

window.XATTN_LATE = (name, make) => {
  made[name] = make({ say: say, el: el });
  came(name);
};
