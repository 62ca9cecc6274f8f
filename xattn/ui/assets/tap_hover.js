// One tap on a phone must pick a cell of the step view's chart (xattn/ui/views/step.py): where
// a finger lands on it, Plotly gets the hover a mouse would have given it. Installed once per
// page; the chart's key is filled at serve time.
(() => {
  if (window.__xattnTapHover) return;
  window.__xattnTapHover = true;
  document.addEventListener("touchstart", (e) => {
    const spot = e.target, touch = e.touches[0];
    if (e.touches.length !== 1 || !(spot instanceof Element)
        || !spot.matches(".st-key-/*PICK_KEY*/ .nsewdrag")) return;
    spot.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, cancelable: true,
      view: window, clientX: touch.clientX, clientY: touch.clientY }));
  }, { capture: true, passive: true });
})();
