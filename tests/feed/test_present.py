"""The presentation layer: every audit event maps to one operator record; the mapping of each
kind is a golden file (golden/feed/events.jsonl in, golden/feed/records.txt out); display levels
show a prefix of the visibility order."""

from __future__ import annotations

import json

from golden_check import GOLDEN, check_golden

from holon.feed.present import LEVELS, VISIBILITIES, line, present, scalar_fields, shown

RECORD_KEYS = {
    "schema_version",
    "agent_id",
    "event_id",
    "event_seq",
    "at",
    "visibility",
    "category",
    "title",
    "summary",
    "source_event_kind",
    "provenance",
}


def corpus() -> list[dict]:
    text = (GOLDEN / "feed" / "events.jsonl").read_text(encoding="utf-8")
    return [json.loads(x) for x in text.splitlines()]


def test_each_event_kind_is_presented_as_the_golden_file_says():
    out = []
    for event in corpus():
        record = present(event)
        out.append(line(record))
        out.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
    check_golden("feed/records.txt", "\n".join(out) + "\n")


def test_every_event_is_one_record_with_the_contract_fields():
    for event in corpus():
        record = present(event)
        assert RECORD_KEYS <= set(record) <= RECORD_KEYS | {"body"}
        assert record["visibility"] in VISIBILITIES
        assert record["event_seq"] == event["event_seq"]
        assert record["source_event_kind"] == event["kind"]
        assert "\n" not in record["summary"] and len(record["summary"]) <= 200


def test_a_brief_carries_its_visibility_text_and_provenance():
    [event] = [e for e in corpus() if e["data"].get("brief_id") == "brf_1"]
    record = present(event)
    assert record["visibility"] == "action_required"
    assert record["summary"] == "Need approval to deploy to prod. Reply 'yes' to go ahead."
    assert record["body"] == event["data"]["text"]
    assert record["provenance"] == {
        "message_id": "msg_1",
        "work_item_id": "wi_1",
        "turn_id": "turn_1",
    }


def test_an_admitted_message_carries_its_origin_and_authority():
    prov = present(corpus()[0])["provenance"]
    assert prov["trust"] == "trusted_operator" and prov["correlation_id"] == "cor_1"
    assert prov["delivery_surface"] == "cli_prompt" and "causation_id" not in prov


def test_a_malformed_event_is_still_one_trace_record():
    record = present({"kind": None, "data": "not a dict", "event_seq": 3})
    assert record["visibility"] == "trace" and record["source_event_kind"] == "unknown"


def test_levels_show_a_prefix_of_the_visibility_order():
    records = [present(e) for e in corpus()]
    seen = {lv: {r["visibility"] for r in records if shown(r, lv)} for lv in LEVELS}
    assert seen["info"] == {"action_required", "work_done", "turn_result"}
    assert seen["verbose"] == seen["info"] | {"progress", "trace"}  # the curated tool rows
    assert {
        r["category"] for r in records if shown(r, "verbose") and r["visibility"] == "trace"
    } == {"tool"}
    assert len([r for r in records if shown(r, "debug")]) == len(records)


def test_scalar_fields_leave_out_structures_and_errors():
    assert scalar_fields({"a": 1, "b": "x", "c": [1], "error": "e"}) == "a=1, b=x"
