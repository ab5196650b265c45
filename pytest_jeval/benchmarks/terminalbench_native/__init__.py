"""``terminalbench-native``: Terminal-Bench 2 tasks under a container engine (the task's own Dockerfile)."""
