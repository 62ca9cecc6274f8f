"""The views of the weights: one module per tab (``xattn.ui.page.DRAWS``), each drawing one
``xattn.sources.Attention``."""
