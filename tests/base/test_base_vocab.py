"""holon.vocab: the one spelling of priorities, message kinds, statuses and the schema version;
the records' enums and the light paths' tables are made from it, so they cannot drift."""

from __future__ import annotations

from holon import vocab
from holon.agent import admission, envelope
from holon.home import settings, stateview
from holon.model.messages import MessageEnvelope, MessageKind, Priority
from holon.model.records import AgentState, AgentStatus
from holon.store.queue import BANDS, Queue
from holon.tasks import store


def test_the_records_enums_are_the_vocabulary():
    assert [k.value for k in MessageKind] == list(vocab.MESSAGE_KINDS)
    assert [p.value for p in Priority] == list(vocab.PRIORITIES)
    assert [s.value for s in AgentStatus] == list(vocab.AGENT_STATUSES)
    assert all(m.name == m.value for e in (MessageKind, Priority, AgentStatus) for m in e)
    assert MessageEnvelope.model_fields["priority"].default is Priority.normal
    for record in (MessageEnvelope, AgentState):
        assert record.model_fields["schema_version"].default == vocab.SCHEMA_VERSION


def test_enqueue_kinds_and_defaults_are_words_of_the_vocabulary():
    assert set(vocab.ENQUEUE_KINDS) <= set(vocab.MESSAGE_KINDS)
    assert vocab.DEFAULT_PRIORITY in vocab.FOLLOWUP_PRIORITIES
    assert set(vocab.FOLLOWUP_PRIORITIES) == set(vocab.PRIORITIES) - {"interject"}
    assert vocab.TASK_STATUSES == ("running", *store.TERMINAL)
    assert set(settings.LIFECYCLE) <= set(vocab.AGENT_STATUSES)


def test_every_message_kind_has_its_trigger_kind():
    """Admission's table of trigger kinds covers the vocabulary's message kinds, no more."""
    assert list(admission._TRIGGER_KIND) == list(vocab.MESSAGE_KINDS)


def test_a_queue_file_sorts_by_the_vocabularys_priority_order():
    names = [Queue.make_name(p) for p in reversed(vocab.PRIORITIES)]
    assert [BANDS[p] for p in vocab.PRIORITIES] == [0, 1, 2, 3]
    assert sorted(names) == names[::-1]
    assert Queue.make_name("unknown")[0] == str(BANDS["normal"])


def test_the_light_readers_use_the_same_words():
    assert envelope.PRIORITIES is vocab.PRIORITIES
    assert envelope.SCHEMA_VERSION == stateview.SCHEMA_VERSION == vocab.SCHEMA_VERSION
    assert stateview.STATUSES == set(vocab.AGENT_STATUSES)
