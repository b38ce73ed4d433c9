"""pragexp's suite sweeper: `experiment=suite/<name>` runs every benchmark of a suite and writes its
scorecard."""
