#!/bin/sh
# Drive an interactive program as a background tty task: start a Python REPL with the agent's
# ExecCommand tool, then type into it with `holon task input --expect`, each call printing what
# the REPL answered. No API key needed; uses a throwaway HOLON_HOME.
set -eu
HOLON=${HOLON:-holon}
PYTHON=$(command -v "${PYTHON:-python3}")
export HOLON_HOME="${HOLON_HOME:-$(mktemp -d)}"

$HOLON init --agent-id repl >/dev/null
echo "== start a Python REPL under a terminal (it outlives its 1 s yield: a task)"
started=$($HOLON tool call repl ExecCommand --input \
  "{\"cmd\": \"$PYTHON -q\", \"tty\": true, \"login\": false, \"yield_time_ms\": 1000}")
task=$(printf '%s' "$started" | $PYTHON -c \
  'import json,sys; print(json.load(sys.stdin)["result"]["task_handle"]["task_id"])')
echo "task $task"

echo "== x = 6 * 7"
$HOLON task input repl "$task" 'x = 6 * 7' --expect '>>> $'
echo
echo "== print(x)"
$HOLON task input repl "$task" 'print(x)' --expect '>>> $'
echo
echo "== end of file: the REPL exits and the task completes"
$HOLON task input repl "$task" '' --no-newline --eof --timeout 5 || true
$HOLON task output repl "$task" --wait 10 >/dev/null
$HOLON task status repl "$task"
