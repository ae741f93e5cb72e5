"""The MCP server's resources of the other layers a workspace reads (docs/layers.md):
each curated file of each layer besides the workspace's own, as
`memory://layer/{layer}/{file}`. `memory://layer/user/memory.md` is the person's own
memory.md; a path layer's name is percent-encoded. The workspace's own files stay
`memory://{file}`.

The layers are decided again at every listing and read (services.layers.open_layers),
so a layer that appears, or a changed `[layers]`, shows without restarting the server;
with one workspace the lists are exactly as they were (nothing is registered: the
resource manager's listing and lookup are extended instead).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from memcli.core.errors import MemcliError
from memcli.core.validate import strip_invisible

if TYPE_CHECKING:
    from pathlib import Path

PREFIX = "memory://layer/"


def uri(layer: str, name: str) -> str:
    """The resource URI of file `name` of `layer`."""
    return f"{PREFIX}{quote(layer, safe='')}/{name}"


def read_for_model(root: Path, name: str) -> str:
    """Curated file `name` of the workspace at `root` as a model reads it, under the
    workspace's rule for links, owners and sizes (memcli.store.workspace_read),
    without the invisible characters a hand edit left ("" for a file not there yet;
    ResourceError naming the file for one that is refused or cannot be read)."""
    from mcp.server.mcpserver.exceptions import ResourceError

    from memcli.store.workspace_read import read_workspace_file

    try:
        return strip_invisible(read_workspace_file(root, name))
    except MemcliError as exc:
        raise ResourceError(str(exc)) from None
    except OSError as exc:
        raise ResourceError(f"{root / name}: cannot be read ({exc.strerror})") from None


def add_layer_resources(server: Any, memory: Callable[[], Any]) -> None:
    """Extend `server`'s resource list and lookup with the other layers' curated files
    (`memory()`: the workspace's Memory as it is now)."""
    from mcp.server.mcpserver.resources import FunctionResource

    manager = server._resource_manager  # noqa: SLF001 - no public way to list dynamically
    listed, found = manager.list_resources, manager.get_resource

    def read(root: Any, name: str) -> str:
        return read_for_model(root, name)

    def resources() -> list[Any]:
        from memcli.services.layers import open_layers

        try:
            layers = open_layers(memory())[1:]
        except MemcliError:  # the tools say what is wrong
            return []
        made = []
        for layer in layers:
            try:
                files = layer.memory.store.files
            except MemcliError:
                from memcli.core.registry import BUILTIN as files
            for spec in files.curated:
                made.append(
                    FunctionResource(
                        uri=uri(layer.name, spec.name),
                        name=f"{layer.name}/{spec.name}",
                        description=f"{spec.title} of the {layer.name} layer "
                        f"({layer.memory.root}): {', '.join(spec.types)} entries "
                        "(Markdown; metadata in trailing comments).",
                        mime_type="text/markdown",
                        fn=functools.partial(read, layer.memory.root, spec.name),
                    )
                )
        return made

    def list_resources() -> list[Any]:
        return [*listed(), *resources()]

    async def get_resource(wanted: Any, context: Any) -> Any:
        if str(wanted).startswith(PREFIX):
            for resource in resources():
                if resource.uri == str(wanted):
                    return resource
        return await found(wanted, context)

    manager.list_resources = list_resources
    manager.get_resource = get_resource
