"""Shared parts of the web benchmarks (webchorearena, workarena, browser_assistant in browser mode).

* :mod:`.host`: web applications served on 127.0.0.1, one instance (and port) per episode, on an
  event loop of the process; nothing outlives the process.
* :mod:`.db`: an in-memory SQLite database per instance, built from code (reset = a new instance),
  exportable as JSON for checking.
* :mod:`.html`: the small HTML vocabulary the server-rendered applications share.
* :mod:`.env`: an episode's web environment: its applications, the browser session confined to
  them, the placeholders (``__SHOPPING__``) rendered to their addresses, and the cleanup.

See docs/web.md.
"""
