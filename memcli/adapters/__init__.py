"""What talks to the outside: the LLM client, tiktoken, transcripts, import/export."""
