"""The built-in tool catalog: model-facing name -> implementing class (imported lazily)."""

from holon.tools.registry import register_builtin

for _name, _target in {
    "ApplyPatch": "holon.tools.apply_patch.tool:ApplyPatch",
}.items():
    register_builtin(_name, _target)
