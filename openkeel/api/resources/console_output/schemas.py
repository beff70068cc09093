"""Request body of ``os-getConsoleOutput`` (Nova's: ``length`` an integer or digit string, at
least -1, or null)."""

from __future__ import annotations

from typing import Any

GET_CONSOLE_OUTPUT_V21: dict[str, Any] = {
    "type": "object",
    "properties": {
        "os-getConsoleOutput": {
            "type": "object",
            "properties": {
                "length": {
                    "type": ["integer", "string", "null"],
                    "pattern": "^-?[0-9]+$",
                    "minimum": -1,
                },
            },
            "additionalProperties": False,
        },
    },
    "required": ["os-getConsoleOutput"],
    "additionalProperties": False,
}
