#!/bin/bash
apt-get update
apt-get install -y cowsay || { echo 0 > /logs/verifier/reward.txt; exit 1; }
/usr/games/cowsay "$(cat /app/done.txt)"
[ "$(cat /app/done.txt)" = ok ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
