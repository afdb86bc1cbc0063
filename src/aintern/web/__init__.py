"""The local web app (``aintern serve``): index manager, live progress, search, file view, context, chat
and settings, each page with a JSON twin under ``/api/``."""

from aintern.web.app import ServerConfig, create_app

__all__ = ["ServerConfig", "create_app"]
