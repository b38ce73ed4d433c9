"""The batches a data module hands its task, declared: one `TypedDict` per kind of batch, each key documented
once (`pragexp.batches.types`), built by the data modules' collate functions and checked by the task on
arrival (`pragexp.batches.check`). A room of its own, below `data`, `tasks` and `metrics`, which all read
them."""
