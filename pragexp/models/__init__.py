"""Plain nn.Modules. Nothing here imports pragexp.tasks or pragexp.data."""
