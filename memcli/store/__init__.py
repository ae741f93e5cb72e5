"""The Markdown truth and what survives a rebuild: files, history, settings, access."""
