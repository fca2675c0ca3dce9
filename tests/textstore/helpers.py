"""Deterministic texts and edit histories for textstore tests."""

import random

WORDS = (
    "prompt model token latency cache shard replica queue budget review risk rollout "
    "metric trace quota region bucket snapshot delta chain version label"
).split()


def prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12)))
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)[:chars]


def small_edit(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.5:
        return text[:at] + " " + rng.choice(WORDS) + text[at:]
    return text[:at] + text[at + rng.randint(1, 8) :]


def history(seed: int, chars: int, versions: int) -> list[str]:
    rng = random.Random(seed)
    texts = [prose(rng, chars)]
    for _ in range(versions - 1):
        texts.append(small_edit(rng, texts[-1]))
    return texts
