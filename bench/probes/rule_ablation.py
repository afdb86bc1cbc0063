"""Each ranking rule left out once, against today's default, from ``eval_retrieval.py --per-query`` files
(docs/research/2026-11-29-rule-ablation.md). Reads tree means only: the per-question scores of the
never-looked-at sets (bench/README.md) are averaged, never printed.

    # one per-query file per set, every configuration in one process per set:
    python bench/eval_retrieval.py semble --oof --config default,file_evidence=0.0,... --per-query /tmp/r/dev.json
    SEMBLE_SET=bench/sets/own9 SEMBLE_CORPORA=/tmp/own9/corpora python bench/eval_retrieval.py semble \\
        --config default,file_evidence=0.0,... --per-query /tmp/r/own9.json
    python bench/probes/rule_ablation.py /tmp/r/*.json

Per configuration: the change against ``default`` on dev folds A and B (by repository, as ``--oof`` splits
them), on the looked-at own trees and on the never-looked-at ones, and the trees it lowers and lifts
(``pays on``: the trees that lose without the rule), not counting the trees the rule was read from.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from every_set import NEVER_LOOKED_AT  # noqa: E402

#: The trees each rule was read from (the research notes' sections; "dev": chosen on the dev split, so
#: only the own trees count as trees it was not read from).
READ_FROM: dict[str, set[str]] = {
    "pool": {"dev"}, "file_vector_weight": {"dev"}, "alpha_long": {"dev"}, "definition_boost": {"dev"},
    "path_boost": {"dev"}, "path_penalties": {"dev"}, "prose_weight": {"dev"}, "named_symbol_boost": {"dev"},
    "spelled_name_boost": {"dev"}, "file_saturation": {"dev"}, "abbreviations": {"dev"}, "base_forms": {"dev"},
    "drop_copies": {"dev"}, "demote_generated": {"dev"}, "demote_samples": {"dev"}, "file_evidence": {"dev"},
    "symbol_file_boost": {"dev"}, "platform_weight": {"libuv", "reqwest", "hono"}, "changelog_weight": {"flask", "click"},
    "extension_weight": {"swift-nio"}, "struct_tags": {"nginx"}, "acronyms": {"ci4", "vite"},
    "short_capitals": {"ci4", "vite"}, "phrasal_verbs": {"tesla", "libgit2"}, "error_class_weight": {"typeorm", "dbal"},
    "header_twin_weight": {"libgit2", "libevent"}, "languages": {"carbon"},
}  # fmt: skip


def load(files: list[Path]) -> tuple[dict[str, dict[str, float]], dict[str, str], list[str]]:
    """Per tree and configuration, the mean score; each tree's set; the dev trees in repos.json order."""
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    set_of: dict[str, str] = {}
    dev: list[str] = []
    for f in files:
        for key, (score, _) in json.loads(f.read_text()).items():
            config, rest = key.split(" ", 1)
            tree = rest.split(": ", 1)[0]
            scores[(tree, config)].append(score)
            if tree not in set_of:
                set_of[tree] = f.stem
                if f.stem == "dev":
                    dev.append(tree)
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for (tree, config), values in scores.items():
        table[tree][config] = statistics.mean(values)
    return table, set_of, dev


def main() -> None:
    table, set_of, dev = load([Path(a) for a in sys.argv[1:]])
    groups = {
        "dev A": dev[: len(dev) // 2],
        "dev B": dev[len(dev) // 2 :],
        "own looked-at": [t for t, s in set_of.items() if s != "dev" and s not in NEVER_LOOKED_AT],
        "own never": [t for t, s in set_of.items() if s in NEVER_LOOKED_AT],
        "own all": [t for t, s in set_of.items() if s != "dev"],
    }
    configs = list(next(iter(table.values())))
    base = {g: statistics.mean(table[t]["default"] for t in trees) for g, trees in groups.items() if trees}
    print("default " + " ".join(f"{g}={v:.4f}" for g, v in base.items()))
    print("| left out | " + " | ".join(f"Δ {g}" for g in base) + " | pays on (not read from) | lowers on | verdict |")
    for config in configs[1:]:
        field = config.split("=", 1)[0]
        source = READ_FROM.get(field, set())
        deltas = {g: statistics.mean(table[t][config] for t in trees) - base[g] for g, trees in groups.items() if trees}
        others = [t for t in table if t not in source and not ("dev" in source and set_of[t] == "dev")]
        pays = sorted(t for t in others if table[t][config] < table[t]["default"] - 1e-9)
        lowers = sorted(t for t in others if table[t][config] > table[t]["default"] + 1e-9)
        # The test: a rule goes if leaving it out costs under 0.002 on every group, or if it pays on
        # fewer than three trees it was not read from.
        cheap = all(d > -0.002 for g, d in deltas.items() if g != "own all")
        verdict = "remove" if cheap or len(pays) < 3 else "keep"
        print(
            f"| {config} | " + " | ".join(f"{d:+.4f}" for d in deltas.values())
            + f" | {len(pays)} ({', '.join(pays[:8])}{'…' if len(pays) > 8 else ''}) | {len(lowers)} | {verdict} |"
        )  # fmt: skip


if __name__ == "__main__":
    main()
