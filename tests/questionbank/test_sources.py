"""Source honesty: the bank marks each statement as reported by the pool or a practice
suggestion, and everything it marks as reported can be found in the pool, figures unchanged.

The pool is `../shared/question-pool.txt` beside the repository (CI keeps it there). From a git
worktree, "beside the repository" means beside the main checkout the worktree belongs to.
`REDLINE_QUESTION_POOL` points at another copy.
"""

import os
import re
from pathlib import Path

import pytest

from questionbank.estimators.registry import ESTIMATORS
from questionbank.seed import questions_read

REPO = Path(__file__).resolve().parents[2]
POOL_NAME = Path("shared") / "question-pool.txt"


def _pool_path() -> Path | None:
    if os.environ.get("REDLINE_QUESTION_POOL"):
        return Path(os.environ["REDLINE_QUESTION_POOL"])
    candidates = [REPO.parent / POOL_NAME]
    git = REPO / ".git"
    if git.is_file():  # a worktree: ".git" names <main checkout>/.git/worktrees/<name>
        gitdir = Path(git.read_text().split(":", 1)[1].strip())
        candidates.append(gitdir.parent.parent.parent.parent / POOL_NAME)
    return next((path for path in candidates if path.is_file()), None)


POOL_PATH = _pool_path()


@pytest.fixture(scope="module")
def pool() -> str:
    if POOL_PATH is None:
        pytest.skip(
            "question pool not found: expected ../shared/question-pool.txt beside the repository "
            "(or set REDLINE_QUESTION_POOL)"
        )
    return POOL_PATH.read_text(encoding="utf-8")


NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
NUMBER_WORDS = (
    "two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty "
    "fifty sixty hundred hundreds thousand thousands million billion half quarter dozen"
).split()
# Claims the bank used to make about how rounds run, which the pool never makes.
NEVER_REPORTED = [
    "four to six pages",
    "first ten minutes",
    "five minutes",
    "fifteen minutes",
    "twenty minutes",
    "last ten minutes",
    "several devices",
    "45 minutes",
]


def numbers_in(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def number_words_in(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower())
    return {word for word in words if word in NUMBER_WORDS}


def reported_texts() -> list[tuple[str, str]]:
    """(where, text) for every statement the bank marks as reported by the pool."""
    out = []
    for question in questions_read():
        slug = question["slug"]
        for key in ("summary", "round", "prompt"):
            out.append((f"{slug}.{key}", question[key]))
        for area in question["depth_areas"]:
            if area["source"] == "pool":
                out.append((f"{slug} depth area {area['title']!r}", area["detail"]))
        for follow_up in question["follow_ups"]:
            if follow_up["source"] == "pool":
                out.append((f"{slug} probe {follow_up['probe'][:40]!r}", follow_up["probe"]))
            if follow_up["look_for_source"] == "pool":
                out.append((f"{slug} answer to {follow_up['probe'][:40]!r}", follow_up["look_for"]))
        for number in question["numbers"]:
            if number["source"] == "pool":
                text = " ".join(
                    number[k] for k in ("label", "inputs", "calculation", "result", "takeaway")
                )
                out.append((f"{slug} number {number['label']!r}", text))
    return out


def all_texts() -> list[tuple[str, str]]:
    out = []
    for question in questions_read():
        for key in ("title", "summary", "round", "prompt"):
            out.append((f"{question['slug']}.{key}", question[key]))
        for group in ("depth_areas", "follow_ups", "numbers"):
            for index, item in enumerate(question[group]):
                for key, value in item.items():
                    if "source" not in key:
                        out.append((f"{question['slug']}.{group}[{index}].{key}", value))
    return out


def test_every_statement_is_marked():
    for question in questions_read():
        for area in question["depth_areas"]:
            assert area["source"] in ("pool", "practice"), area
            assert area["detail"] or area["practice_note"], area
            if area["source"] == "practice":
                assert not area["detail"], "practice text belongs in practice_note"
        for follow_up in question["follow_ups"]:
            assert follow_up["source"] in ("pool", "practice")
            assert follow_up["look_for_source"] in ("pool", "practice")
        for number in question["numbers"]:
            assert number["source"] in ("pool", "practice")


def test_every_reported_number_appears_in_the_pool_unchanged(pool):
    in_pool = numbers_in(pool)
    words_in_pool = number_words_in(pool)
    problems = []
    for where, text in reported_texts():
        for number in sorted(numbers_in(text) - in_pool):
            problems.append(f"{where}: {number} is not in the pool")
        for word in sorted(number_words_in(text) - words_in_pool):
            problems.append(f"{where}: {word!r} is not in the pool")
    assert not problems, "\n".join(problems)


def test_the_pools_numbers_appear_in_the_bank(pool):
    reported = set().union(*(numbers_in(text) for _, text in reported_texts()))
    missing = numbers_in(pool) - reported
    assert not missing, f"pool figures the bank does not report: {sorted(missing)}"


def test_claims_the_pool_never_makes_are_gone(pool):
    """None of them is stated as fact; a practice scenario may still use such a figure."""
    for phrase in NEVER_REPORTED:
        assert phrase not in pool.lower()
        for where, text in reported_texts():
            assert phrase not in text.lower(), f"{where} says {phrase!r}"


def test_the_one_device_rule_of_the_chat_question_is_kept(pool):
    assert "one device per user" in pool
    chat = next(q for q in questions_read() if q["slug"] == "one-to-one-chat")
    assert "single device" in chat["prompt"]
    assert "one device" in chat["round"]


def test_rounds_last_the_hour_the_pool_speaks_of(pool):
    assert "spends the hour" in pool
    assert {q["duration_minutes"] for q in questions_read()} == {60}


def test_no_sentence_is_copied_from_the_pool(pool):
    """Facts and figures from the pool, words of our own: no run of eight words in common."""

    def shingles(text: str, size: int = 8) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}

    pool_shingles = shingles(pool)
    copied = [
        (where, " ".join(common))
        for where, text in all_texts()
        for common in shingles(text) & pool_shingles
    ]
    assert not copied, "\n".join(f"{where}: {words}" for where, words in copied)


def test_estimator_presets_marked_pool_come_from_the_pool(pool):
    in_pool = {number.replace(",", "") for number in numbers_in(pool)}
    for estimator in ESTIMATORS.values():
        for name, preset in estimator.presets.items():
            if preset.source != "pool":
                continue
            if preset.evidence:
                assert preset.evidence in pool, (estimator.slug, name)
            else:
                assert preset.value in in_pool, (estimator.slug, name, preset.value)


def test_the_question_page_shows_the_marks(client, db):
    html = client.get("/questions/checkpoint-distribution/").content.decode()
    assert html.count('class="src src-pool"') >= 10
    assert 'class="src src-practice"' in html
    assert "Reported" in html or "reported by the question pool" in html
