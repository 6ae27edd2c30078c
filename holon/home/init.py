"""`holon init`: materialise an agent home from a template, all or nothing."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from holon import clock, config
from holon.errors import AlreadyExists, UsageError
from holon.home import migrate, registry, settings, template_seed, template_skills
from holon.home.layout import GITATTRIBUTES, GITIGNORE, HOME_FORMAT, Home, is_home
from holon.model.records import AgentIdentity, AgentState
from holon.paths import agents_dir
from holon.store import crashpoint
from holon.store.atomic import DIR_MODE, fsync_dir, make_private_dir, write_json, write_text

BUILTIN_TEMPLATES = template_seed.BUILTIN_TEMPLATES
DEFAULT_AGENT_ID = "main"  # the default agent: it alone also sees the user's skills
DEFAULT_DAILY_TOKENS = 2_000_000  # a new agent's daily budget, see default_daily_tokens


def default_daily_tokens() -> int:
    """The daily token budget a new agent starts with (`runtime.default_daily_tokens`,
    HOLON_DEFAULT_DAILY_TOKENS; 0 for none): an agent left alone stops spending at it."""
    return max(
        0,
        config.env_int(
            "HOLON_DEFAULT_DAILY_TOKENS", "runtime.default_daily_tokens", DEFAULT_DAILY_TOKENS
        ),
    )


def resolve_template(template: str) -> tuple[Path, dict]:
    """A template id resolves from `~/.agents/templates/<id>/` (holon.home.template_seed seeds
    the built-in ones there); a seeded copy still as holon wrote it is the built-in one."""
    builtin = BUILTIN_TEMPLATES / template
    user = Path.home() / ".agents" / "templates" / template
    if "/" not in template and builtin.is_dir():
        if not user.is_dir() or template_seed.unmodified(user):
            return builtin, {"source": "builtin", "template_id": template}
    if template.startswith(("http://", "https://")):
        raise UsageError(
            f"remote templates are not supported: {template}",
            kind="unsupported_template_source",
            hint="clone the template and pass its local directory to --template",
        )
    if "/" not in template:
        if user.is_dir():
            return _checked(user), {
                "source": "user",
                "template_id": template,
                "path": os.fspath(user),
            }
        names = ", ".join(sorted(p.name for p in BUILTIN_TEMPLATES.iterdir() if p.is_dir()))
        raise UsageError(
            f"unknown template {template!r}",
            kind="unknown_template",
            hint=f"use a built-in template ({names}) or a local template directory",
        )
    path = Path(template).expanduser().absolute()
    return _checked(path), {"source": "local", "path": os.fspath(path)}


def _checked(path: Path) -> Path:
    if not (path / "AGENTS.md").is_file():
        raise UsageError(
            f"template {path} has no AGENTS.md",
            kind="invalid_template",
            hint="a template directory must contain AGENTS.md",
        )
    return path


def init_home(
    path: str | None,
    agent_id: str | None,
    template: str = "holon-default",
    *,
    kind: str | None = None,
    visibility: str = "public",
    parent_agent_id: str | None = None,
    model_override: str | None = None,
    lineage: dict | None = None,
) -> Home:
    """`kind`: `default` for the default agent (DEFAULT_AGENT_ID, the one a bare `holon init`
    makes), else `named` unless given; `parent_agent_id`: the agent that created it (lineage; a
    `child` is supervised by it); `model_override`: the model it starts with (a child inherits
    its parent's); `lineage`: the lineage fields of a public agent another agent's turn created
    (holon.agent.lineage.new_public_lineage)."""
    root, agent_id = _new_root(path, agent_id)
    if kind is None:
        kind = "default" if agent_id == DEFAULT_AGENT_ID else "named"
    source, provenance = resolve_template(template)
    if path is None:  # holon's own directories: $HOLON_HOME (when holon makes it) and agents/
        os.makedirs(root.parent.parent, mode=DIR_MODE, exist_ok=True)
        make_private_dir(root.parent)
        ignore_secrets(root.parent.parent)
    root.parent.mkdir(parents=True, exist_ok=True)
    with registry.adding(agent_id, root):  # the due index is told: no full pass for a new home
        _remove_dead_staging(root)
        staging = Path(
            tempfile.mkdtemp(prefix=f".{root.name}.init-{os.getpid()}-", dir=root.parent)
        )
        try:
            materialise(
                staging,
                source,
                agent_id,
                provenance,
                kind,
                visibility,
                parent_agent_id,
                model_override,
                lineage,
            )
            if root.exists():
                root.rmdir()
            crashpoint.step("init.rename")
            os.rename(staging, root)
            fsync_dir(root.parent)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return Home(root, agent_id)


def _new_root(path: str | None, agent_id: str | None) -> tuple[Path, str]:
    """Where the new home goes and its id; refused when the id or the place is taken."""
    if path is None:
        agent_id = registry.check_agent_id(agent_id or DEFAULT_AGENT_ID)
        root = agents_dir() / agent_id
    else:
        root = Path(path).expanduser().absolute()
        agent_id = registry.check_agent_id(agent_id or root.name)
    if agent_id in registry.load() and is_home(registry.load()[agent_id]):
        raise AlreadyExists(
            f"agent {agent_id!r} already exists at {registry.load()[agent_id]}",
            hint="choose another --agent-id, or use the existing agent",
        )
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise AlreadyExists(
            f"{root} already exists and is not empty",
            hint="an existing home is never overwritten; choose a new PATH",
        )
    return root, agent_id


# $HOLON_HOME/.gitignore: a HOLON_HOME kept in git (`git add -A`) never offers the keys, logs,
# locks or indexes; each agent home has its own .gitignore for its runtime files
HOLON_HOME_GITIGNORE = """\
# written by holon: what must stay out of git when $HOLON_HOME is a repository
/keys.json
/keys.json.*
/logs/
/due/
*.lock
.*.tmp*
"""


def ignore_secrets(holon_home: Path) -> bool:
    """Write $HOLON_HOME/.gitignore unless there is one (an operator's own is never replaced);
    whether it was written."""
    target = holon_home / ".gitignore"
    if target.exists():
        return False
    write_text(target, HOLON_HOME_GITIGNORE)
    return True


def _remove_dead_staging(root: Path) -> None:
    """Remove what an init of the same home killed part way left (`.<name>.init-<pid>-*`)."""
    from holon.procs import alive

    prefix = f".{root.name}.init-"
    try:
        entries = list(os.scandir(root.parent))
    except OSError:
        return
    for e in entries:
        pid = e.name[len(prefix) :].split("-", 1)[0]
        if e.name.startswith(prefix) and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(e.path, ignore_errors=True)


def materialise(
    root: Path,
    source: Path,
    agent_id: str,
    provenance: dict,
    kind: str,
    visibility: str,
    parent_agent_id: str | None = None,
    model_override: str | None = None,
    lineage: dict | None = None,
) -> None:
    """Fill the empty directory `root` with a home made from template `source` (no registration)."""
    refs = template_skills.refs(source)  # checked before anything is copied
    shutil.copytree(
        source,
        root,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("skills.json", template_seed.MARK),
    )
    template_skills.install(refs, root / "skills")
    if refs:
        provenance = {**provenance, "skill_refs": [os.fspath(r) for r in refs]}
    for keep in root.rglob(".keep"):
        keep.unlink()
    home = Home(root, agent_id)
    for d in (home.memory, root / "notes", root / "work", home.skills):
        d.mkdir(exist_ok=True)
    for name, text in (("self.md", "# Self\n"), ("operator.md", "# Operator\n")):
        if not (home.memory / name).exists():
            write_text(home.memory / name, text)
    home.ensure_dirs()  # the home and `.holon` owner-only, whatever the template's modes
    write_text(home.gitignore, GITIGNORE)
    write_text(home.gitattributes, GITATTRIBUTES)
    ident = AgentIdentity(
        agent_id=agent_id,
        kind=kind,
        visibility=visibility,
        ownership="parent_supervised" if kind == "child" and parent_agent_id else "self_owned",
        profile_preset="public_named" if visibility == "public" else "private_child",
        lineage_parent_agent_id=parent_agent_id,
        **(lineage or {}),
        created_at=clock.now_iso(),
        template=provenance,
        home_format=HOME_FORMAT,
        migrations=list(migrate.NAMES),
    )
    state = AgentState(id=agent_id, model_override=model_override).model_dump(mode="json")
    state["settings_basis"] = settings.project(state)
    settings.write(home, state["settings_basis"])
    write_json(home.state_json, state)
    record = ident.model_dump(mode="json")
    for key in ("lineage_parent_home", "lineage_root_agent_id", "lineage_depth"):
        if record.get(key) is None:  # an agent no other agent created: no lineage fields
            record.pop(key, None)
    daily = default_daily_tokens()
    if daily and kind != "child":  # a private child spends from its parent's budget
        record["budget"] = {"daily_tokens": daily}  # `holon model budget` overrides it
    write_json(home.agent_json, record)
