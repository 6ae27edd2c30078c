"""The console's slash commands, keys and overlays, said once: the app runs them, the help
overlay and the man page list them. No Textual here (the man page generator reads it)."""

from __future__ import annotations

# slash command -> what it does (the help overlay and the man page list them; the app runs them)
SLASH = {
    "/display info|verbose|debug": "what the conversation shows (also 3, 4, 5)",
    "/transcript": "the raw transcript (F2)",
    "/tasks": "background tasks, their output and input (F3)",
    "/agents": "pick an agent; unread action_required shown (F4)",
    "/agent NAME": "switch to agent NAME",
    "/workspace": "workspace, access mode and sandbox (F5)",
    "/children": "child agents (F6)",
    "/debug": "what the next provider request would contain (F7)",
    "/events": "raw audit events (F8)",
    "/help": "this help (F1)",
    "/quit": "leave the console (Ctrl-Q); tasks, timers and children go on",
}
KEYS = (
    "Enter submits · Ctrl-J, Shift-Enter or a trailing \\ starts a new line · Up/Down: history\n"
    "Ctrl-C interrupts the running turn (it resumes at the next tick; background tasks go on)\n"
    "PgUp/PgDn scroll the conversation, or the overlay while one is open\n"
    "Overlays open above the conversation and the composer stays available below them:\n"
    "typing goes to the composer and Enter submits it, except in a task's input line\n"
    "Tasks, children, agents: Up/Down pick; Enter opens the task's input line (or switches agent)\n"
    "Tab moves between an overlay's list, its input line and the composer\n"
    "Esc closes the overlay first · Ctrl-Q quits · a message that starts with / is sent as //"
)

OVERLAYS = {
    "help": "Help",
    "transcript": "Transcript",
    "tasks": "Tasks",
    "agents": "Agents",
    "workspace": "Workspace, access mode and sandbox",
    "children": "Child agents",
    "debug": "Debug prompt: the next provider request",
    "events": "Events",
}


def help_text() -> str:
    """The help overlay: the keys, then each slash command."""
    rows = "\n".join(f"{cmd:<30} {what}" for cmd, what in SLASH.items())
    return f"{KEYS}\n\n{rows}\n"
