"""holon.secretenv: the one rule for which variables hold secrets (names that look like
credentials, providers' api_key_env, names in keys.json), and what a caller keeps."""

from __future__ import annotations

import json

from holon import secretenv


def test_scrub_removes_what_looks_secret_what_is_configured_and_what_is_stored(holon_env):
    holon_env.mkdir(exist_ok=True)
    (holon_env / "keys.json").write_text(json.dumps({"keys": {"STORED_NAME": "v"}}))
    (holon_env / "config.toml").write_text('[providers.p]\napi_key_env = "ODDLY_NAMED"\n')
    environ = {"OPENAI_API_KEY": "1", "gh_token": "2", "ODDLY_NAMED": "3", "STORED_NAME": "4"}
    environ |= {"PATH": "/bin", "GITHUB_TOKEN": "5"}
    assert secretenv.scrub(environ) == {"PATH": "/bin"}
    kept = secretenv.scrub(environ, keep=lambda name: name.startswith("GITHUB_"))
    assert kept == {"PATH": "/bin", "GITHUB_TOKEN": "5"}
