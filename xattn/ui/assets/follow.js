// A lecturer's page follows its room's pulse (xattn/ui/room/follow.py): one EventSource on
// live/CODE/pulse, and a rerun asked for when the room moved (or only the count's fragments).
export default function (component) {
  const { data, setTriggerValue } = component;
  const all = (window.__xattnFollow = window.__xattnFollow || {});
  for (const [url, f] of Object.entries(all)) {
    if (url !== data.url) { f.es.close(); delete all[url]; }
  }
  let f = all[data.url];
  if (!f) {
    f = all[data.url] = { last: null, asked: "" };
    f.connect = () => {
      if (f.es) f.es.close();
      f.es = new EventSource(data.url);
      f.es.addEventListener("pulse", (e) => { f.last = JSON.parse(e.data); f.check(); });
      f.es.addEventListener("gone", () => { f.es.close(); f.ask("moved", "gone"); });
    };
    f.connect();
  }
  // The page's host key reached its cookie (room.py's claim) after the stream opened: open
  // it again, with the cookie, so that it keeps the room taught (a stream without the key
  // follows the room but never keeps it).
  if (!window.__xattnReopen) {
    window.__xattnReopen = true;
    window.addEventListener("xattn-claimed", (e) => {
      for (const [url, g] of Object.entries(window.__xattnFollow || {})) {
        if (url.startsWith("live/" + e.detail + "/")) g.connect();
      }
    });
  }
  clearTimeout(f.closing);
  clearTimeout(f.timer);
  f.drawn = data;
  f.trigger = setTriggerValue;
  f.ask = (name, value) => {
    const said = name + ":" + value;
    // a rerun asked for answers it; asked again only if the page still lags 3 s later
    if (f.asked === said && Date.now() - f.askedAt < 3000) return;
    f.asked = said;
    f.askedAt = Date.now();
    f.trigger(name, value);
  };
  f.check = () => {
    const p = f.last, d = f.drawn;
    if (!p || !d) return;
    // Versions and tallies only grow: a pulse older than what the page drew (its own click
    // drew the move first) asks nothing.
    if (p.version > d.version) return f.ask("moved", p.version);
    if (p.tally > d.tally) {
      d.tally = p.tally;                  // the count's fragments draw it: no full run
      return f.ask("tally", p.tally);
    }
  };
  if (data.ends_at && !data.closed) {        // the round's timer: the page redraws at zero
    const offset = data.now - Date.now() / 1000;
    const wait = Math.max(0, data.ends_at - (Date.now() / 1000 + offset)) * 1000 + 150;
    f.timer = setTimeout(() => f.ask("moved", "timer-" + data.ends_at), wait);
  }
  f.check();
  return () => { f.closing = setTimeout(() => { f.es.close(); delete all[data.url]; }, 3000); };
}
