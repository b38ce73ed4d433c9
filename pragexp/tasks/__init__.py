"""LightningModules: losses, metrics, optimisation and logging. Import models/ and metrics/ only."""
