"""Every exception aintern raises on purpose derives from AinternError."""

from __future__ import annotations

import os


class AinternError(Exception):
    """Base class: a problem aintern can explain to the user."""


class EmbeddingError(AinternError):
    """An embedding could not be computed (model missing, endpoint unreachable, bad response)."""


class ModelNotInstalledError(EmbeddingError):
    """A model whose optional package (an extra of aintern) is not installed."""


class EndpointUnreachableError(EmbeddingError):
    """A configured HTTP endpoint did not answer."""


class StoreError(AinternError):
    """The database cannot be opened or used (corrupt, foreign, newer schema)."""


class NotIndexedError(AinternError):
    """A workspace has no index yet."""

    @classmethod
    def of(cls, workspace: object, why: str = "", inside: object = None) -> NotIndexedError:
        """What every layer says of a folder with no index (``why``: more, such as where the database is): that it
        does not exist; that it is in the index of the folder ``inside`` (an indexed folder above it that holds its
        files), and how to search it there; else what to run to index it."""
        import shlex  # (only for these words: a search that finds its index never loads it)

        path = str(workspace)
        if not os.path.exists(path):
            return cls(f"{path} does not exist; name an indexed folder (`aintern list` lists them)")
        if inside is not None:
            rel = os.path.relpath(path, str(inside))
            return cls(
                f"{path} has no index of its own: its files are in the index of {inside}; search there (run the "
                f"command in that folder, or with `-w {shlex.quote(str(inside))}`; `--dir {shlex.quote(rel)}` keeps to "
                "this folder)"
            )
        return cls(f"{path} is not indexed yet{why}; run `aintern index {shlex.quote(path)}`")


class NotAFolderError(AinternError, FileNotFoundError):
    """A workspace that is no folder (none there, or a file): indexing it is refused before anything is recorded.
    (A FileNotFoundError too, as indexing a missing folder raised before.)"""

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> NotAFolderError:
        """What every layer says of it: ``PATH: no such folder`` (or ``not a folder``)."""
        return cls(f"{path}: {'not a folder' if os.path.exists(path) else 'no such folder'}")


class FileNotIndexedError(AinternError):
    """A path that is not an indexed file of the workspace (outside it, through a symlink out, or unknown)."""


class IndexOutdatedError(NotIndexedError):
    """An index was built with a built-in model that this version replaced; ``aintern index`` rebuilds it."""


class ModelMismatchError(AinternError):
    """An index was built with another embedding model than the one asked for."""


class InsideIndexError(AinternError):
    """A folder whose files the index of a folder above it holds already: a second index would show them twice."""

    def __init__(self, message: str, web: str = "") -> None:
        super().__init__(message)
        #: The same, with what to do in the web app rather than in a terminal.
        self.web = web or message


class IndexingBusyError(AinternError):
    """Another run is indexing the same workspace (in this process or another)."""


class SettingsError(AinternError):
    """A setting's name or value is not valid."""


class IndexingCancelled(AinternError):
    """Indexing stopped on request; what was finished is kept."""


class LLMError(AinternError):
    """A language model could not answer (bad response, lost connection, load failure)."""


class LLMUnreachableError(LLMError):
    """The configured LLM endpoint did not answer."""


class ModelNotFoundError(LLMError):
    """The model asked for is not served by the endpoint (or the GGUF file does not exist)."""


class ContextTooLongError(LLMError):
    """The prompt does not fit the model's context window."""


class ConversationNotFoundError(AinternError):
    """No conversation has that id."""


class NoDatabaseError(NotIndexedError):
    """There is no application database yet (a read-only command does not create one)."""


class CorruptDatabaseError(StoreError):
    """The application database is damaged; nothing more is written to it."""
