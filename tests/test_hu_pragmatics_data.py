"""Hu et al. 2022 readers: the prompt files and human answers on invented fixtures in the released formats
(tests/fixtures/hu_pragmatics/), bad input, and the real excerpts when they are there."""

import pytest
from conftest import FIXTURES, SAMPLES, needs_samples

from pragexp.data.hu_pragmatics.datamodule import HuPragmaticsDataModule
from pragexp.data.hu_pragmatics.human import (
    PeopleCorrect,
    human_accuracy,
    human_distribution_in_seed_order,
    read_human_answers,
    read_human_data,
    read_no_story_answers,
)
from pragexp.data.hu_pragmatics.io import find_prompt_files, read_prompt_file, read_prompts
from pragexp.utils.errors import DataFormatError

ROOT = FIXTURES / "hu_pragmatics"
IRONY_SEED0 = ROOT / "prompts" / "Irony_prompts_seed0_examples0.csv"
HUMAN_IRONY = ROOT / "human_data" / "fj" / "Human_Irony.csv"


def copy_with(tmp_path, source, old, new, name=None):
    """A copy of `source` with its first `old` replaced, under the same file name (or `name`)."""
    text = source.read_text(encoding="utf-8")
    assert old in text
    target = tmp_path / (name or source.name)
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


# -- prompt files -------------------------------------------------------------------------------------
def test_files_are_found_by_pattern_not_by_a_list():
    story = find_prompt_files(ROOT)
    assert [(p.name, name, seed) for p, name, seed in story] == [
        ("CoherenceInference_prompts_seed0_examples0.csv", "CoherenceInference", 0),
        ("Irony_prompts_seed0_examples0.csv", "Irony", 0),
        ("Irony_prompts_seed1_examples0.csv", "Irony", 1),
        ("Maxims_prompts_seed0_examples0.csv", "Maxims", 0),
    ]
    no_story = find_prompt_files(ROOT / "prompts", variant="no-story")
    assert [(name, seed) for _, name, seed in no_story] == [("Irony", 0)]
    assert [seed for _, _, seed in find_prompt_files(ROOT, phenomena=["Irony"], seeds=[1])] == [1]


def test_selection_errors_say_what_is_there():
    with pytest.raises(ValueError, match=r"Metaphor.*found: CoherenceInference, Irony, Maxims"):
        find_prompt_files(ROOT, phenomena=["Metaphor"])
    with pytest.raises(ValueError, match=r"Irony \(story\) has no seed \[4\].*found seeds \[0, 1\]"):
        find_prompt_files(ROOT, phenomena=["Irony"], seeds=[0, 4])
    with pytest.raises(ValueError, match="variant"):
        find_prompt_files(ROOT, variant="nostory")
    with pytest.raises(ValueError, match="Maxims"):  # Maxims has no no-story file in the fixture
        find_prompt_files(ROOT, phenomena=["Maxims"], variant="no-story")


def test_prompt_rows_as_released():
    items, report = read_prompts(ROOT, phenomena=["Irony"])
    assert report.files == ["Irony_prompts_seed0_examples0.csv", "Irony_prompts_seed1_examples0.csv"]
    # Seed 1's third row has an empty `content`: the authors' `.dropna()` drops it; we count it.
    assert report.rows_read == 6 and len(items) == 5
    assert report.dropped == [
        {"file": "Irony_prompts_seed1_examples0.csv", "line": 20, "reason": "field 'content' is missing"}
    ]
    first = items[0]
    assert (first.phenomenon, first.variant, first.seed, first.item_id, first.code) == (
        "Irony",
        "story",
        0,
        1,
        "IV",
    )
    assert first.line == 2 and first.source == "Irony_prompts_seed0_examples0.csv"
    # The prompt byte for byte (a scenario with a trailing space, an option with one), and its options.
    assert first.prompt.endswith(
        "\n3) Felix has lost his umbrella.\n4) Nora is not good at making toast. \nAnswer: "
    )
    assert (
        "what the speaker really means" in first.prompt
        and '"You really are a master chef." What' in first.prompt
    )
    assert first.options == (
        "Felix wants to become a chef.",
        "Nora is an excellent cook.",
        "Felix has lost his umbrella.",
        "Nora is not good at making toast.",
    )
    assert first.option_kinds == (
        "IncorrectAssociate",
        "IncorrectLiteral",
        "IncorrectNonSequitur",
        "CorrectNonLiteral",
    )
    assert first.true_index == 3 and first.true_option == "Nora is not good at making toast."
    assert first.option_order == (3, 1, 4, 2) and first.original_kinds[1] == "CorrectNonLiteral"
    assert not first.is_example and report.examples == 0
    # The same item in seed 1 shows the options in the original order.
    again = next(i for i in items if i.seed == 1 and i.item_id == 1)
    assert again.option_order == (1, 2, 3, 4) and again.true_index == 1
    assert again.options[1] == first.options[3]


