"""Retrieval: from a question to ranked chunks."""
