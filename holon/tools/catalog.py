"""The built-in tool catalog: model-facing name -> implementing class (imported lazily)."""

from holon.tools.registry import register_builtin

for _name, _target in {
    "CreateWorkItem": "holon.tools.work:CreateWorkItem",
    "PickWorkItem": "holon.tools.work:PickWorkItem",
    "UpdateWorkItem": "holon.tools.work:UpdateWorkItem",
    "CompleteWorkItem": "holon.tools.work:CompleteWorkItem",
    "GetWorkItem": "holon.tools.work:GetWorkItem",
    "ListWorkItems": "holon.tools.work:ListWorkItems",
    "Sleep": "holon.tools.lifecycle:Sleep",
    "Enqueue": "holon.tools.lifecycle:Enqueue",
    "NotifyOperator": "holon.tools.lifecycle:NotifyOperator",
}.items():
    register_builtin(_name, _target)