def test_no_story_variant_coherence_and_maxims():
    items, _ = read_prompts(ROOT, variant="no-story")
    assert [(i.item_id, i.variant) for i in items] == [(1, "no-story"), (2, "no-story")]
    assert "Scenario: Felix says:" in items[0].prompt and "Nora burns" not in items[0].prompt
    (coherent, incoherent), _ = read_prompts(ROOT, phenomena=["CoherenceInference"])
    assert coherent.options == ("Incoherent", "Coherent") and coherent.true_option == "Coherent"
    assert incoherent.options == ("Coherent", "Incoherent") and incoherent.true_option == "Incoherent"
    (maxim,), _ = read_prompt_file(ROOT / "prompts" / "Maxims_prompts_seed0_examples0.csv")
    assert maxim.violated_maxims == ("RelevanceMaxim",) * 4 and maxim.true_index == 1
    assert maxim.options[0] == "Vera wants Paul to bake a cake."


def test_a_missing_column_names_the_file_and_the_column(tmp_path):
    bad = copy_with(tmp_path, IRONY_SEED0, "randomized_true_answer", "true_answer")
    with pytest.raises(DataFormatError) as err:
        read_prompt_file(bad)
    assert f"{bad}:1 " in str(err.value) and "'randomized_true_answer'" in str(err.value)


def test_a_true_answer_out_of_range_names_file_line_and_field(tmp_path):
    labels = (
        "'IncorrectNonSequitur', 'IncorrectLiteral', 'IncorrectAssociate']\""  # item 2 of seed 0, line 11
    )
    bad = copy_with(tmp_path, IRONY_SEED0, labels + ",1,", labels + ",5,")
    with pytest.raises(DataFormatError) as err:
        read_prompt_file(bad)
    message = str(err.value)
    assert f"{bad}:11 " in message and "field 'randomized_true_answer'" in message and "1..4" in message


def test_other_broken_fields_name_their_field(tmp_path):
    cases = {
        "randomized_labels_complex": (
            "\"['IncorrectAssociate', 'Incorrect",
            "\"[IncorrectAssociate, 'Incorrect",
        ),
        "prompt": ("\n4) Nora is not good at making toast. \n", "\n"),  # an option line lost
        "randomized_option_order": ('"[3, 1, 4, 2]"', '"[3, 1, 4, 4]"'),
        "seed": ('Answer: ",0\n', 'Answer: ",3\n'),
        "is_example": (",False,", ",maybe,"),
    }
    for field, (old, new) in cases.items():
        bad = copy_with(tmp_path, IRONY_SEED0, old, new)
        with pytest.raises(DataFormatError, match=rf":2 \(field '{field}'\)"):
            read_prompt_file(bad)


def test_undecodable_bytes_name_the_line(tmp_path):
    bad = tmp_path / IRONY_SEED0.name
    bad.write_bytes(IRONY_SEED0.read_bytes().replace(b"Omar walks", b"Omar\xe9 walks", 1))
    with pytest.raises(DataFormatError, match=r"seed0_examples0.csv:11: not UTF-8"):
        read_prompt_file(bad)


