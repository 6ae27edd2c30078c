#!/bin/sh
# Quickstart: a real agent turn end to end with a scripted model (no API key).
# Prompt in, brief out, transcript to inspect. Uses a throwaway HOLON_HOME.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
HOLON=${HOLON:-holon}
export HOLON_HOME="${HOLON_HOME:-$(mktemp -d)}"
export HOLON_MODEL="scripted/$here/script.jsonl"

echo "== holon init --agent-id demo"
$HOLON init --agent-id demo
echo
echo "== holon prompt demo 'Introduce yourself.'"
$HOLON prompt demo "Introduce yourself."
echo
echo "== holon transcript demo"
$HOLON transcript demo
echo
echo "== holon status demo"
$HOLON status demo
echo
echo "HOLON_HOME=$HOLON_HOME (inspect .holon/ledger/*.jsonl with jq)"
