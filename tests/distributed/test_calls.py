"""What a task carries: every engine call, answer and error comes back as it went."""

from __future__ import annotations

import numpy as np
import pytest

from compendium.distributed.calls import (
    EMBED,
    decode_error,
    decode_reply,
    decode_request,
    encode_error,
    encode_reply,
    encode_request,
)
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.tasks import (
    ChunkInput,
    DescriptionRequest,
    EntitySketch,
    EvidenceItem,
    ExtractionBatch,
    ExtractionReply,
    LinkTarget,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicReply,
    TopicRequest,
)
from compendium.errors import BudgetExceeded, ConfigError, EngineUnavailable, LabelError, ReplyError
from compendium.settings import load_settings

SKETCH = EntitySketch("Write-ahead log", "component", "Records changes first.", ["WAL"], ["The WAL is fsynced."])
REQUESTS = {
    "extract": ExtractionBatch([ChunkInput("c1", "Lumen writes a WAL.\n\n| a | b |", ["Guide", "Storage"], "Lumen DB",
                                           [["paragraph", 0, 19], ["table", 21, 30]])]),
    "judge_pairs": [PairQuestion("p1", SKETCH, EntitySketch("WAL", "component"), 0.9123456789)],
    "summarize": DescriptionRequest("Lumen", "product", ["A database.", "An embedded store — fast."], 300),
    "judge_matches": [MatchQuestion("q1", SKETCH, "Write-ahead log", "How changes are kept.", 0.87)],
    "name_topic": TopicRequest([SKETCH], ["The WAL is fsynced."], [("Storage", 3), ("Recovery", 1)], ["Indexes"]),
    "write_page": PageRequest(
        "write-ahead-log", "Write-ahead log", "entity", "Records changes first.", ["WAL"],
        [EvidenceItem(1, "The WAL is fsynced.", "k1", "Guide", ["Storage"], 2, ["lumen"], "claim")],
        [LinkTarget("lumen", "Lumen")], "# Old page\n", ["k9"], 900, [1],
    ),
}
REQUESTS["update_pages"] = [REQUESTS["write_page"]]
REPLIES = {
    "extract": ExtractionReply.model_validate({
        "entities": [{"chunk": "c1", "name": "Lumen", "type": "product", "description": "A DB", "aliases": ["LDB"]}],
        "concepts": [{"chunk": "c1", "term": "write-ahead log", "definition": "changes first"}],
        "claims": [{"chunk": "c1", "text": "Lumen writes a WAL.", "entities": ["Lumen"]}],
        "relations": [{"chunk": "c1", "source": "Lumen", "target": "write-ahead log", "type": "uses",
                       "description": "", "strength": 0.1 + 0.2}],
        "topics": [{"chunk": "c1", "name": "Storage"}],
    }),
    "judge_pairs": {"p1": True, "p2": False},
    "summarize": "A database — embedded, “fast”.",
    "judge_matches": {"q1": False},
    "name_topic": TopicReply(title="Storage", summary="How data is kept."),
    "write_page": "# Write-ahead log\n\nThe WAL is fsynced.[^1]\n",
    "update_pages": {"write-ahead-log": "## Durability\n\nThe WAL is fsynced.[^1]"},
}


@pytest.mark.parametrize("method", sorted(REQUESTS))
def test_a_request_and_its_answer_arrive_as_they_were_sent(method: str):
    assert decode_request(method, encode_request(method, REQUESTS[method])) == REQUESTS[method]
    assert decode_reply(method, encode_reply(method, REPLIES[method])) == REPLIES[method]


def test_vectors_arrive_bit_for_bit():
    vectors = OfflineEmbedder(dimensions=64).embed_sync(["write-ahead log", "Lumen", ""])
    back = decode_reply(EMBED, encode_reply(EMBED, vectors))
    assert back.dtype == np.float32 and back.shape == vectors.shape
    assert back.tobytes() == vectors.astype(np.float32).tobytes()
    assert decode_request(EMBED, encode_request(EMBED, ("a", "b"))) == ["a", "b"]


def test_an_unknown_call_is_refused_by_name():
    with pytest.raises(ConfigError, match="unknown engine call 'delete_everything'"):
        decode_request("delete_everything", {})


def test_a_workers_error_is_raised_again_as_itself_naming_the_worker():
    label = LabelError("7 of the 9 items name no chunk", items=9, unknown=7, hint="the model does not cite chunk labels")
    back = decode_error(encode_error(label), "w2@host")
    assert type(back) is LabelError and (back.items, back.unknown) == (9, 7)
    assert back.hint == label.hint and "w2@host" in str(back)

    reply = ReplyError("not JSON", hint="try a stronger model")
    reply.problem = "Expecting value: line 1"
    back = decode_error(encode_error(reply), "w1")
    assert type(back) is ReplyError and back.problem == reply.problem
    for exc in (BudgetExceeded("budget of 10 reached"), EngineUnavailable("401 from the endpoint")):
        assert type(decode_error(encode_error(exc), "w1")) is type(exc)


def test_the_broker_comes_from_the_environment_or_the_workspace(tmp_path):
    assert load_settings(None, env={}).distributed.broker == ""  # the embedded default: no broker
    settings = load_settings(None, env={"COMPENDIUM_BROKER": "redis://10.0.0.5:6379/2",
                                        "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": "30"})
    assert settings.distributed.broker == "redis://10.0.0.5:6379/2" and settings.distributed.visibility_timeout == 30
    (tmp_path / "compendium.yaml").write_text("distributed:\n  broker: amqp://rabbit\n")
    with pytest.raises(ConfigError, match=r"distributed\.broker"):
        load_settings(tmp_path, env={})
