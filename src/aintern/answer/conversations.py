"""Conversations and their messages, kept in the application database beside the indexes."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from aintern.answer.llm.base import ChatMessage, Role
from aintern.errors import ConversationNotFoundError
from aintern.store import SqliteStore


def now() -> str:
    """UTC time to the microsecond: conversations are ordered by their last use."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Source:
    """A piece of code an answer was given: cite it as ``path:start_line-end_line``."""

    path: str
    start_line: int
    end_line: int
    relevance: float = 0.0
    symbol: str | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "relevance": round(self.relevance, 4), "symbol": self.symbol}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Source:
        return cls(d["path"], int(d["start_line"]), int(d["end_line"]), float(d.get("relevance", 0.0)), d.get("symbol"))


@dataclass
class Message:
    role: Role
    content: str
    created_at: str
    sources: list[Source] = field(default_factory=list)
    #: Which model answered (assistant messages).
    model: str | None = None
    #: ``complete``, ``interrupted`` (stopped by the user) or ``error`` (the model failed mid-answer).
    status: str = "complete"
    id: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role.value, "content": self.content, "created_at": self.created_at,
                "sources": [s.to_dict() for s in self.sources], "model": self.model, "status": self.status}  # fmt: skip


@dataclass
class Conversation:
    id: str
    title: str
    created_at: str
    updated_at: str
    workspace_path: str | None = None
    messages: list[Message] = field(default_factory=list)
    message_count: int = 0

    def chat_messages(self) -> list[ChatMessage]:
        """The history as the model sees it: whole user/assistant turns with text in them."""
        out: list[ChatMessage] = []
        for user, answer in zip(self.messages[::2], self.messages[1::2]):
            if user.role is Role.USER and answer.role is Role.ASSISTANT and answer.content.strip():
                out += [ChatMessage(Role.USER, user.content), ChatMessage(Role.ASSISTANT, answer.content)]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": self.created_at, "updated_at": self.updated_at,
                "workspace_path": self.workspace_path, "message_count": self.message_count or len(self.messages),
                "messages": [m.to_dict() for m in self.messages]}  # fmt: skip


def title_for(question: str, limit: int = 60) -> str:
    """A conversation's default title: its first question, on one line, shortened at a word."""
    text = " ".join(question.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


class ConversationStore:
    """Create, list, continue, rename and delete conversations in one application database."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    @property
    def conn(self) -> Any:
        """The calling thread's connection (the store keeps one per thread)."""
        return self.store.conn

    def create(self, title: str = "New conversation", workspace_path: str | None = None) -> Conversation:
        stamp = now()
        conversation = Conversation(uuid.uuid4().hex, title, stamp, stamp, workspace_path)
        self.conn.execute(
            "INSERT INTO conversations (id, title, workspace_path, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            (conversation.id, title, workspace_path, stamp, stamp),
        )
        return conversation

    def resolve(self, id_or_prefix: str) -> str:
        """The full id of a conversation from its id or a unique prefix of it (like git's short hashes)."""
        prefix = id_or_prefix.strip().lower()
        if not prefix:
            raise ConversationNotFoundError("no conversation id given")
        rows = self.conn.execute(
            "SELECT id FROM conversations WHERE id >= ? AND id < ? LIMIT 2", (prefix, prefix + "\uffff")
        ).fetchall()
        if not rows:
            raise ConversationNotFoundError(f"no conversation {id_or_prefix!r} (see `aintern conversations list`)")
        if len(rows) > 1:
            raise ConversationNotFoundError(f"{id_or_prefix!r} names more than one conversation; give more of the id")
        return str(rows[0][0])

    def get(self, id_or_prefix: str) -> Conversation:
        cid = self.resolve(id_or_prefix)
        row = self.conn.execute(
            "SELECT id, title, created_at, updated_at, workspace_path FROM conversations WHERE id = ?", (cid,)
        ).fetchone()
        conversation = Conversation(*row)
        conversation.messages = [
            Message(Role(r[1]), r[2], r[3], [Source.from_dict(s) for s in json.loads(r[4])], r[5], r[6], r[0])
            for r in self.conn.execute(
                "SELECT id, role, content, created_at, sources_json, model, status FROM messages "
                "WHERE conversation_id = ? ORDER BY id",
                (cid,),
            )
        ]
        conversation.message_count = len(conversation.messages)
        return conversation

    def list(self, workspace_path: str | None = None, limit: int = 50) -> list[Conversation]:
        """Most recently used first; only those of ``workspace_path`` when given."""
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at, c.workspace_path, "
            "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c"
        )
        params: tuple[Any, ...] = ()
        if workspace_path is not None:
            sql += " WHERE c.workspace_path = ?"
            params = (workspace_path,)
        rows = self.conn.execute(sql + " ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?", (*params, limit))
        return [Conversation(r[0], r[1], r[2], r[3], r[4], message_count=r[5]) for r in rows]

    def add_turn(self, conversation_id: str, question: str, answer: Message) -> None:
        """A question and its answer, stored together so the history always alternates."""
        stamp = now()
        with self.store.transaction():
            if self.conn.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone() is None:
                raise ConversationNotFoundError(f"conversation {conversation_id} was deleted")
            insert = (
                "INSERT INTO messages (conversation_id, role, content, created_at, sources_json, model, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)"
            )
            self.conn.execute(insert, (conversation_id, Role.USER.value, question, stamp, "[]", None, "complete"))
            self.conn.execute(insert, (
                conversation_id, Role.ASSISTANT.value, answer.content, answer.created_at,
                json.dumps([s.to_dict() for s in answer.sources]), answer.model, answer.status,
            ))  # fmt: skip
            self.conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (stamp, conversation_id))

    def rename(self, id_or_prefix: str, title: str) -> Conversation:
        if not title.strip():
            raise ValueError("a conversation's title cannot be empty")
        cid = self.resolve(id_or_prefix)
        self.conn.execute(
            "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?", (title.strip(), now(), cid)
        )
        return self.get(cid)

    def delete(self, id_or_prefix: str) -> None:
        cid = self.resolve(id_or_prefix)
        with self.store.transaction():
            self.conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
            self.conn.execute("DELETE FROM conversations WHERE id = ?", (cid,))
