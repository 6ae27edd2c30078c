"""The built-in tool catalog: model-facing name -> "module:Class" (a module is imported only when
used)."""

BUILTINS: dict[str, str] = {
    "ApplyPatch": "holon.tools.apply_patch:ApplyPatch",
    "ExecCommand": "holon.tools.exec_command:ExecCommand",
    "ExecCommandBatch": "holon.tools.exec_batch:ExecCommandBatch",
    "TaskStatus": "holon.tools.task_tools:TaskStatus",
    "TaskOutput": "holon.tools.task_tools:TaskOutput",
    "TaskInput": "holon.tools.task_tools:TaskInput",
    "TaskStop": "holon.tools.task_tools:TaskStop",
    "TaskList": "holon.tools.task_tools:TaskList",
    "CreateWorkItem": "holon.tools.work:CreateWorkItem",
    "PickWorkItem": "holon.tools.work:PickWorkItem",
    "UpdateWorkItem": "holon.tools.work:UpdateWorkItem",
    "CompleteWorkItem": "holon.tools.work:CompleteWorkItem",
    "GetWorkItem": "holon.tools.work:GetWorkItem",
    "ListWorkItems": "holon.tools.work:ListWorkItems",
    "MemorySearch": "holon.tools.memory:MemorySearch",
    "MemoryGet": "holon.tools.memory:MemoryGet",
    "Sleep": "holon.tools.lifecycle:Sleep",
    "Enqueue": "holon.tools.lifecycle:Enqueue",
    "NotifyOperator": "holon.tools.lifecycle:NotifyOperator",
    "SpawnAgent": "holon.tools.agents:SpawnAgent",
    "AgentGet": "holon.tools.agents:AgentGet",
    "UseWorkspace": "holon.tools.workspace:UseWorkspace",
    "DetachWorkspace": "holon.tools.workspace:DetachWorkspace",
}
