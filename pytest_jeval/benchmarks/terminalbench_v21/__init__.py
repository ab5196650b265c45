"""``terminalbench-v2.1``: Terminal-Bench 2 tasks in the Harbor layout, environments built without Docker."""
