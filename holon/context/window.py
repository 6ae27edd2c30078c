"""How many tokens a request may hold: each model's context window, the output reserve, and token
estimates calibrated against what the provider reports.

Estimates are cheap (UTF-8 bytes / 4) and then scaled by a per-model ratio learned from the
provider's `input_tokens` for the previous request, so they track the real tokenizer without
importing one. A context-length error teaches a smaller window for that model; successful
requests probe it back up, a step at a time, to the configured window (`probed`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from holon import config

# Built-in context windows (input + output tokens) for known model families, most specific first.
FAMILY_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("codex", 400_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
)
DEFAULT_WINDOW = 32_768  # an unknown model: assume little
DEFAULT_PROMPT_CAP = 128_000  # the most a prompt may hold by default, however large the window
MIN_WINDOW = 2_048
SAFETY = 0.95  # estimates are estimates: keep 5% of the window free
# calibration only ever makes estimates more cautious: a prompt is never allowed to grow past
# bytes/4 on the word of a usage report (a proxy or a test double may under-report)
RATIO_BOUNDS = (1.0, 3.0)
# a learned window never drops below this share of the configured one
MIN_LEARNED = 0.125
# after this many successful requests on a learned window, try one a step larger; a window that
# overflows again is learned anew and its probing starts over
PROBE_REQUESTS = 10
PROBE_GROWTH = 1.25


def estimate(text: str) -> int:
    """Uncalibrated token estimate of a text: a token is about four UTF-8 bytes."""
    return (len(text.encode("utf-8")) + 3) // 4


def _model_table(model_ref: str) -> dict:
    table = config.get("models", {})
    if not isinstance(table, dict):
        return {}
    entry = table.get(model_ref)
    return entry if isinstance(entry, dict) else {}


def configured_window(model_ref: str) -> int:
    """The model's context window: HOLON_CONTEXT_WINDOW, then `[models."<ref>"] context_window` in
    config.toml, then the built-in family table, then a conservative default."""
    raw = os.environ.get("HOLON_CONTEXT_WINDOW")
    if raw is not None and raw.strip():
        return max(MIN_WINDOW, config.env_int("HOLON_CONTEXT_WINDOW", None, DEFAULT_WINDOW))
    value = _model_table(model_ref).get("context_window")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return max(MIN_WINDOW, value)
    model = model_ref.split("/", 1)[-1].lower()
    for family, window in FAMILY_WINDOWS:
        if model.startswith(family) or f"/{family}" in model or f"-{family}" in model:
            return window
    return DEFAULT_WINDOW


def prompt_cap() -> int:
    """The largest prompt holon sends to any model (cost stays bounded on huge windows)."""
    return max(
        MIN_WINDOW,
        config.env_int(
            "HOLON_CONTEXT_MAX_PROMPT_TOKENS", "context.max_prompt_tokens", DEFAULT_PROMPT_CAP
        ),
    )


@dataclass(frozen=True)
class Budget:
    """Token budget of one request. `prompt` is what the assembled input may hold."""

    model_ref: str
    window: int
    reserve: int
    prompt: int
    ratio: float

    def scaled(self, raw_estimate: int) -> int:
        return int(raw_estimate * self.ratio)


def budget_for(
    model_ref: str,
    max_output_tokens: int,
    *,
    ratio: float = 1.0,
    learned: int | None = None,
    shrink: float = 1.0,
) -> Budget:
    window = configured_window(model_ref)
    if learned:
        window = max(int(window * MIN_LEARNED), min(window, learned))
    reserve = max(256, min(max_output_tokens, window // 4))
    prompt = int((window - reserve) * SAFETY * shrink)
    prompt = max(512, min(prompt, prompt_cap()))
    return Budget(model_ref, window, reserve, prompt, ratio)


def calibrated(ratios: dict[str, float], observed: list[tuple[str, int, int]]) -> dict[str, float]:
    """`ratios` (model ref -> ratio) advanced by (model ref, estimate, provider count) reports."""
    out = dict(ratios)
    for model_ref, estimated, actual in observed:
        ratio = observe(out.get(model_ref), estimated, actual)
        if ratio is not None:
            out[model_ref] = ratio
    return out


def observe(old: float | None, estimated: int, actual: int) -> float | None:
    """The calibration ratio after a request that was estimated at `estimated` tokens and reported
    as `actual`; None when the report says nothing (no usage)."""
    if estimated <= 0 or actual <= 0:
        return old
    seen = min(max(actual / estimated, RATIO_BOUNDS[0]), RATIO_BOUNDS[1])
    if old is None:
        return round(seen, 4)
    return round(0.5 * old + 0.5 * seen, 4)


def probed(
    learned: dict[str, int], streak: dict[str, int], observed: list[tuple[str, int, int]]
) -> tuple[dict[str, int], dict[str, int]]:
    """(learned windows, successful requests since each last changed) after the successful
    requests `observed` (model ref, estimate, provider count). Every PROBE_REQUESTS of them on a
    model with a learned window raise it by PROBE_GROWTH, never above the configured window; one
    that reaches it is forgotten (the configured window applies again)."""
    learned, streak = dict(learned), dict(streak)
    for model_ref, _, _ in observed:
        if model_ref not in learned:
            continue
        streak[model_ref] = streak.get(model_ref, 0) + 1
        if streak[model_ref] < PROBE_REQUESTS:
            continue
        streak.pop(model_ref)
        raised = max(learned[model_ref] + 1, int(learned[model_ref] * PROBE_GROWTH))
        if raised >= configured_window(model_ref):
            learned.pop(model_ref)
        else:
            learned[model_ref] = raised
    return learned, {ref: n for ref, n in streak.items() if ref in learned}
