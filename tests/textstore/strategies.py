"""Hypothesis strategies for texts and edit sequences that stress the delta format."""

from typing import Literal

from hypothesis import strategies as st

# Characters that have broken delta encoders before: separators of the delta format itself,
# percent-escapes, CR/LF, astral-plane characters (two UTF-16 units), emoji sequences with
# modifiers and joiners, combining marks, a BOM and NUL.
AWKWARD = [
    "\t", "\r", "\n", "\r\n", "%", "%25", "+", "=", "-", " ", "é", "中", "\u0301", "\ufeff",
    "\x00", "😀", "👍🏽", "👩‍💻", "𝔸", "\U0010fffd", "a", "b", "line\n",
]  # fmt: skip

SURROGATES: tuple[Literal["Cs"]] = ("Cs",)

characters = st.one_of(
    st.sampled_from(AWKWARD),
    st.characters(blacklist_categories=SURROGATES),  # lone surrogates cannot be UTF-8
)
texts = st.lists(characters, max_size=60).map("".join)
lines = st.lists(st.sampled_from(["alpha ", "beta\t", "γάμμα ", "😀 ", "\r\n", "\n"]), max_size=8)
line_texts = st.lists(lines.map("".join), max_size=40).map("\n".join)
any_text = st.one_of(texts, line_texts)

edit = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 10**6), texts),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(0, 40)),
    st.tuples(st.just("replace"), st.integers(0, 10**6), st.integers(0, 40), texts),
    st.tuples(st.just("new"), any_text),
    st.tuples(st.just("empty")),
    st.tuples(st.just("crlf")),
    st.tuples(st.just("tabs")),
)


def apply_edit(text: str, op: tuple) -> str:
    kind = op[0]
    if kind == "insert":
        at = op[1] % (len(text) + 1)
        return text[:at] + op[2] + text[at:]
    if kind == "delete":
        at = op[1] % (len(text) + 1)
        return text[:at] + text[at + op[2] :]
    if kind == "replace":
        at = op[1] % (len(text) + 1)
        return text[:at] + op[3] + text[at + op[2] :]
    if kind == "new":
        return op[1]
    if kind == "empty":
        return ""
    if kind == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.replace("    ", "\t")


histories = st.tuples(any_text, st.lists(edit, min_size=1, max_size=12))
