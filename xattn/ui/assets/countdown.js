// A round's countdown on the lecturer's page (xattn/ui/room/panels.py: countdown): the
// browser counts it down every quarter second, with no rerun of the page. The element's id
// is filled at serve time; its data-left holds the seconds left when it was drawn.
(() => {
  const el = document.getElementById("/*ID*/");
  if (!el) return;
  const end = Date.now() + 1000 * parseFloat(el.dataset.left);
  const tick = () => {
    const s = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    el.textContent = "⏱ " + Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    if (s > 0) setTimeout(tick, 250); else el.textContent = "⏱ time is up";
  };
  tick();
})();
