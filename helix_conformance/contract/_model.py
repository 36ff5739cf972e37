"""Base model of the contract: snake_case in Python, camelCase aliases for Helix's JSON."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ContractModel(BaseModel):
    """Every contract model validates by field name or alias and serialises ``by_alias`` to Helix JSON."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        arbitrary_types_allowed=True,
        extra="forbid",
    )
