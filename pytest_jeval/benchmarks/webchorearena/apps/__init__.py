"""The local sites of webchorearena, written by the team: a shop with its admin back office, and a forum.

Each is a small aiohttp application, server-rendered, over an in-memory SQLite database built by
code from a fixed seed (:mod:`.shop`, :mod:`.forum`); a new instance is a reset. The storefront and
the back office share one database, as WebArena's shopping and shopping-admin sites share Magento's.
The browser is the task's logged-in user: the shop's customer Emma Lopez, the back office's admin and
the forum's user ``jeval_user`` (WebArena's tasks start logged in).
"""
