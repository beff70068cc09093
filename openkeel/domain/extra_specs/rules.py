"""One rule of the flavor extra spec catalog: which keys it covers and which values it accepts.

Built by ``catalog.py``; applied by ``openkeel.domain.extra_specs.validate``. Messages follow
Nova's 2.86 validation word for word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from openkeel.domain.errors import Invalid

Kind = Literal["str", "int", "bool"]
_TRUE_OR_FALSE = ("1", "t", "true", "on", "y", "yes", "0", "f", "false", "off", "n", "no")


def rejected(detail: str) -> Invalid:
    """The 400 a rejected extra spec gets."""
    return Invalid(f"Validation failed; {detail}")


@dataclass(frozen=True)
class ExtraSpecRule:
    """Keys written as ``name`` (``{param}`` placeholders expand to their patterns) and the
    value they take: free text, text matching ``pattern`` or in ``choices``, an integer in
    [minimum, maximum], or a boolean-like word."""

    name: str
    kind: Kind = "str"
    pattern: str | None = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    params: tuple[tuple[str, str], ...] = ()
    deprecated: bool = False
    key_regex: re.Pattern[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        regex = self.name
        for param, pattern in self.params:
            regex = regex.replace(f"{{{param}}}", f"(?P<{param}>{pattern})")
        object.__setattr__(self, "key_regex", re.compile(regex))

    @property
    def namespace(self) -> str | None:
        """The regex of the part before ``:`` (None for keys without a namespace)."""
        head, colon, _rest = self.key_regex.pattern.partition(":")
        return head if colon else None

    def covers(self, key: str) -> bool:
        """Whether ``key`` is one of this rule's keys."""
        return self.key_regex.fullmatch(key) is not None

    def check(self, value: str) -> None:
        """Raise Invalid (400) with Nova's message when ``value`` is not acceptable."""
        if self.kind == "int":
            self._check_int(value)
        elif self.kind == "bool":
            if value.strip().lower() not in _TRUE_OR_FALSE:
                raise rejected(f"'{value}' is not a valid boolean-like value.")
        elif self.pattern is not None:
            if re.fullmatch(self.pattern, value) is None:
                raise rejected(f"'{value}' is not of the format '{self.pattern}'.")
        elif self.choices and value not in self.choices:
            raise rejected(f"'{value}' is not one of: {', '.join(self.choices)}.")

    def _check_int(self, value: str) -> None:
        try:
            number = int(value)
        except ValueError:
            raise rejected(f"'{value}' is not a valid integer value.") from None
        if self.maximum is not None and number > self.maximum:
            raise rejected(f"'{number}' is greater than the max value of '{self.maximum}'.")
        if self.minimum is not None and number < self.minimum:
            raise rejected(f"'{number}' is less than the min value of '{self.minimum}'.")
