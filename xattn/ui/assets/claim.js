// A host page hands its key to an HttpOnly cookie (POST live/CODE/host: xattn/ui/room/room.py's
// claim), then tells its pulse stream (follow.js) to open again with it.
export default function ({ data }) {
  const done = (window.__xattnClaimed = window.__xattnClaimed || {});
  if (done[data.url] === data.key) return;
  done[data.url] = data.key;
  const headers = { "Content-Type": "application/json" };
  if (window.top !== window.self) headers["X-Xattn-Framed"] = "1";   // cookies.py
  fetch(data.url, { method: "POST", credentials: "same-origin", headers: headers,
                    body: JSON.stringify({ key: data.key }) })
    .then((r) => {
      if (!r.ok) { delete done[data.url]; return; }
      // the host's pulse stream opens again with the cookie (follow.py): it keeps the room
      window.dispatchEvent(new CustomEvent("xattn-claimed", { detail: data.code }));
    })
    .catch(() => { delete done[data.url]; });
}
