"""``terminalbench``: Terminal-Bench 1 tasks (task.yaml layout), environments built without Docker."""
