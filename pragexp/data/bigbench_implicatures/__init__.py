"""BIG-bench's `implicatures` task (yes/no readings of indirect answers), in the hub's format."""
