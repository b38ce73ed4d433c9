"""The intention items as the prompts read them (`PromptItem`s): the fields the templates of the intentions'
prompt groups fill (conf/prompt/intentions_reply.yaml, intentions_mc.yaml;
conf/judge/_contextual_similarity.yaml), the two intentions as the options of Hu et al.'s multiple choice (the
true one first: label 0), and the two reference replies a judge compares a reply with."""

from __future__ import annotations

from pragexp.data.intentions.io import IntentionItem
from pragexp.prompting import PromptItem

# How Yerukola et al.'s chain-of-thought levels ask about (level 2) and name (levels 4 and 6) each phenomenon.
PHENOMENON_WORDS = {
    "indirectspeech": ("Is {speaker} speaking indirectly?", "is speaking indirectly"),
    "irony": ("Is {speaker} being ironic?", "is being ironic"),
    "maxims": ("Is {speaker} flouting a conversational maxim?", "is flouting a conversational maxim"),
    "metaphor": ("Is {speaker} using a metaphor?", "is using a metaphor"),
}
# Hu et al.'s task line for two options, for an item whose prompt has none.
MC_TASK_LINE = (
    "Task: You will read short stories that describe everyday situations. Each story will be followed by "
    "a multiple-choice question. Read each story and choose the best answer. Your task is to decide what "
    "the character in the story is trying to convey. The answer options are 1 or 2."
)


def prompt_item(item: IntentionItem, index: int) -> PromptItem:
    question, named = PHENOMENON_WORDS.get(
        item.phenomenon, ("Is {speaker} using " + item.phenomenon + "?", "is using " + item.phenomenon)
    )
    fields = {
        "context": item.context,
        "dialog_prefix": item.dialog_prefix,
        "utterance": item.utterance,
        "speaker": item.speaker,
        "listener": item.listener,
        "true_intention": item.true_intention,
        "question": item.question,
        "task_line": item.task_line or MC_TASK_LINE,
        "phenomenon_question": question.format(speaker=item.speaker),
        "phenomenon_named": f"{item.speaker} {named}",
    }
    return PromptItem(
        index,
        fields,
        options=(item.true_intention, item.literal_intention),
        label=0,
        references={"reply_true": item.reply_true, "reply_literal": item.reply_literal},
    )
