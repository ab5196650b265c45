"""/app/notes.txt holds the single line DONE (run by the image's python3)."""

import pathlib
import sys

path = pathlib.Path("/app/notes.txt")
ok = path.is_file() and path.read_text().strip() == "DONE"
print("notes:", "ok" if ok else "missing or wrong")
sys.exit(0 if ok else 1)
