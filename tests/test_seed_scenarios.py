"""The seed's own integration scenarios (v0.7.4, KnowledgeServiceIntegrationTests), with its defaults,
in a 2-file workspace and again with the same two files among 2,000 others: relevance must mean the
same thing at both ends (BM25's IDF does not: in a 2-chunk index every term's IDF is floored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aintern.assemble.context import ContextBuildOptions, ContextFormat
from aintern.index import Indexer
from aintern.index.tier import fill_tier
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.names import spelled_names
from aintern.store import SqliteStore

USER_SERVICE = """
namespace TestApp;

public class UserService
{
    private readonly IUserRepository _repository;

    public UserService(IUserRepository repository)
    {
        _repository = repository;
    }

    public async Task<User> GetUserByIdAsync(int id)
    {
        return await _repository.FindByIdAsync(id);
    }

    public async Task<User> CreateUserAsync(string name, string email)
    {
        var user = new User { Name = name, Email = email };
        return await _repository.SaveAsync(user);
    }
}
"""

USER = """
namespace TestApp;

public class User
{
    public int Id { get; set; }
    public string Name { get; set; }
    public string Email { get; set; }
}
"""

#: Distractors for the large end: C# services over other entities, with the same shapes and words.
ENTITIES = ["Order", "Invoice", "Product", "Shipment", "Payment", "Review", "Coupon", "Warehouse", "Supplier", "Ticket"]
VERBS = ["Archive", "Export", "Validate", "Merge", "Schedule", "Notify", "Price", "Audit", "Sync", "Rank"]


def distractor(n: int) -> str:
    entity, verb = ENTITIES[n % len(ENTITIES)], VERBS[(n // len(ENTITIES)) % len(VERBS)]
    return f"""namespace Shop.Module{n};

public class {entity}{verb}er{n}
{{
    private readonly I{entity}Store _store;

    public async Task<{entity}> {verb}{entity}Async(int {entity.lower()}Number, string reason)
    {{
        var item = await _store.Load{entity}Async({entity.lower()}Number);
        item.Status = "{verb.lower()}d: " + reason;
        return await _store.Save{entity}Async(item);
    }}
}}
"""


def build(root: Path, distractors: int) -> Path:
    root.mkdir()
    (root / "UserService.cs").write_text(USER_SERVICE)
    (root / "User.cs").write_text(USER)
    for n in range(distractors):
        folder = root / f"module{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"Service{n}.cs").write_text(distractor(n))
    return root.resolve()


@pytest.fixture(
    scope="module",
    params=[(0, False), (2000, False), (0, True), (200, True)],
    ids=["2 files", "2002 files", "2 files, full tier", "202 files, full tier"],
)
def seed_workspace(request, static, minilm, tmp_path_factory):  # type: ignore[no-untyped-def]
    distractors, full_tier = request.param
    root = build(tmp_path_factory.mktemp("seed") / "ws", distractors)
    store = SqliteStore(root.parent / "seed.db")
    result = Indexer(store, static).index(root)
    assert result.files_indexed == distractors + 2
    if full_tier:  # the transformer's vectors, with the tier's own fusion weights and relevance constants
        with store.transaction():
            store.create_vector_tier(result.index_id, minilm.model_id, minilm.dimension)
        assert fill_tier(store, result.index_id, minilm).complete
    service = KnowledgeService(store)
    question = KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0)
    assert service.query("user", question).vector_model == (minilm.model_id if full_tier else static.model_id)
    service.full_tier = full_tier  # type: ignore[attr-defined]
    yield root, service
    store.close()


def test_get_user_by_id_finds_the_service_above_the_seed_threshold(seed_workspace) -> None:  # type: ignore[no-untyped-def]
    root, service = seed_workspace
    result = service.query(
        "How do I get a user by ID?", KnowledgeQueryOptions(workspace_path=str(root), max_results=5, min_relevance=0.5)
    )
    assert result.has_results, "nothing reached the seed's MinRelevance 0.5"
    assert result.chunks[0].file_path == "UserService.cs", [(c.file_path, c.relevance) for c in result.chunks]
    assert result.chunks[0].relevance >= 0.5


def test_build_context_for_user_management_is_not_empty(seed_workspace) -> None:  # type: ignore[no-untyped-def]
    root, service = seed_workspace
    # The transformer finds this vague question less like the code than the static model does (cosine
    # 0.17 against 0.27), and its calibrated relevance says so (0.38): with the full tier the seed's
    # scenario needs a threshold of 0.3 (docs/benchmarks.md, section 10).
    threshold = 0.3 if service.full_tier else 0.5
    built = service.build_context(
        "Tell me about User management",
        str(root),
        ContextBuildOptions(max_tokens=500, format=ContextFormat.MARKDOWN, min_relevance=threshold),
    )
    assert built.context.strip(), "empty context"
    assert len(built.context) < 2500
    assert "UserService.cs" in built.context or "User.cs" in built.context


def test_nonsense_stays_below_the_threshold(seed_workspace) -> None:  # type: ignore[no-untyped-def]
    root, service = seed_workspace
    result = service.query("zzqx blorf wibble", KnowledgeQueryOptions(workspace_path=str(root)))
    assert not result.has_results, [(c.file_path, c.relevance) for c in result.chunks]


def test_words_that_spell_a_definition_name_find_it(seed_workspace) -> None:  # type: ignore[no-untyped-def]
    root, service = seed_workspace
    store = service.store
    index = store.get_index_for_workspace(root)
    found = spelled_names(store, index.id, "How do I get a user by ID?")
    assert found.get("GetUserByIdAsync") == 1.0  # get, user, id: every content word of the question
    assert spelled_names(store, index.id, "how to create a user")["CreateUserAsync"] == 1.0
    # "UserServ" starts UserService, but not at a word boundary: no match.
    assert "UserService" not in spelled_names(store, index.id, "the user serv")
    assert spelled_names(store, index.id, "how does it work") == {}
    # An identifier the question names is not words spelled out: its parts spell no other name
    # (`dynamic_format_arg_store` once boosted `format_arg_store`; here `GetUserByIdAsync` and `UserById`).
    assert spelled_names(store, index.id, "where is get_user_by_id_cached defined") == {}
    assert spelled_names(store, index.id, "what calls FindUserByIdentity") == {}
    # A server holds the names in memory: the same lookups, the same answers.
    resident = SqliteStore(store.path)
    resident.keep_in_memory()
    assert resident.memory is not None and resident.memory.defined_names(index.id) is not None
    prefixes = ["Get", "GetUser", "User", "u", "", "Zz", "GetUserByIdAsync", "GetUserByIdAsyncX"]
    assert resident.names_starting(index.id, prefixes) == store.names_starting(index.id, prefixes)
    assert resident.names_starting(index.id, prefixes, limit=1) == store.names_starting(index.id, prefixes, limit=1)
    for question in ["How do I get a user by ID?", "how to create a user", "the user serv"]:
        assert spelled_names(resident, index.id, question) == spelled_names(store, index.id, question)
    resident.close()
