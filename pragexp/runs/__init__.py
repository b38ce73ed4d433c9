"""What a run leaves behind and what reads it back: `run.json`'s record (record: the schema, written by the
pieces that know each part; settings: the command line sorted by what it changes; sampling_unit: what the
data's intervals are clustered by) and the checkpoint's layout (checkpoint: the one reader and writer of
pragexp's extras). Written by `pragexp.run` and training, read by the report, evaluation and the models that
start from another run's weights; imports utils/ only."""
