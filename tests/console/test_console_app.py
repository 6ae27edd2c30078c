"""The console under Textual's pilot: a prompt admitted once and its reply shown, display modes,
the composer's history and new lines, untrusted text made safe, overlays closed by Esc, agent
selection, quitting. Turns run through the real `holon tick` in a subprocess."""

from __future__ import annotations

import asyncio

from pilot import shown, submit, until
from textual import events
from textual.widgets import RichLog, Static

from holon.agent.handle import Agent
from holon.console.app import ConsoleApp
from holon.console.commands import OVERLAYS
from holon.console.composer import Composer
from holon.console.overlays import Overlay
from holon.home.init import init_home
from holon.store import jsonl


def run(app: ConsoleApp, scenario) -> None:
    async def main() -> None:
        async with app.run_test(size=(110, 36)) as pilot:
            await scenario(pilot)
            if app.is_running:  # a tick still ending is awaited, not left behind
                await until(pilot, lambda: not app.runner.running)

    asyncio.run(main())


def operator_texts(home) -> list[str]:
    return [m["body"]["text"] for m in jsonl.read(home.messages)]


def test_a_prompt_is_admitted_once_and_its_reply_shown(agent, script):
    model = script({"text": "pong from the agent"})
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "ping")
        await until(pilot, lambda: "pong from the agent" in shown(app))
        assert "› ping" in shown(app)
        header = app.query_one("#header", Static)
        await until(pilot, lambda: str(header.render()).endswith("· idle"))

    run(app, scenario)
    assert operator_texts(agent) == ["ping"]
    assert app.return_code is None or app.return_code == 0


def test_display_modes_show_progress_only_at_verbose_and_trace_at_debug(agent, script):
    model = script({"text": "done thinking"})
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "go")
        await until(pilot, lambda: "done thinking" in shown(app) and not app.working())
        assert "Assistant progress" not in shown(app)
        await submit(pilot, "/display 4")
        assert app.level == "verbose" and "· Assistant progress: done thinking" in shown(app)
        assert "[turn_terminal]" not in shown(app)
        await submit(pilot, "/display debug")
        assert "[turn_terminal]" in shown(app)
        await submit(pilot, "/display loud")
        assert app.level == "debug" and "/display info|verbose|debug" in shown(app)
        await submit(pilot, "/display info")
        assert "Assistant progress" not in shown(app)

    run(app, scenario)


def test_the_composer_keeps_history_and_writes_several_lines(agent, script):
    model = script({"text": "one"}, {"text": "two"})
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        composer = app.query_one(Composer)
        await submit(pilot, "first")
        await until(pilot, lambda: "one" in shown(app) and not app.working())
        await pilot.press("u", "p", "ctrl+j", "t", "o")
        assert composer.text == "up\nto"
        await pilot.press("ctrl+c")  # nothing runs: Ctrl-C clears the composer
        assert composer.text == ""
        await pilot.press("up")
        assert composer.text == "first"
        await pilot.press("down")
        assert composer.text == ""
        await pilot.press("a", "ctrl+j", "b", "enter")
        await until(pilot, lambda: "two" in shown(app) and not app.working())

    run(app, scenario)
    assert operator_texts(agent) == ["first", "a\nb"]


def test_untrusted_text_reaches_the_screen_escaped(agent, script):
    model = script({"text": "look \x1b]0;owned\x07 here \x1b[2J"})
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "hi")
        text = await until(pilot, lambda: "look" in shown(app) and shown(app))
        assert "\x1b" not in text and "\x07" not in text
        assert "look \\u001b]0;owned\\u0007 here \\u001b[2J" in text

    run(app, scenario)


def test_every_overlay_opens_and_esc_closes_it_first(agent, script):
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        composer = app.query_one(Composer)
        for name in OVERLAYS:
            composer.load_text("draft")
            app.action_overlay(name)
            overlay = await until(pilot, lambda: app.overlay)
            await until(pilot, lambda s=overlay: "loading" not in _overlay_text(s))
            await pilot.press("escape")
            await until(pilot, lambda: app.overlay is None)
            assert composer.text == "draft", name  # Esc closed the overlay and nothing else
        composer.clear()
        await submit(pilot, "/transcript")  # the slash command opens one too
        await until(pilot, lambda: app.overlay)
        await pilot.press("escape")
        await until(pilot, lambda: app.overlay is None)

    run(app, scenario)


