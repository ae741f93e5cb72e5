"""Derived state in `.memcli/index`: embedders, the backend protocol, the local and Milvus backends."""
