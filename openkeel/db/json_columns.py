"""Rows whose documents are JSON text columns (the embedded network and volume services'
tables): decode them on read, encode them on write."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa


def decoded(row: sa.Row[Any], columns: Mapping[str, Any]) -> dict[str, Any]:
    """The row as a dict, each JSON column of ``columns`` (name -> its empty value) decoded."""
    out = dict(row._mapping)
    for name, empty in columns.items():
        if name in out:
            out[name] = json.loads(out[name]) if out[name] else type(empty)()
    return out


def encoded(values: Mapping[str, Any], columns: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each JSON column of ``columns`` as text."""
    return {k: json.dumps(v) if k in columns else v for k, v in values.items()}
