"""holon.home.template_skills: a template's skills.json installs local skills through
`holon init --template DIR`, and any bad ref fails init with nothing half-made."""

from __future__ import annotations

import json
import os

import pytest
from scenario_helpers import cli

from holon.home import template_skills
from holon.store.atomic import read_json


@pytest.fixture(autouse=True)
def user(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


def fails(*args, code, kind):
    rc, out, err = cli(*args)
    assert rc == code and err.startswith(f"holon: {kind}: "), (rc, err)
    assert "\nhint: " in err and "Traceback" not in err
    return out, err


def skill(tmp_path, name, files=None):
    d = tmp_path / "src" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\ndescription: {name}\n---\n")
    for rel, text in (files or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def template(tmp_path, doc, raw=None):
    tpl = tmp_path / "tpl"
    tpl.mkdir(exist_ok=True)
    (tpl / "AGENTS.md").write_text("# tpl\n")
    (tpl / "skills.json").write_text(raw if raw is not None else json.dumps(doc))
    return tpl


def nothing_made(tmp_path):
    target = tmp_path / "home"
    assert not target.exists()
    assert not [p for p in tmp_path.iterdir() if ".init-" in p.name]


def test_local_skill_refs_are_installed(tmp_path):
    deploy = skill(tmp_path, "deploy", {"scripts/run.sh": "echo hi\n"})
    os.symlink("scripts/run.sh", deploy / "run")  # a relative link inside the skill: kept
    tpl = template(tmp_path, {"skill_refs": [str(deploy)]})
    (tpl / "skills" / "own").mkdir(parents=True)
    (tpl / "skills" / "own" / "SKILL.md").write_text("own")
    code, _, err = cli("init", str(tmp_path / "home"), "--template", str(tpl))
    assert code == 0, err
    installed = tmp_path / "home" / "skills" / "deploy"
    assert (installed / "SKILL.md").read_text() == "---\ndescription: deploy\n---\n"
    assert (installed / "scripts" / "run.sh").read_text() == "echo hi\n"
    assert os.readlink(installed / "run") == "scripts/run.sh"
    assert (tmp_path / "home" / "skills" / "own" / "SKILL.md").exists()
    assert not (tmp_path / "home" / "skills.json").exists()
    ident = read_json(tmp_path / "home" / ".holon" / "agent.json")
    assert ident["template"]["skill_refs"] == [str(deploy)]
    listed = json.loads(cli("skills", "list", str(tmp_path / "home"), "--json")[1])
    assert [s["name"] for s in listed["skills"]] == ["deploy", "own"]


@pytest.mark.parametrize(
    "case,kind,words",
    [
        ("not_json", "invalid_template_skills", "not valid JSON"),
        ("not_object", "invalid_template_skills", "not a JSON object"),
        ("unknown_field", "invalid_template_skills", "'extra'"),
        ("refs_not_list", "invalid_template_skills", "must be a list"),
        ("ref_not_string", "invalid_template_skills", "non-empty string"),
        ("github", "unsupported_skill_source", "remote skill sources"),
        ("builtin", "invalid_template_skills", "unknown builtin skill 'helper'"),
        ("relative", "invalid_template_skills", "must be an absolute path"),
        ("missing", "invalid_template_skills", "is not a directory"),
        ("no_skill_md", "invalid_template_skills", "has no SKILL.md"),
        ("duplicate", "invalid_template_skills", "named twice"),
        ("clash", "invalid_template_skills", "named twice"),
        ("escaping_link", "invalid_template_skills", "links outside the skill"),
        ("absolute_link", "invalid_template_skills", "links outside the skill"),
    ],
)
def test_bad_skills_json_fails_init_and_leaves_nothing(tmp_path, case, kind, words):
    good = skill(tmp_path, "good")
    other = tmp_path / "other" / "good"
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    raw, doc = None, {"skill_refs": [str(good)]}
    if case == "not_json":
        raw = "{nope"
    elif case == "not_object":
        raw = "[]"
    elif case == "unknown_field":
        doc["extra"] = 1
    elif case == "refs_not_list":
        doc["skill_refs"] = str(good)
    elif case == "ref_not_string":
        doc["skill_refs"] = [{"path": str(good)}]
    elif case == "github":
        doc["skill_refs"].append("https://github.com/o/r/tree/main/skills/x")
    elif case == "builtin":
        doc["skill_refs"].append("builtin:helper")
    elif case == "relative":
        doc["skill_refs"].append("src/good")
    elif case == "missing":
        doc["skill_refs"].append(str(tmp_path / "nope"))
    elif case == "no_skill_md":
        doc["skill_refs"].append(str(empty))
    elif case == "duplicate":
        doc["skill_refs"].append(str(other))
    elif case == "escaping_link":
        os.symlink("../../other", good / "out")
    elif case == "absolute_link":
        os.symlink(str(good / "SKILL.md"), good / "abs")
    tpl = template(tmp_path, doc, raw)
    if case == "clash":
        (tpl / "skills" / "good").mkdir(parents=True)
    _, err = fails("init", str(tmp_path / "home"), "--template", str(tpl), code=2, kind=kind)
    assert words in err, err
    nothing_made(tmp_path)


def test_empty_skills_json_object_is_no_skills(tmp_path):
    tpl = template(tmp_path, {})
    assert template_skills.refs(tpl) == []
    assert template_skills.refs(tmp_path) == []  # no skills.json at all
    assert cli("init", str(tmp_path / "home"), "--template", str(tpl))[0] == 0
    assert list((tmp_path / "home" / "skills").iterdir()) == []
