// The token page (xattn/server/token.py): a browser buys its token with a join's work
// (work.js), then loads the link again. A classic script; T (the challenge) is filled at serve time.
"use strict";
(function () {
  const T = /*TOKEN*/null;
  XATTN_WORK.solve(T.challenge, T.bits, T.pieces, async (nonce) => {
    const headers = { "Content-Type": "application/json" };
    if (window.top !== window.self) headers["X-Xattn-Framed"] = "1";
    try {
      const res = await fetch("live/token", { method: "POST", headers: headers,
        credentials: "same-origin", body: JSON.stringify({ challenge: T.challenge, nonce }) });
      if (res.ok) { location.reload(); return; }
      document.getElementById("say").textContent = (await res.json()).why;
    } catch (err) {
      document.getElementById("say").textContent = "No connection to the server: reload this page.";
    }
  });
})();
