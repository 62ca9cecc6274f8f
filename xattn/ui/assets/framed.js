// The lecturer's page shown inside another site's page (xattn/ui/room/framed.py): the
// warning, with the address to open instead. A components.v2 component: no frame of its own.
export default function ({ parentElement, data }) {
  const box = parentElement.querySelector(".xattn-framed");
  // framed by a page of another site: a page of its own site (a host's wrapper) keeps cookies
  let foreign = false;
  if (window.top !== window.self) {
    try { foreign = window.top.location.origin !== window.location.origin; }
    catch (e) { foreign = true; }            // another site's page may not even be read
  }
  if (!box || !foreign) return;
  const own = window.location.origin + window.location.pathname;
  box.textContent = data.text.replace("{own}", own);
  box.hidden = false;
}
