"""The commands of the Typer app, one module per group (memcli.surfaces.cli.app imports
them all; each registers its commands on memcli.surfaces.cli.base.app)."""
