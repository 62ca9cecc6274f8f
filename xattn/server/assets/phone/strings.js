// Every word the phone's scripts show comes from the page's catalog: `CATALOG` (the server
// fills it from xattn/locale/<lang>/LC_MESSAGES/phone.po, one language per page:
// docs/languages.md), keyed by message id. `{name}` marks a value put in by `say`.
const BOOK = (typeof CATALOG === "object" && CATALOG) || { lang: "en", strings: {} };
export const STRINGS = BOOK.strings;
export const LANG = BOOK.lang;
const PLURAL = new Intl.PluralRules(LANG);
const NUMBER = new Intl.NumberFormat(LANG, { maximumFractionDigits: 6 });

// A number in prose, as this page's language writes it (never inside a token or code).
export function num(n, digits) {
  return digits ? new Intl.NumberFormat(LANG, { minimumIntegerDigits: digits, useGrouping: false }).format(n) : NUMBER.format(n);
}

// The server's own sentences (ids "why.*": xattn/classroom/said.py) are not in the page: a
// refusal, a receipt, a gone room... carries its English (`why`) and its message (`say`: an
// id and its values). `told` says it from the catalog once fetched (main.js asks for it when
// `WANTED.words`), in English until then; a plain string is shown as it is.
export const WANTED = { words: false };
export function told(x) {
  if (x === null || x === undefined || typeof x === "string") return x;
  const m = x.say;
  if (m && Object.prototype.hasOwnProperty.call(STRINGS, m[0])) return say(m[0], m[1]);
  if (m) WANTED.words = true;
  return x.why;
}

// The message `id` with each `{name}` replaced by `vars[name]` (a number formatted per the
// page's language; a plural message's form chosen by `vars.n`, CLDR's categories). An
// unknown id: the id itself, so that a missing entry shows, and a test catches it.
export function say(id, vars) {
  let text = Object.prototype.hasOwnProperty.call(STRINGS, id) ? STRINGS[id] : id;
  if (typeof text === "object") text = text[PLURAL.select(vars.n)] || text.other;
  return vars ? text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? (typeof vars[k] === "number" ? num(vars[k]) : String(vars[k])) : m)) : text;
}
