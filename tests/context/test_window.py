"""holon.context.window: context windows per model, the request budget, calibration."""

from __future__ import annotations

import pytest

from holon import config
from holon.context import window
from holon.errors import UsageError


def _config(holon_env, text: str) -> None:
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(text)
    config.reset()


def test_estimate_is_utf8_bytes_over_four():
    assert window.estimate("") == 0
    assert window.estimate("abcd") == 1
    assert window.estimate("abcde") == 2
    assert window.estimate("é" * 4) == 2  # 8 bytes


@pytest.mark.parametrize(
    "ref, expected",
    [
        ("anthropic/claude-sonnet-4", 200_000),
        ("openai/gpt-4o-mini", 128_000),
        ("openai/gpt-4.1-mini", 1_047_576),
        ("openai/gpt-4", 8_192),
        ("openai-codex/gpt-5-codex", 400_000),
        ("openai/o3-mini", 200_000),
        ("openrouter/google/gemini-2.5-pro", 1_048_576),
        ("openrouter/openai/gpt-4o", 128_000),
        ("ollama/llama3", window.DEFAULT_WINDOW),
    ],
)
def test_family_table(ref, expected):
    assert window.configured_window(ref) == expected


def test_configured_window_precedence(holon_env, monkeypatch):
    ref = "anthropic/claude-x"
    assert window.configured_window(ref) == 200_000  # the family table
    _config(holon_env, '[models."anthropic/claude-x"]\ncontext_window = 50000\n')
    assert window.configured_window(ref) == 50_000  # config.toml beats the table
    assert window.configured_window("anthropic/claude-y") == 200_000  # only for that ref
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "30000")
    assert window.configured_window(ref) == 30_000  # the environment beats config.toml
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "10")
    assert window.configured_window(ref) == window.MIN_WINDOW
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "  ")
    assert window.configured_window(ref) == 50_000  # blank: not set
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "lots")
    with pytest.raises(UsageError):
        window.configured_window(ref)


def test_configured_window_ignores_bad_config_values(holon_env):
    ref = "custom/model"
    assert window.configured_window(ref) == window.DEFAULT_WINDOW
    for bad in ('"big"', "true", "0", "-5"):
        _config(holon_env, f'[models."custom/model"]\ncontext_window = {bad}\n')
        assert window.configured_window(ref) == window.DEFAULT_WINDOW, bad
    _config(holon_env, '[models."custom/model"]\ncontext_window = 100\n')
    assert window.configured_window(ref) == window.MIN_WINDOW
    _config(holon_env, 'models = "not a table"\n')
    assert window.configured_window(ref) == window.DEFAULT_WINDOW


def test_budget_reserve_prompt_and_cap(monkeypatch):
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "100000")
    b = window.budget_for("x/y", 8192)
    assert (b.window, b.reserve, b.ratio) == (100_000, 8192, 1.0)
    assert b.prompt == int((100_000 - 8192) * window.SAFETY)
    # the reserve is at most a quarter of the window and at least 256
    assert window.budget_for("x/y", 90_000).reserve == 25_000
    assert window.budget_for("x/y", 10).reserve == 256
    # shrinking (a retry after a context-length error) scales the prompt, not the reserve
    shrunk = window.budget_for("x/y", 8192, shrink=0.6)
    assert shrunk.reserve == 8192 and shrunk.prompt == int((100_000 - 8192) * window.SAFETY * 0.6)
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "2000000")
    assert window.budget_for("x/y", 8192).prompt == window.DEFAULT_PROMPT_CAP
    monkeypatch.setenv("HOLON_CONTEXT_MAX_PROMPT_TOKENS", "5000")
    assert window.budget_for("x/y", 8192).prompt == 5000
    monkeypatch.setenv("HOLON_CONTEXT_MAX_PROMPT_TOKENS", "1")
    assert window.prompt_cap() == window.MIN_WINDOW
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "2048")
    monkeypatch.delenv("HOLON_CONTEXT_MAX_PROMPT_TOKENS")
    tiny = window.budget_for("x/y", 8192, shrink=0.01)
    assert tiny.reserve == 512 and tiny.prompt == 512  # never below 512


def test_prompt_cap_from_config(holon_env):
    _config(holon_env, "[context]\nmax_prompt_tokens = 7000\n")
    assert window.prompt_cap() == 7000


def test_learned_window_only_shrinks_and_has_a_floor(monkeypatch):
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "100000")
    assert window.budget_for("x/y", 1000, learned=60_000).window == 60_000
    assert window.budget_for("x/y", 1000, learned=500_000).window == 100_000
    floor = int(100_000 * window.MIN_LEARNED)
    assert window.budget_for("x/y", 1000, learned=10).window == floor
    assert window.budget_for("x/y", 1000, learned=None).window == 100_000
    assert window.budget_for("x/y", 1000, learned=0).window == 100_000


def test_budget_tokens_apply_the_ratio(monkeypatch):
    b = window.budget_for("x/y", 1000, ratio=2.0)
    assert b.ratio == 2.0
    assert b.scaled(window.estimate("a" * 400)) == 200
    assert window.calibrated({"x/y": 2.0}, [("x/y", 100, 100), ("z/w", 100, 300)]) == {
        "x/y": 1.5,
        "z/w": 3.0,
    }
    assert b.scaled(1000) == 2000
    assert window.budget_for("x/y", 1000, ratio=0.5).scaled(1001) == 500


def test_observe_clamps_and_smooths():
    low, high = window.RATIO_BOUNDS
    assert low >= 1.0  # calibration only ever makes estimates more cautious
    assert window.observe(None, 1000, 1500) == 1.5
    assert window.observe(1.5, 1000, 2500) == 2.0  # half the old ratio, half what was seen
    assert window.observe(None, 100, 10_000) == high
    assert window.observe(None, 10_000, 1) == low  # an under-report never shrinks estimates
    assert window.observe(1.5, 1000, 500) == round(0.5 * 1.5 + 0.5 * low, 4)
    assert window.observe(1.0, 100, 10_000) == round(0.5 + 0.5 * high, 4)  # clamped, then averaged
    assert window.observe(1.2, 1000, 0) == 1.2  # no usage reported: unchanged
    assert window.observe(None, 0, 500) is None
    assert window.observe(None, 3000, 4000) == 1.3333  # rounded


def test_a_learned_window_is_probed_back_up_to_the_configured_one(monkeypatch):
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "100000")
    ok = ("x/y", 1000, 1100)  # one successful request on the model
    learned, streak = {"x/y": 40_000, "z/w": 9_000}, {}
    learned, streak = window.probed(learned, streak, [ok] * (window.PROBE_REQUESTS - 1))
    assert learned == {"x/y": 40_000, "z/w": 9_000}  # not yet: too few successes
    assert streak == {"x/y": window.PROBE_REQUESTS - 1}
    learned, streak = window.probed(learned, streak, [ok])
    assert learned["x/y"] == int(40_000 * window.PROBE_GROWTH) and streak == {}
    assert learned["z/w"] == 9_000  # only the model that succeeded
    seen = [learned["x/y"]]
    for _ in range(20):
        learned, streak = window.probed(learned, streak, [ok] * window.PROBE_REQUESTS)
        if "x/y" not in learned:
            break
        seen.append(learned["x/y"])
    assert "x/y" not in learned  # back at the configured window: forgotten
    assert all(w < 100_000 for w in seen) and seen == sorted(seen)
    # a model with no learned window is left alone
    assert window.probed({}, {}, [ok] * 30) == ({}, {})
