"""Issue 25's findings as reliability scenarios (`bench/reliability.py --only round3`),
and the rounds after it: round four (issue 35, `--only round4`) is every
tests/support/round4_<name>.py, one module per concern (round4_tenants.py: a server's
tenants and the medium and lower findings; links and review versions add their own
module, each a list of rows, with no change here).

Each tests/support/round<N>_<name>.py exposes

    def scenarios() -> list[tuple[str, Callable[[Path], tuple[int, int]]]]

(name, callable(scratch directory) -> (attempts, harmless)). The modules are found by
name, in sorted order; every scenario runs in a temporary directory of its own. A
scenario that raises, returns anything but 0 <= harmless <= attempts with attempts > 0,
or a module that cannot be imported, counts as harm (its error is shown).
"""

from __future__ import annotations

import importlib
import importlib.util
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

SUPPORT = Path(__file__).resolve().parent
Scenario = Callable[[Path], tuple[int, int]]


@dataclass
class Result:
    module: str
    name: str
    attempts: int = 0
    harmless: int = 0
    error: str = ""
    seconds: float = 0.0

    @property
    def harmed(self) -> bool:
        return bool(self.error) or self.harmless < self.attempts


def discover(
    folder: Path = SUPPORT, prefix: str = "round3_"
) -> list[tuple[str, ModuleType | Exception]]:
    """(module name, the module or why it could not be imported) of every
    `<prefix>*.py` in `folder`, sorted by file name."""
    found: list[tuple[str, ModuleType | Exception]] = []
    for path in sorted(folder.glob(f"{prefix}*.py")):
        try:
            if folder.resolve() == SUPPORT:
                module = importlib.import_module(f"tests.support.{path.stem}")
            else:  # a folder of its own (the wiring's own test)
                spec = importlib.util.spec_from_file_location(f"_round3_{path.stem}", path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - reported as a row, the run goes on
            found.append((path.stem, exc))
            continue
        found.append((path.stem, module))
    return found


def _checked(value: object) -> tuple[int, int]:
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise TypeError(f"returned {value!r}, not (attempts, harmless)")
    attempts, harmless = value
    if attempts <= 0 or not 0 <= harmless <= attempts:
        raise ValueError(f"returned attempts={attempts}, harmless={harmless}")
    return attempts, harmless


def run_all(work: Path, folder: Path = SUPPORT, prefix: str = "round3_") -> list[Result]:
    """Every scenario of every `<prefix>*.py` module, each in its own temporary directory."""
    work.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    for module_name, module in discover(folder, prefix):
        if isinstance(module, Exception):
            results.append(Result(module_name, "(import)", error=_error(module)))
            continue
        try:
            listed = list(module.scenarios())
        except Exception as exc:  # noqa: BLE001
            results.append(Result(module_name, "(scenarios)", error=_error(exc)))
            continue
        for name, scenario in listed:
            result = Result(module_name, name)
            started = time.monotonic()
            with tempfile.TemporaryDirectory(dir=work, prefix=prefix.rstrip("_") + "-") as scratch:
                try:
                    result.attempts, result.harmless = _checked(scenario(Path(scratch)))
                except Exception as exc:  # noqa: BLE001 - a scenario that breaks: harm
                    result.error = _error(exc)
            result.seconds = time.monotonic() - started
            results.append(result)
    return results


def _error(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({Path(last[0].filename).name}:{last[0].lineno})" if last else ""
    return f"{type(exc).__name__}: {exc}{where}"


def report(results: list[Result]) -> tuple[str, int]:
    """The table (scenario | attempts | harmless) and the exit status: 1 when any harm."""
    lines = ["scenario | attempts | harmless | s", "---|---|---|---"]
    for r in results:
        shown = f"{r.harmless}" if not r.error else f"error: {r.error}"
        lines.append(f"{r.module}: {r.name} | {r.attempts} | {shown} | {r.seconds:.1f}")
    harmed = [r for r in results if r.harmed]
    lines.append("")
    lines.append(
        f"{len(results) - len(harmed)} of {len(results)} scenarios harmless"
        + (f"; harm in: {', '.join(f'{r.module}: {r.name}' for r in harmed)}" if harmed else "")
    )
    return "\n".join(lines), 1 if harmed or not results else 0
