"""The command line: the Typer app, its Typer-free fast path and the output."""
