"""`holon models` through the real entry point: the built-in window table and config.toml's
models, and with --provider what a provider's models endpoint lists (a loopback server here)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from helpers import run, subprocess_env

from holon.cli.models import models_cmd
from holon.ops import models


@pytest.fixture
def endpoint():
    """A loopback /v1/models; records the Authorization header of each request."""
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            seen.append(self.headers.get("Authorization"))
            body = json.dumps({"data": [{"id": "gpt-5-mini"}, {"id": "local-7b"}]}).encode()
            code = 200 if self.path == "/v1/models" else 404
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", seen
    server.shutdown()
    server.server_close()


def _config(holon_env, base_url: str) -> None:
    holon_env.mkdir(exist_ok=True)
    (holon_env / "config.toml").write_text(
        f'[providers.local]\ntransport = "openai_chat_completions"\nbase_url = "{base_url}"\n'
        'api_key_env = "LOCAL_KEY"\n[models."local/local-7b"]\ncontext_window = 8192\n'
    )


def test_the_table_lists_families_and_configured_models(holon_env):
    _config(holon_env, "http://127.0.0.1:9/v1")
    r = run("models")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "FAMILY" and any(
        ln.split() == ["claude", "200000"] for ln in lines
    )
    assert lines[-1].split() == ["local/local-7b", "8192", "(config.toml)"]
    assert models_cmd.name == "models"
    doc = json.loads(run("models", "--json").stdout)
    assert len(doc["families"]) == len(models.table()["families"])


def test_a_providers_endpoint_lists_its_models(holon_env, endpoint):
    url, seen = endpoint
    _config(holon_env, url)
    env = subprocess_env(LOCAL_KEY="sk-local", NO_PROXY="*", no_proxy="*")
    r = run("models", "--provider", "local", env=env)
    assert r.returncode == 0, r.stderr
    assert [ln.split() for ln in r.stdout.splitlines()] == [
        ["local/gpt-5-mini", "400000"],
        ["local/local-7b", "8192"],
    ]
    assert seen == ["Bearer sk-local"]


def test_a_provider_without_its_key_or_endpoint_is_an_error(holon_env, endpoint):
    url, seen = endpoint
    _config(holon_env, url)
    r = run("models", "--provider", "local", env=subprocess_env(NO_PROXY="*"))
    assert r.returncode == 2 and r.stderr.startswith("holon: missing_credentials: ")
    r = run("models", "--provider", "scripted")
    assert r.returncode == 2 and r.stderr.startswith("holon: no_models_endpoint: ")
    r = run("models", "--provider", "nosuch")
    assert r.returncode == 2 and r.stderr.startswith("holon: unknown_provider: ")
    assert seen == []
