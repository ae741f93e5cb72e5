"""The two Milvus collections the Milvus backend (memcli.index.milvus) creates: the
index (one row per entry of every workspace sharing it: its vector, its keyword terms
with Milvus's BM25 over them, its content key and model) and the workspaces collection
beside it (one row per workspace: the model, the revision and the writer lease)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def create_index(
    client: Any,
    name: str,
    dim: int,
    hnsw: tuple[int, int],
    bm25: tuple[float, float],
    call: Callable[..., Any],
) -> None:
    """Create and load the index collection `name` for `dim`-d vectors (HNSW (M,
    efConstruction); BM25 (k1, b)); `call` runs each pymilvus call (its errors)."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("workspace", DataType.VARCHAR, max_length=256, is_partition_key=True)
    schema.add_field("entry_id", DataType.VARCHAR, max_length=128)
    schema.add_field("key", DataType.VARCHAR, max_length=128)
    schema.add_field("model", DataType.VARCHAR, max_length=512)
    schema.add_field(
        "text",
        DataType.VARCHAR,
        max_length=65_535,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "standard"},  # splits terms() at the spaces
    )
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    index = client.prepare_index_params()
    m, ef_construction = hnsw
    index.add_index(
        "dense",
        index_type="HNSW",
        metric_type="IP",
        params={"M": m, "efConstruction": ef_construction},
    )
    k1, b = bm25
    index.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": k1, "bm25_b": b},
    )
    call(
        client.create_collection,
        name,
        schema=schema,
        index_params=index,
        consistency_level="Strong",  # a search right after an upsert sees it
    )
    call(client.load_collection, name)


def create_workspaces(client: Any, name: str, call: Callable[..., Any]) -> None:
    """Create the workspaces collection `name` unless it exists, and load it."""
    from pymilvus import DataType

    if not call(client.has_collection, name):
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=256)
        schema.add_field("model", DataType.VARCHAR, max_length=512)
        schema.add_field("rev", DataType.VARCHAR, max_length=64)
        schema.add_field("holder", DataType.VARCHAR, max_length=512)
        schema.add_field("beat", DataType.INT64)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # Milvus needs one vector
        index = client.prepare_index_params()
        index.add_index("v", index_type="FLAT", metric_type="L2")
        call(
            client.create_collection,
            name,
            schema=schema,
            index_params=index,
            consistency_level="Strong",
        )
    call(client.load_collection, name)
