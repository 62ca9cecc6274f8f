"""Where the page's weights come from: each source's sidebar controls and its ``Attention``
(random projections, the toy task's training runs, a real model, an uploaded file)."""