# -- human answers ------------------------------------------------------------------------------------
def test_human_answers_per_item_in_the_original_order():
    items, report = read_human_answers(HUMAN_IRONY)
    assert report.rows_read == 19 and report.participants == 6
    assert report.skipped == [{"line": 20, "reason": "field 'OptionChosen': unknown answer 'NA'"}]
    assert (
        items[1].counts == (1, 4, 1, 0)
        and items[2].counts == (0, 5, 0, 1)
        and items[3].counts == (2, 3, 0, 1)
    )
    assert items[1].n == 6 and items[1].correct == 4 and items[1].distribution[1] == pytest.approx(4 / 6)
    assert human_accuracy(items.values()) == pytest.approx(12 / 18)


def test_coherence_answers_are_named_options():
    ((items, report),) = read_human_data(ROOT, phenomena=["CoherenceInference"]).values()
    assert items[1].counts == (5, 1) and items[2].counts == (2, 4) and not report.skipped
    assert human_accuracy(items.values()) == pytest.approx(9 / 12)
    assert sorted(read_human_data(ROOT / "human_data" / "fj")) == ["CoherenceInference", "Irony"]


def test_human_distribution_follows_the_seed_order():
    human, _ = read_human_answers(HUMAN_IRONY)
    items, _ = read_prompts(ROOT, phenomena=["Irony"])
    seed0 = next(i for i in items if i.seed == 0 and i.item_id == 1)  # order (3, 1, 4, 2)
    assert human_distribution_in_seed_order(human[1], seed0) == pytest.approx((1 / 6, 1 / 6, 0.0, 4 / 6))
    for item in items:  # the people's favourite is the true option in every seed's order
        shares = human_distribution_in_seed_order(human[item.item_id], item)
        assert max(range(4), key=shares.__getitem__) == item.true_index
    (coherent, _), _ = read_prompts(ROOT, phenomena=["CoherenceInference"])  # shows Incoherent first
    coherence, _ = read_human_answers(ROOT / "human_data" / "fj" / "Human_CoherenceInference.csv")
    assert human_distribution_in_seed_order(coherence[1], coherent) == pytest.approx((1 / 6, 5 / 6))
    with pytest.raises(ValueError, match="do not belong"):
        human_distribution_in_seed_order(human[2], seed0)


def test_human_file_missing_column_and_bad_bytes(tmp_path):
    bad = copy_with(tmp_path, HUMAN_IRONY, '"OptionChosen"', '"Choice"')
    with pytest.raises(DataFormatError) as err:
        read_human_answers(bad)
    assert str(bad) in str(err.value) and "'OptionChosen'" in str(err.value)
    latin = tmp_path / "latin" / "Human_Irony.csv"
    latin.parent.mkdir()
    latin.write_bytes(HUMAN_IRONY.read_bytes().replace(b'"IV","Answer1"', b'"IV\xe9","Answer1"', 1))
    with pytest.raises(DataFormatError, match=r"Human_Irony.csv:3: not UTF-8"):
        read_human_answers(latin)


def test_no_story_people_proportion_correct_from_the_export_and_its_codes():
    """Irony 1: Field/2 (correct), Field/2, Field/4 (associate): 2 of 3; Irony 2: Field/3 (correct), Field/2,
    Field/2: 1 of 3; PoliteDeceits (Deceits) 1: Field/2 (literal), no answer, Field/9 (no such code): 0 of
    1."""
    people, report = read_no_story_answers(ROOT / "human_data" / "no_story")
    assert people == {
        ("Deceits", 1): PeopleCorrect(1, 0),
        ("Irony", 1): PeopleCorrect(3, 2),
        ("Irony", 2): PeopleCorrect(3, 1),
    }
    assert report.participants == 3 and [s["line"] for s in report.skipped] == [3, 4]
    assert "no answer" in report.skipped[0]["reason"] and "Field/9" in report.skipped[1]["reason"]


