"""Which database a cell's instances live in, for the conductor (cell DB engines by uuid).

Any mapping of cell uuid → Engine works (``ApiServices.cell_dbs``, the cell router of the
instance data layer wrapped by the composition root): conductor only looks engines up.
"""

from __future__ import annotations

from typing import Protocol

import sqlalchemy as sa


class CellEngines(Protocol):
    """Cell uuid → the engine of that cell's database."""

    def __getitem__(self, cell_uuid: str) -> sa.Engine: ...
