"""Answers: RAG chat over the knowledge service, with conversations and citations."""

from aintern.answer.conversations import Conversation, ConversationStore, Message, Source
from aintern.answer.llm import LLM, ChatMessage, InferenceOptions, Role, get_llm
from aintern.answer.rag import ChatAnswer, RagChatOptions, RagChatService, RagContextPreview

__all__ = [
    "LLM",
    "ChatAnswer",
    "ChatMessage",
    "Conversation",
    "ConversationStore",
    "InferenceOptions",
    "Message",
    "RagChatOptions",
    "RagChatService",
    "RagContextPreview",
    "Role",
    "Source",
    "get_llm",
]
