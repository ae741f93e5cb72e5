"""Derived state in `.memcli/`: embeddings, vector and keyword indexes, access statistics."""
