set -e
git init -q -b main repo
cd repo
printf 'hello\n' > README.md
git add README.md && git commit -q -m "Initial commit"
printf 'def greet():\n    return "hi"\n' > app.py
git add app.py && git commit -q -m "Add app"
