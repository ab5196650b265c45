#!/bin/bash
expected='; service configuration
[server]
host = 0.0.0.0
port = 9090
debug = false

[metrics]
; statsd
port = 8125
debug = true'
[ "$(cat /app/app.ini)" = "$expected" ] || { echo "app.ini is:"; cat /app/app.ini; exit 1; }
echo ok
