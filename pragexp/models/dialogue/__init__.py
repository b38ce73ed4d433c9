"""GRICE dialogue readers (section 5.1 of Zheng et al. 2021) and the heads built on them.

protocol.py    DialogueReader: the contract every reader keeps
layers.py      the LSTM sentence encoder, the fusion MLP, recency indices
lstm.py memnn.py entnet.py relnet.py   the readers; round_reader.py their shared round encoding
memnn_inf.py   MemNN w/ inf: MemNN with a recovery (inference) model appended
matching.py    word-by-word comparison of a candidate with the dialogue (TokenAligner)
heads.py       CandidateRanker (recovery), AnswerClassifier (QA)
seq2seq.py     the generative recovery head (-Gen rows): attentional decoder, ranking, beam search
"""
