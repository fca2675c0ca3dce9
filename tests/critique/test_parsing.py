"""The critique reply is read element by element while it streams."""

import json

from critique.parsing import annotations_parse

ONE = {
    "quote": "x",
    "area": "security",
    "kind": "risk",
    "severity": "major",
    "body": "b",
    "tradeoff": "",
    "constraint": "",
    "rank": 1,
}


def test_complete_elements_appear_as_the_reply_grows():
    reply = json.dumps({"annotations": [ONE, {**ONE, "rank": 2}, {**ONE, "kind": "missing"}]})
    seen = []
    for cut in range(len(reply) + 1):
        parsed = annotations_parse(reply[:cut])
        seen.append(len(parsed.items))
        assert seen == sorted(seen)  # never shrinks, positions never shift
    final = annotations_parse(reply)
    assert final.complete and [i.position for i in final.items] == [0, 1, 2]
    assert final.items[2].rank is None  # only risks are ranked


def test_from_a_start_position_and_invalid_elements_keep_their_place():
    reply = json.dumps({"annotations": [ONE, {"area": "nowhere"}, {**ONE, "body": "c"}]})
    parsed = annotations_parse(reply, start=1)
    assert parsed.items[0] is None and parsed.items[1].position == 2


def test_prose_and_fences_around_the_json_and_a_bare_array():
    assert (
        len(annotations_parse("Here:\n```json\n" + json.dumps({"annotations": [ONE]})).items) == 1
    )
    assert annotations_parse("```json\n" + json.dumps([ONE]) + "\n```").complete
    assert not annotations_parse("I cannot do that.").found_array
