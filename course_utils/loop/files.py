"""A `read_file` tool confined to one folder: how the `filesystem` mode reads skills.

Used by `notebooks/04_three_modes.ipynb` and `05_skills_are_code.ipynb`. The model gets each skill's `SKILL.md`
path in the catalog and opens it with an ordinary file-reading tool, as coding agents do. A file tool is a
door onto the disk, so this one opens only files that, once every symlink and `..` is resolved,
lie inside its root. Everything it refuses comes back as a string starting with "Error:".
"""
from __future__ import annotations

from pathlib import Path

from google.genai import types

from course_utils.skills.text import shorten

MAX_BYTES = 100_000
SHOWN_PATH = 120
"""A path longer than this is cut in error messages."""


class ConfinedReader:
    """`reader(path)` returns the text of a file inside `root`, or an error string.

    Relative paths are read from `base` (default: `root`), so the catalog can show paths such as
    `skills/bakery/custom-cake-order/SKILL.md` with `base` set to the repository root while only
    `skills/bakery/` is readable.
    """

    def __init__(self, root: str | Path, base: str | Path | None = None, max_bytes: int = MAX_BYTES):
        self.root = Path(root).resolve(strict=True)
        self.base = Path(base).resolve() if base is not None else self.root
        self.max_bytes = max_bytes

    def resolve(self, path: str) -> Path:
        """The real file behind `path`; raises PermissionError when it lies outside the root."""
        requested = Path(path)
        full = requested if requested.is_absolute() else self.base / requested
        real = full.resolve()  # follows every symlink and folds every `..`
        if not real.is_relative_to(self.root):
            shown = shorten(path, SHOWN_PATH, flat=False)
            raise PermissionError(f'"{shown}" is outside the readable folder {self._shown_root()}')
        return real

    def _shown_root(self) -> str:
        try:
            return f"{self.root.relative_to(self.base)}/"
        except ValueError:
            return str(self.root)

    def __call__(self, path: str) -> str:
        if not isinstance(path, str) or not path.strip() or "\x00" in path:
            return "Error: give the path of a file, as shown in the catalog."
        shown = shorten(path, SHOWN_PATH, flat=False)
        try:
            real = self.resolve(path.strip())
            if not real.exists():
                return f'Error: no file "{shown}". Use a path exactly as shown in the catalog.'
            if not real.is_file():
                return f'Error: "{shown}" is a folder, not a file.'
            size = real.stat().st_size
            if size > self.max_bytes:
                return f'Error: "{shown}" is {size:,} bytes; the limit is {self.max_bytes:,}.'
            return real.read_text(encoding="utf-8")
        except PermissionError as err:
            return f"Error: refused: {err}."
        except UnicodeDecodeError:
            return f'Error: "{shown}" is not UTF-8 text.'
        except (OSError, ValueError, RuntimeError) as err:  # RuntimeError: a symlink loop on older Pythons
            return f'Error: cannot read "{shown}": {getattr(err, "strerror", None) or err}.'

    def declaration(self, function: str = "read_file") -> types.FunctionDeclaration:
        """The declaration the model sees for this reader."""
        return types.FunctionDeclaration(
            name=function,
            description=f"Read a text file under {self._shown_root()} and return its content.",
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={"path": types.Schema(type=types.Type.STRING,
                                                 description="The file's path, exactly as shown in the catalog.")},
                required=["path"],
            ),
        )
