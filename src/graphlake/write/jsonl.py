"""Parse one line of a JSONL input (load, HTTP upload, ingest) into a Python value.

Every way a line can fail becomes a `LoadFormatError` naming the file and line: besides
malformed JSON, Python's parser raises `RecursionError` for deeply nested values and
`ValueError` for integer literals longer than `sys.get_int_max_str_digits()` (4,300
digits by default). Both are the input's fault, so neither may escape as a crash.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from graphlake.errors import LoadFormatError

__all__ = ["parse_json_line"]


def parse_json_line(raw: str | bytes, path: str | None, line: int | None) -> Any:
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise LoadFormatError("not valid UTF-8", path=path, line=line) from None
    except json.JSONDecodeError as exc:
        raise LoadFormatError(
            f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=line
        ) from None
    except RecursionError:
        raise LoadFormatError(
            "not valid JSON here: nested too deeply", path=path, line=line
        ) from None
    except ValueError:
        # The only other ValueError json.loads raises: an over-long integer literal.
        limit = sys.get_int_max_str_digits()
        raise LoadFormatError(
            f"not valid JSON here: a number has more than {limit} digits", path=path, line=line
        ) from None
