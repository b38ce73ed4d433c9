"""MultiPragEval (Park et al., GenBench @ EMNLP 2024): Grice's maxims and a literal control as five-way
multiple choice in English, German, Korean and Chinese (github.com/DojunPark/MultiPragEval,
test_suite.csv)."""
