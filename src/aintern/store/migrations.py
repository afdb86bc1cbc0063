"""The schema steps that need more than SQL, by schema version (store.db runs them inside its migration's
transaction, after the step's SQL)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aintern.store.keywords import rebuild_keyword_tables
from aintern.store.records import name_indexes_after_folders

PYTHON_MIGRATIONS: dict[int, Callable[[Any], None]] = {
    5: rebuild_keyword_tables,
    7: name_indexes_after_folders,
}
