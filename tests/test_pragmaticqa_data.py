"""PragmatiCQA reader (every quirk of the release, counted), examples, carved splits and the data module, on
invented fixtures in the released format (tests/fixtures/pragmaticqa/); the real train split in
../shared/samples/pragmaticqa/ is read too when it is there."""

import json

import pytest
from conftest import PRAGMATICQA_FIXTURE, SAMPLES, needs_samples

from pragexp.data.common.splits import carve_groups
from pragexp.data.pragmaticqa.answer_format import TAGS, format_answer, parse_answer, well_formed
from pragexp.data.pragmaticqa.examples import qa_examples, question_type
from pragexp.data.pragmaticqa.io import read_conversations
from pragexp.prompting.reader_text import ReaderText
from pragexp.utils.errors import DataFormatError

TRAIN = PRAGMATICQA_FIXTURE / "train.jsonl"


def test_fixture_quirks_are_read_and_counted():
    conversations, report = read_conversations(TRAIN)
    assert report.conversations == 6 and report.qas == 21 and len(conversations) == 6
    counts = report.as_dict()
    assert counts["keys_named_startId_endId"] == 2  # startId/endId spans read like startKey/endKey
    assert counts["canned_key_spans"] == 4  # "Yes", "No", "I don't know" with key 0
    assert counts["null_key_spans"] == 1 and counts["odd_key_spans"] == 1
    assert counts["odd_key_values"] == {"Background": 2}  # its start and end key
    assert counts["scraper_failure_spans_dropped"] == 1
    assert counts["human_eval_null"] == 2 and counts["human_eval_missing"] == 1
    keeper = conversations[0].qas[2]  # the startId/endId turn
    assert keeper.literal[0].start_key and keeper.literal[0].start_key == keeper.literal[0].end_key
    assert keeper.human_eval is None
    up = conversations[0].qas[3]
    assert up.literal[0].text == "Yes" and up.literal[0].canned and up.literal[0].keys == ()
    died = conversations[1].qas[2]
    assert all("Cannot GET" not in s.text for s in died.pragmatic) and len(died.pragmatic) == 1
    assert conversations[0].qas[0].human_eval == (1, 2, 1, 1, 2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"topic": "T", "genre": "G", "community": "C", "qas": [', "not valid JSON"),
        ('{"topic": "T", "genre": "G", "qas": []}', "field 'community'"),
        (
            '{"topic": "T", "genre": "G", "community": "C", "qas": [{"q": "?", "a": "!"}]}',
            "qas[0], field 'a_meta'",
        ),
        (
            '{"topic": "T", "genre": "G", "community": "C", "qas": [{"q": 3, "a": "!", "a_meta": {}}]}',
            "qas[0], field 'q'",
        ),
        (
            '{"topic": "T", "genre": "G", "community": "C", "qas": [{"q": "?", "a": "!", "a_meta": '
            '{"literal_obj": [{"text": "x"}], "pragmatic_obj": []}}]}',
            "a_meta.literal_obj[0], field 'startKey'",
        ),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, line, message):
    good = TRAIN.read_text(encoding="utf-8").splitlines()[:2]
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join([*good, line, good[0]]) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"train\.jsonl:3") as err:
        read_conversations(path)
    assert message in str(err.value)


def test_examples_carry_the_history_newest_first_and_the_question_type():
    conversations, _ = read_conversations(TRAIN)
    examples = qa_examples(conversations)
    assert len(examples) == 21
    third = examples[2]
    assert third.turn == 2 and len(third.history) == 2 and third.question == "Who was the first keeper?"
    query = third.query()
    # The question comes first, then the earlier turns newest first: cutting from the right drops the oldest.
    assert query.startswith("question: Who was the first keeper? history: How tall is the tower?")
    assert query.index("How tall") < query.index("What is Harbor Light?")
    assert examples[0].query() == "question: What is Harbor Light?"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("how old is snoop dogg?", "how"),
        ("I see.. has he ever been incarcerated?", "other"),  # not one of Appendix D's auxiliaries
        ("Can you tell me about the cast?", "other"),
        ("Would he do it again?", "do"),  # the first of the seven, wherever it stands
        ("So what's the name of it?", "what"),
        ("Tell me about Ada Morrow", "other"),
        ("Did she ever save anyone?", "did"),
        ("Are there sequels, and who wrote them?", "who"),  # a wh-word wins over an auxiliary
    ],
)
def test_question_types_follow_appendix_d(question, kind):
    assert question_type(question) == kind