def _overlay_text(overlay) -> str:
    logs = overlay.query(RichLog)
    return "\n".join(line.text for log in logs for line in log.lines) if logs else "-"


def test_the_transcript_overlay_shows_the_raw_transcript(agent, script):
    app = ConsoleApp(agent, model=script({"text": "raw reply"}))

    async def scenario(pilot):
        await submit(pilot, "question")
        await until(pilot, lambda: "raw reply" in shown(app) and not app.working())
        await pilot.press("f2")
        overlay = await until(pilot, lambda: app.overlay)
        text = await until(pilot, lambda: "assistant: raw reply" in _overlay_text(overlay) and 1)
        assert text
        assert "$ holon transcript a" in _overlay_text(overlay)
        await pilot.press("escape")

    run(app, scenario)


def test_agents_show_unread_action_required_and_a_pick_switches(agent, script):
    other = init_home(None, "b")
    Agent(other).brief("ack", "need a decision", visibility="action_required")
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        await until(pilot, lambda: "b  1 action required" in app.others)
        await pilot.press("f4")
        overlay = await until(pilot, lambda: app.overlay)
        await until(pilot, lambda: overlay.query_one("OptionList").option_count == 2)
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.home.agent_id == "b")
        assert "Action required: need a decision" in shown(app)
        await submit(pilot, "/agent a")
        await until(pilot, lambda: app.home.agent_id == "a")
        await submit(pilot, "/agent nobody")
        assert "unknown_agent" in shown(app) or "no agent" in shown(app)

    run(app, scenario)


def test_a_refused_prompt_says_why_and_admits_nothing(agent):
    app = ConsoleApp(agent, model=None)  # no model configured anywhere

    async def scenario(pilot):
        await submit(pilot, "hello")
        await until(pilot, lambda: "no_model_configured" in shown(app))

    run(app, scenario)
    assert operator_texts(agent) == []


def test_quit_exits_zero(agent, script):
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        await submit(pilot, "/quit")

    run(app, scenario)
    assert app.return_code == 0


def test_the_conversation_follows_while_an_overlay_is_open(agent, script):
    app = ConsoleApp(agent, model=script({"text": "arrived under the overlay"}))

    async def scenario(pilot):
        await submit(pilot, "go")
        await pilot.press("f1")
        await until(pilot, lambda: app.overlay)
        await until(pilot, lambda: "arrived under the overlay" in shown(app))
        assert isinstance(app.overlay, Overlay)
        await pilot.press("escape")

    run(app, scenario)


def test_a_resized_terminal_gets_the_conversation_wrapped_again(agent, script):
    reply = " ".join(f"word{i}" for i in range(60))
    app = ConsoleApp(agent, model=script({"text": reply}))

    async def scenario(pilot):
        await submit(pilot, "talk")
        await until(pilot, lambda: "word59" in shown(app) and not app.working())
        log = app.query_one("#conversation", RichLog)
        assert max(line.cell_length for line in log.lines) > 60
        await pilot.resize_terminal(50, 30)
        await until(pilot, lambda: max(line.cell_length for line in log.lines) <= 50)
        assert "word59" in shown(app)

    run(app, scenario)


def test_a_message_that_starts_with_a_slash_is_sent_doubled(agent, script):
    app = ConsoleApp(agent, model=script({"text": "noted"}))

    async def scenario(pilot):
        await submit(pilot, "/etc is full")
        await until(pilot, lambda: "unknown command '/etc'" in shown(app))
        await submit(pilot, "//etc is full")
        await until(pilot, lambda: "noted" in shown(app))

    run(app, scenario)
    assert operator_texts(agent) == ["/etc is full"]


