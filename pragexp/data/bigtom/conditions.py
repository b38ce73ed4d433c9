"""BigToM's test items, built from each story line as the authors' code/src/generate_conditions.py
(`generate_conditions`) builds them, rule for rule: 25 items per story, one in each of their condition files
`<initial belief>_<variable>_<condition>` (`data/conditions/<name>/stories.csv`, rows `story;question;correct
answer;wrong answer`), the rows of a file in the story file's order.

With the story split on "." into parts p0..p4 (each without its full stop, the space before it kept):

- the story told: with the initial belief shown (`1`), "p0.p1.p2.p3.p4."; hidden (`0`), "p0.p1.p2.p4."; the
  control story: the setup, then the initial belief where it is shown, then the random event in place of the
  causal event, ".".join([p0, p1, p2, (p3,) " " + random event]);
- `forward_belief` (the belief question) and `forward_action` (the action question), each answer pair (aware,
  not aware): `true_belief` = told + " " + aware of the event, right: the aware answer; `false_belief` = told
  + " " + not aware of the event, right: the not-aware answer; `true_control` = control + " " + aware of the
  random event and `false_control` = control + " " + not aware of it, right in both: the not-aware answer (the
  random event changes nothing the agent believes);
- `backward_belief` (the belief question asked after the agent's action): `true_belief` = told + " " + the
  action when aware, right: the aware belief; `false_belief` = told + " " + the action when not aware, right:
  the not-aware belief; `true_control` and `false_control` are the same item, control + " " + the action when
  not aware, right: the not-aware belief (their code writes the not-aware action in both);
- `percept_to_belief`, with the initial belief shown and `true_belief` only: the setup alone, "p0.p1.p2.", the
  belief question, right: the aware answer.

Their loop also holds `backward_desire`, which VARIABLES leaves out: no file of the release has it, nor do we.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragexp.data.bigtom.io import Story

INITIAL_BELIEF = (0, 1)  # 0: the initial belief hidden, 1: shown (the authors' INITIAL_BELIEF)
VARIABLES = ("forward_belief", "forward_action", "backward_belief", "percept_to_belief")
CONDITIONS = ("true_belief", "false_belief", "true_control", "false_control")
QUESTIONS = {"forward_belief": "Belief", "forward_action": "Action", "backward_belief": "Belief"}
PERCEPT = "percept_to_belief"
# What each condition appends to the story (a field) and whether the aware answer is the right one.
APPENDED = {
    ("forward", "true_belief"): ("Aware of event", True),
    ("forward", "false_belief"): ("Not Aware of event", False),
    ("forward", "true_control"): ("Aware of random event", False),
    ("forward", "false_control"): ("Not aware of random event", False),
    ("backward", "true_belief"): ("Action aware", True),
    ("backward", "false_belief"): ("Action not aware", False),
    ("backward", "true_control"): ("Action not aware", False),
    ("backward", "false_control"): ("Action not aware", False),
}


@dataclass(frozen=True)
class TestItem:
    story: int  # the story's row in the file
    initial_belief: int  # 0 hidden, 1 shown
    variable: str
    condition: str
    text: str  # the story as the item tells it
    question: str
    correct: str
    wrong: str

    @property
    def name(self) -> str:
        """The authors' condition file: `1_forward_belief_false_belief`."""
        return condition_name(self.initial_belief, self.variable, self.condition)

    @property
    def row(self) -> tuple[str, str, str, str]:
        """The item as their condition file's row holds it."""
        return self.text, self.question, self.correct, self.wrong


def condition_name(initial_belief: int, variable: str, condition: str) -> str:
    return f"{initial_belief}_{variable}_{condition}"


def has_file(initial_belief: int, variable: str, condition: str) -> bool:
    """Whether their code writes this condition (percept-to-belief: shown initial belief, true belief
    only)."""
    return variable != PERCEPT or (initial_belief == 1 and condition == "true_belief")


# The 25 condition files, in the order their loops first write them.
CONDITION_FILES = tuple(
    condition_name(i, v, c)
    for i in INITIAL_BELIEF
    for v in VARIABLES
    for c in CONDITIONS
    if has_file(i, v, c)
)


def story_items(story: Story) -> list[TestItem]:
    """The story's 25 items, in the order of `CONDITION_FILES`."""
    return [
        _item(story, i, v, c)
        for i in INITIAL_BELIEF
        for v in VARIABLES
        for c in CONDITIONS
        if has_file(i, v, c)
    ]


def generate(stories: list[Story]) -> list[TestItem]:
    """Every story's items, condition file by condition file, each file's rows in the stories' order."""
    per_story = [story_items(s) for s in stories]
    return [items[k] for k in range(len(CONDITION_FILES)) for items in per_story]


def told(story: Story, initial_belief: int) -> str:
    p = story.sentences
    shown = p[:5] if initial_belief else [*p[:3], p[4]]
    return "".join(f"{part}." for part in shown)


def control(story: Story, initial_belief: int) -> str:
    return ".".join([*story.sentences[: 3 + initial_belief], " " + story["Random Event"]])


def _item(story: Story, initial_belief: int, variable: str, condition: str) -> TestItem:
    kind = QUESTIONS.get(variable, "Belief")
    question = story[f"{kind} Question"]
    aware, not_aware = story[f"{kind} Answer Aware"], story[f"{kind} Answer not Aware"]
    if variable == PERCEPT:
        text, aware_right = "".join(f"{part}." for part in story.sentences[:3]), True
    else:
        field, aware_right = APPENDED[(variable.split("_")[0], condition)]
        base = (
            control(story, initial_belief) if condition.endswith("control") else told(story, initial_belief)
        )
        text = f"{base} {story[field]}"
    correct, wrong = (aware, not_aware) if aware_right else (not_aware, aware)
    return TestItem(story.index, initial_belief, variable, condition, text, question, correct, wrong)