def test_topics_are_carved_whole():
    topics = ["a"] * 5 + ["b"] * 3 + ["c"] * 4 + ["d"] * 2 + ["e"] * 6
    parts = carve_groups(topics, {"val": 0.2, "test": 0.2}, seed=3)
    assert sorted(i for p in parts.values() for i in p) == list(range(len(topics)))
    by_part = {name: {topics[i] for i in rows} for name, rows in parts.items()}
    assert not (by_part["val"] & by_part["test"]) and not (
        by_part["train"] & (by_part["val"] | by_part["test"])
    )
    assert all(len(rows) >= 0.2 * len(topics) for name, rows in parts.items() if name != "train")
    assert carve_groups(topics, {"val": 0.2, "test": 0.2}, seed=3) == parts  # seeded
    with pytest.raises(ValueError, match="cannot carve 3 parts out of 2"):
        carve_groups(["a", "b"], {"val": 0.5, "test": 0.2}, seed=0)


def test_answer_format_round_trips_and_tolerates_missing_tags():
    text = format_answer(["Age 46"], ["born 1971", "in Long Beach"], "He is 46.")
    assert text == "Age 46 </lit> born 1971 </prag> in Long Beach </prag> He is 46."
    parsed = parse_answer(text)
    assert parsed.literal == ("Age 46",) and parsed.pragmatic == ("born 1971", "in Long Beach")
    assert parsed.answer == "He is 46."
    assert parse_answer("Age 46 </lit> He is 46.").pragmatic == ()  # no </prag>
    assert parse_answer("born 1971 </prag> fine").literal == ()  # no </lit>
    untagged = parse_answer("just an answer")
    assert untagged.literal == untagged.pragmatic == () and untagged.answer == "just an answer"
    assert parse_answer(format_answer(["a </lit> b"], [], "c")).literal == ("a b",)  # a tag inside a span


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Age 46 </lit> born 1971 </prag> in Long Beach </prag> He is 46.", True),
        ("Age 46 </lit> He is 46.", True),  # no pragmatic span, as some gold targets
        ("Age 46 </lit> 1971 </lit> He is 46.", True),
        ("He is 46.", False),  # no tag
        ("born 1971 </prag> He is 46.", False),  # no literal span
        ("Age 46 </lit>", False),  # no answer
        ("Age 46 </lit> </prag> He is 46.", False),  # an empty span
        # a reader looping to the token limit: read by parse_answer, but a literal span after a pragmatic one
        ("Enzo Ferrari </lit> 1929 </prag> 240 </lit> 1929 </prag> 240 </", False),
    ],
)
def test_well_formed_is_the_target_order(text, expected):
    assert well_formed(text) is expected
    assert well_formed(format_answer(["a"], ["b"], "c"))


def test_data_module_splits_corpus_and_report(make_config, tmp_path):
    from hydra.utils import instantiate

    cfg = make_config(["task=pragmaticqa", "model=fid"])
    dm = instantiate(cfg.data)
    dm.prepare_data()
    dm.setup("fit")
    assert {s: len(e) for s, e in dm.examples.items()} == {"train": 21, "val": 6, "test": 7}
    report = json.loads((tmp_path / "run" / "data_report.json").read_text())
    assert report["splits"] == "released" and report["corpus"]["corpus"] == "sources"
    assert report["topics_in_more_than_one_split"] == []
    assert report["split_sizes"]["test"] == {
        **report["split_sizes"]["test"],
        "conversations": 2,
        "qas": 7,
        "topics": 1,
    }
    # The one span whose key is in no page is counted, not fatal.
    assert report["span_keys_not_in_corpus"] == 1
    # Communities find their folders by name, River Ferries by its topic (Old Ferry).
    assert report["community_folders"] == {"matched_by": {"community": 4, "topic": 1}, "without_a_folder": []}
    ferry = dm.examples["test"][0]
    assert ferry.community == "River Ferries" and dm.search_group(ferry) == "Old Ferry"
    # Canned answers are gold text but not evidence: "Is the diary online?" has a pragmatic passage only.
    diary = next(i for i, e in enumerate(dm.examples["train"]) if e.question == "Is the diary online?")
    assert len(dm.gold["train"][diary]) == 1
    # The reader's tokenizer knows the tags, and a target decodes back to its spans.
    text = dm.reader_text
    tok = text.tokenizer
    assert tok.token_to_id("</lit>") is not None and tok.token_to_id("</prag>") is not None
    batch = dm.collate_fn()(dm.datasets["train"][:3])
    assert batch["labels"].shape[0] == 3 and batch["query"]["input_ids"].shape[0] == 3
    ids = [i for i in batch["labels"][0].tolist() if i != -100]
    assert ids[-1] == text.special_ids["eos"]
    parsed = dm.parse_answer(text.decode(ids))
    assert parsed.literal == ("harbor light is a stone lighthouse on the north cape of gull island.",)
    passages = [[(p.title, p.text) for p in dm.index.passages[a:b]] for a, b in ((0, 2), (2, 4), (4, 5))]
    inputs = text.inputs([e.query() for e in dm.batch_examples(batch)], [*passages[:2], [*passages[2], None]])
    assert inputs["input_ids"].shape[:2] == (3, 2) and inputs["input_ids"].shape[2] <= 96