@pytest.mark.parametrize(
    ("variant", "expected"),
    [("no-story", {1: 2 / 3, 2: 1 / 3}), ("story", None)],
)
def test_each_variant_is_compared_with_its_own_people(tmp_path, variant, expected):
    data = HuPragmaticsDataModule(
        path=str(ROOT), phenomena=["Irony"], variant=variant, report_dir=str(tmp_path)
    )
    data.setup("test")
    shares = {data.items[x["index"]].item_id: x["people_correct"] for x in data.datasets["test"]}
    if expected is None:  # the story people (human_data/fj): correct answers over all answers per item
        expected = {i: h.correct / h.n for i, h in read_human_answers(HUMAN_IRONY)[0].items() if i in shares}
        assert all(x["reference"] is not None for x in data.datasets["test"])
    else:  # the no-story people give no shares over the options
        assert all(x["reference"] is None for x in data.datasets["test"])
    assert shares == pytest.approx(expected)


# -- the real excerpts --------------------------------------------------------------------------------
SAMPLE = SAMPLES / "hu_pragmatics"
SHARED = ["CoherenceInference", "Deceits", "Humour", "IndirectSpeech", "Irony"]
ITEMS = {"CoherenceInference": 40, "Deceits": 20, "Humour": 25, "IndirectSpeech": 20, "Irony": 25}


@needs_samples
def test_real_prompt_files_read_every_seed():
    items, report = read_prompts(SAMPLE)
    assert sorted({i.phenomenon for i in items}) == SHARED and len(report.files) == 25
    assert report.rows_read == len(items) == 5 * sum(ITEMS.values()) and not report.dropped
    for item in items:
        assert item.prompt.endswith("Answer: ") and item.option_kinds[item.true_index].startswith("Correct")
        assert item.option_kinds == tuple(item.original_kinds[k - 1] for k in item.option_order)
    no_story, report = read_prompts(SAMPLE, variant="no-story")
    assert sorted({i.phenomenon for i in no_story}) == ["Deceits", "IndirectSpeech", "Irony"]
    assert len(no_story) == 5 * (20 + 20 + 25) and not report.dropped
    # The option texts, put back in the original order, are the same in every seed.
    originals = {}
    for item in items + no_story:
        key = (item.variant, item.phenomenon, item.item_id)
        originals.setdefault(key, set()).add(
            tuple(item.options[item.option_order.index(k + 1)] for k in range(len(item.options)))
        )
    assert all(len(texts) == 1 for texts in originals.values())


@needs_samples
def test_real_human_answers_map_onto_each_seed():
    human = read_human_data(SAMPLE)
    assert sorted(human) == SHARED
    for name, (items, report) in human.items():
        assert len(items) == ITEMS[name] and report.participants == 374 and not report.skipped
        assert 0.8 < human_accuracy(items.values()) < 0.95
    for variant, expected in (("story", 635), ("no-story", 320)):
        prompts, _ = read_prompts(SAMPLE, variant=variant)
        favourite_is_true = unmapped_is_true = 0
        for item in prompts:
            person = human[item.phenomenon][0][item.item_id]
            shares = human_distribution_in_seed_order(person, item)
            favourite_is_true += max(range(len(shares)), key=shares.__getitem__) == item.true_index
            raw = (person.counts + (0,) * 5)[: len(item.options)]  # OptionChosen read as the seed's position
            unmapped_is_true += max(range(len(raw)), key=raw.__getitem__) == item.true_index
        # Mapped, people's favourite is the true option for 97.7% (story) / 98.5% (no-story) of the items in
        # every seed; read as the seed's own positions it would be right for under a third.
        assert favourite_is_true == expected and unmapped_is_true < len(prompts) / 3


@needs_samples
def test_real_no_story_people():
    people, report = read_no_story_answers(SAMPLE / "human_data" / "no_story")
    assert report.participants == 30
    per_phenomenon = {}
    for (phenomenon, _), answered in people.items():
        per_phenomenon.setdefault(phenomenon, []).append(answered)
    assert {p: len(items) for p, items in per_phenomenon.items()} == {
        "Deceits": 20,
        "IndirectSpeech": 20,
        "Irony": 25,
    }
    assert all(a.answered == 30 for a in people.values()) and not report.skipped
    # Without the story people are far less often right (Irony near its chance of 1/4)
    right = {
        p: (sum(a.correct for a in items), sum(a.answered for a in items))
        for p, items in per_phenomenon.items()
    }
    assert right == {"Deceits": (245, 600), "IndirectSpeech": (444, 600), "Irony": (205, 750)}
