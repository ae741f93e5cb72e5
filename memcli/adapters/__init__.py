"""What talks to the outside: the OpenAI-compatible LLM, tiktoken, transcripts, import/export formats."""
