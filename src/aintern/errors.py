"""Every exception aintern raises on purpose derives from AinternError."""

from __future__ import annotations


class AinternError(Exception):
    """Base class: a problem aintern can explain to the user."""


class EmbeddingError(AinternError):
    """An embedding could not be computed (model missing, endpoint unreachable, bad response)."""


class EndpointUnreachableError(EmbeddingError):
    """A configured HTTP endpoint did not answer."""
