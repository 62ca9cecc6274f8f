"""Tools for developing xattn (not part of the library): start the app, drive a browser.

Shared by ``tests/``, ``benchmarks/`` and ``scripts/``; run those from the repository root
(``python -m pytest``, ``python -m benchmarks.load_test``), which puts this package on the path.
"""
