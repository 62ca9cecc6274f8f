"""A class's step as data, with no Streamlit: what the lecturer's page (``xattn/ui/``) and the
phones' routes (``xattn/server/``) both stand on.

- `xattn.live.process`: process-wide values (the class store, caches) as plain module caches
  with a lock, where the page once used ``st.cache_resource``;
- `xattn.live.stores`: the server's class store; `xattn.live.cookies`: cookie names and the
  signed browser token;
- `xattn.live.compute`: the byte-bounded caches of runs, derived values and figures;
- `xattn.live.link`, `xattn.live.params`: the page's settings table, which a lesson step's
  ``[step.page]`` is written in;
- `xattn.live.models`, `xattn.live.training`: models loaded and trainings run once per process
  (what a page shows while they run is a callback: `xattn.live.training.Progress`,
  `xattn.live.prepared.Shown`);
- `xattn.live.prepared`, `xattn.live.answers`, `xattn.live.versus`: a lesson step's weights,
  question and answer charts;
- `xattn.live.catalog`: which lesson a server or a room teaches;
- `xattn.live.messages`, `xattn.live.homework`, `xattn.live.build`: what a phone is sent when its
  room moves (the hub's build).

``tests/test_package.py`` fails if anything here (or in ``xattn/server``, ``xattn/classroom``)
imports streamlit or ``xattn.ui``.
"""
