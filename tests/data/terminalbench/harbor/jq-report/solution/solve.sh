#!/bin/bash
set -euo pipefail
jq -r 'group_by(.customer)[] | "\(.[0].customer) \(map(.amount) | add)"' /app/orders.json > /app/report.txt