def test_carved_splits_keep_topics_apart_and_say_so(make_config, tmp_path):
    from hydra.utils import instantiate

    only_train = tmp_path / "data"
    only_train.mkdir()
    (only_train / "train.jsonl").write_text(TRAIN.read_text(encoding="utf-8"), encoding="utf-8")
    cfg = make_config(
        [
            "task=pragmaticqa",
            "model=oracle",
            f"data.path={only_train}",
            "data.splits=carved",
            "data.corpus=spans",
        ]
    )
    dm = instantiate(cfg.data)
    dm.setup("fit")
    topics = {s: {e.topic for e in dm.examples[s]} for s in ("train", "val", "test")}
    assert (
        all(topics.values())
        and not (topics["train"] & topics["val"])
        and not (topics["val"] & topics["test"])
    )
    assert sum(len(e) for e in dm.examples.values()) == 21
    report = json.loads((tmp_path / "run" / "data_report.json").read_text())
    assert report["splits"] == "carved" and "carved out of" in report["note"]
    assert report["corpus"]["corpus"] == "spans" and "offline fallback" in report["corpus"]["note"]
    assert dm.describe("val", 0)["split"] == "val (carved from train)"


@needs_samples
def test_the_released_train_split_reads_with_its_quirks_counted():
    conversations, report = read_conversations(SAMPLES / "pragmaticqa" / "train.jsonl")
    counts = report.as_dict()
    assert (report.conversations, report.qas) == (476, 3722)
    assert counts["keys_named_startId_endId"] > 0 and counts["canned_key_spans"] > 800
    assert 40 < counts["null_key_spans"] < 120 and counts["scraper_failure_spans_dropped"] > 0
    assert counts["human_eval_missing"] > 150
    assert len({c.topic for c in conversations}) == 35


def test_a_community_shared_between_splits_is_warned_about_and_reported(make_config, tmp_path, caplog):
    """The release shares Hamilton the Musical and Wizard of Oz between train and val: their pages serve
    both splits, so the data module says so (topics stay apart)."""
    from hydra.utils import instantiate

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text(TRAIN.read_text(encoding="utf-8"), encoding="utf-8")
    val = [json.loads(line) for line in (PRAGMATICQA_FIXTURE / "val.jsonl").read_text().splitlines()]
    for conversation in val:
        conversation["community"] = "Lighthouse Keepers"  # a train community, another topic
    (data / "val.jsonl").write_text("".join(json.dumps(c) + "\n" for c in val), encoding="utf-8")
    cfg = make_config(["task=pragmaticqa", "model=oracle", f"data.path={data}", "data.corpus=spans"])
    dm = instantiate(cfg.data)
    with caplog.at_level("WARNING"):
        dm.setup("fit")
    report = json.loads((tmp_path / "run" / "data_report.json").read_text())
    assert report["communities_in_more_than_one_split"] == ["Lighthouse Keepers (train, val)"]
    assert report["topics_in_more_than_one_split"] == []
    assert "communitys" not in caplog.text and "Lighthouse Keepers (train, val)" in caplog.text


def test_fid_input_reads_question_then_passage_with_a_space_under_byte_level_bpe(make_config):
    """BART's byte-level BPE glues a word to what precedes it: without a space between the question and the
    passage part, "NYC.title:" would encode "title" in pieces no input of pretraining ever had."""
    from hydra.utils import instantiate
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    texts = [
        f"question: where is it? title: {t} context: it is in NYC." for t in ("Harbor", "Ferry", "Kite")
    ] * 20
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<s>", "<pad>", "</s>", "</lit>", "</prag>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    bpe.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    cfg = make_config(["task=pragmaticqa", "model=oracle", "data.corpus=spans"])
    dm = instantiate(cfg.data)
    dm.setup("test")
    passage = dm.index.passages[0]
    inputs = ReaderText(bpe, TAGS).inputs(
        ["question: where is it in NYC."], [[(passage.title, passage.text)]]
    )
    ids = inputs["input_ids"][0, 0][inputs["attention_mask"][0, 0].bool()].tolist()
    tokens = [bpe.id_to_token(i) for i in ids]
    title = bpe.token_to_id("Ġtitle")
    assert title is not None and title in ids  # the word as it reads after a space, one token
    assert bpe.decode(ids).startswith(f"question: where is it in NYC. title: {passage.title} context:")
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"


def test_a_hub_retriever_offline_names_the_retriever_setting(make_config):
    """Past the start-up check (a cached hub id, say, or a script building the data module itself), the
    loader's own error names the setting that fixes it: retriever=minilm, not the reader's."""
    from hydra.utils import instantiate

    dpr = [
        f"retriever.{side}_encoder=facebook/dpr-{side}_encoder-single-nq-base"
        for side in ("query", "passage")
    ]
    cfg = make_config(["task=pragmaticqa", "model=oracle", "retriever=dpr", *dpr, "data.corpus=spans"])
    with pytest.raises(OSError, match=r"offline, use retriever=minilm") as err:
        instantiate(cfg.data).setup("test")
    assert "model.pretrained" not in str(err.value)
