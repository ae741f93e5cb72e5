"""Derived state in `.memcli/index`: embedders, the backend protocol, local and Milvus."""
