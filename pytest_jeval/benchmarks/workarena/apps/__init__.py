"""The local service desk of workarena (:mod:`.desk`), written by the team after ServiceNow's UI conventions."""