def test_a_prompt_typed_over_the_transcript_overlay_is_admitted_once(agent, script):
    app = ConsoleApp(agent, model=script({"text": "answered over the overlay"}))

    async def scenario(pilot):
        await pilot.press("f2")
        overlay = await until(pilot, lambda: app.overlay)
        await until(pilot, lambda: "loading" not in _overlay_text(overlay))
        await pilot.press(*"ping", "enter")  # no focus change: the composer has the keyboard
        await until(pilot, lambda: "answered over the overlay" in shown(app))
        assert app.overlay is overlay and app.chat.size.height >= 3  # seen below the overlay
        await pilot.press("escape")
        await until(pilot, lambda: app.overlay is None)
        assert "answered over the overlay" in shown(app) and app.composer.text == ""

    run(app, scenario)
    assert operator_texts(agent) == ["ping"]


def test_esc_closes_the_overlay_first_and_typing_on_a_list_goes_to_the_composer(agent, script):
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        composer = app.query_one(Composer)
        await pilot.press("f4")  # a list to pick from takes the arrows and Enter
        overlay = await until(pilot, lambda: app.overlay)
        await until(pilot, lambda: overlay.query_one("OptionList").option_count == 1)
        assert app.focused is overlay.query_one("OptionList")
        await pilot.press(*"draft")
        assert composer.text == "draft" and app.focused is composer
        await pilot.press("tab")  # back to the list
        assert app.focused is overlay.query_one("OptionList")
        app.post_message(events.Paste(" and\npasted"))  # as the terminal sends a paste
        await until(pilot, lambda: composer.text == "draft and\npasted")
        assert app.focused is composer
        await pilot.press("escape")
        await until(pilot, lambda: app.overlay is None)
        assert composer.text == "draft and\npasted"  # Esc closed the overlay, nothing else
        await pilot.press("escape")  # no overlay: Esc changes nothing
        assert composer.text == "draft and\npasted" and app.focused is composer

    run(app, scenario)
    assert operator_texts(agent) == []


def test_page_keys_scroll_the_conversation_and_a_click_leaves_the_composer_focused(agent, script):
    reply = "\n".join(f"line{i}" for i in range(80))
    app = ConsoleApp(agent, model=script({"text": reply}))

    async def scenario(pilot):
        chat = app.chat
        at_end = lambda: chat.scroll_y == chat.max_scroll_y > 0  # noqa: E731
        await submit(pilot, "long")
        await until(pilot, lambda: "line79" in shown(app) and not app.working())
        await until(pilot, at_end)
        await pilot.click("#conversation")
        assert app.focused is app.composer
        await pilot.press("pageup")
        await until(pilot, lambda: 0 < chat.scroll_y < chat.max_scroll_y)
        back_at = chat.scroll_y
        app.say("a notice")  # a new row leaves the user where they scrolled back to
        assert await chat.wait_for_refresh()  # the scroll a write asks for would have happened
        await pilot.pause()
        assert chat.scroll_y == back_at < chat.max_scroll_y
        await pilot.press("pagedown", "pagedown")
        await until(pilot, at_end)
        await pilot.press("f1")  # a smaller conversation still shows its last line
        await until(pilot, lambda: app.overlay and chat.size.height < 20 and at_end())
        app.say("another notice")
        await until(pilot, lambda: "another notice" in shown(app) and at_end())

    run(app, scenario)


def test_help_opens_at_its_beginning_and_the_transcript_at_its_end(agent, script):
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        await submit(pilot, "a turn, for the events to be many")
        await until(pilot, lambda: "x" in shown(app).splitlines() and not app.working())
        for key, at in (("f1", "top"), ("f8", "end")):
            await pilot.press(key)
            overlay = await until(pilot, lambda: app.overlay)
            await until(pilot, lambda o=overlay: "loading" not in _overlay_text(o))
            log = overlay.query_one(RichLog)
            assert await log.wait_for_refresh()  # a scroll asked for by the write is done
            await until(pilot, lambda log=log: log.max_scroll_y > 0)  # more than fits
            assert log.scroll_y == (0 if at == "top" else log.max_scroll_y), key
        assert _overlay_text(app.overlay).startswith("$ holon events a")

    run(app, scenario)


def test_a_console_opened_on_an_existing_conversation_shows_it(agent, script):
    Agent(agent).brief("result", "written before the console opened")
    app = ConsoleApp(agent, model=script({"text": "x"}))

    async def scenario(pilot):
        await until(pilot, lambda: "written before the console opened" in shown(app))

    run(app, scenario)
