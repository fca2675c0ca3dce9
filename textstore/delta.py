"""Exact text deltas in diff-match-patch's delta format.

A delta is `diff_toDelta` of an exact diff (`diff_main`, line mode for long texts, then
`diff_cleanupEfficiency`, which only merges operations and never changes what they produce).
There is no fuzzy patching here: a delta either rebuilds its target exactly or is rejected.

Reading a delta back is `diff_fromDelta`'s job, with one fast path. `diff_fromDelta` counts in
UTF-16 code units, so it re-encodes the whole source to UTF-16 and decodes every copied span;
on a 100 KB source that is ~60 µs per delta plus ~2.5 µs per operation, which made a cold read
at the end of a long chain miss the 10 ms median target (bench/storage.py: 10.9 ms median,
22.7 ms worst). When the source has no character outside the Basic Multilingual Plane, UTF-16
units and Python's code points coincide, and `_apply_bmp` performs the same operations by
slicing the str directly, with the same checks (unknown operation, bad or negative count,
delta not spanning the whole source: ValueError). Sources with astral characters (emoji) go
through `diff_fromDelta` itself. Every write checks that both readers rebuild the new text
before a delta is stored, and every read verifies the SHA-256 of the result, so the two can
never silently disagree.
"""

from urllib.parse import unquote

from diff_match_patch import diff_match_patch

# Past this the diff settles for a larger (still exact) delta rather than searching longer.
DIFF_TIMEOUT_SECONDS = 0.5


def _dmp() -> diff_match_patch:
    dmp = diff_match_patch()
    dmp.Diff_Timeout = DIFF_TIMEOUT_SECONDS
    return dmp


def delta_compute(*, source: str, target: str) -> str:
    """A delta that turns `source` into `target` (lengths counted as diff-match-patch does)."""
    dmp = _dmp()
    # checklines=True makes diff_main diff line by line first when both texts are long.
    diffs = dmp.diff_main(source, target, True)
    dmp.diff_cleanupEfficiency(diffs)
    delta: str = dmp.diff_toDelta(diffs)
    return delta


def delta_apply_reference(*, source: str, delta: str) -> str:
    """`diff_fromDelta`, then the target text; ValueError if the delta does not fit."""
    diffs = _dmp().diff_fromDelta(source, delta)
    return "".join(text for op, text in diffs if op != diff_match_patch.DIFF_DELETE)


def _is_bmp(text: str) -> bool:
    """True when every character is one UTF-16 code unit."""
    return text.isascii() or len(text.encode("utf-16-le")) == 2 * len(text)


def _apply_bmp(source: str, delta: str) -> str:
    pieces: list[str] = []
    pointer = 0
    for token in delta.split("\t"):
        if not token:
            continue  # blank tokens are allowed, as in diff_fromDelta
        op = token[0]
        if op == "+":
            param = token[1:]
            pieces.append(unquote(param) if "%" in param else param)
            continue
        if op != "=" and op != "-":
            raise ValueError(f"invalid operation in delta: {op!r}")
        count = int(token[1:])  # ValueError on a bad number, as in diff_fromDelta
        if count < 0:
            raise ValueError(f"negative number in delta: {token[1:]!r}")
        if op == "=":
            pieces.append(source[pointer : pointer + count])
        pointer += count
    if pointer != len(source):
        raise ValueError(f"delta spans {pointer} characters, source has {len(source)}")
    return "".join(pieces)


def _compose_bmp(source: str, deltas: list[str]) -> str | None:
    """`deltas` applied one after the other to `source`, building only the final text.

    The text between deltas is kept as pieces — spans of `source` and inserted strings — so a
    run of k deltas copies the text once instead of k times. None when an inserted string has a
    character outside the BMP (a later delta would count it as two units): the caller then
    applies the deltas one by one. ValueError as in `_apply_bmp` when a delta does not fit.
    """
    # A piece is (text, start, end): the characters text[start:end].
    pieces: list[tuple[str, int, int]] = [(source, 0, len(source))] if source else []
    length = len(source)
    for delta in deltas:
        result: list[tuple[str, int, int]] = []
        index, offset, pointer = 0, 0, 0  # the next piece, the position in it, in the text
        for token in delta.split("\t"):
            if not token:
                continue
            op = token[0]
            if op == "+":
                param = token[1:]
                text = unquote(param) if "%" in param else param
                if not _is_bmp(text):
                    return None
                if text:
                    result.append((text, 0, len(text)))
                continue
            if op != "=" and op != "-":
                raise ValueError(f"invalid operation in delta: {op!r}")
            count = int(token[1:])
            if count < 0:
                raise ValueError(f"negative number in delta: {token[1:]!r}")
            pointer += count
            while count and index < len(pieces):
                text, start, end = pieces[index]
                take = min(count, end - start - offset)
                if op == "=":
                    result.append((text, start + offset, start + offset + take))
                count -= take
                offset += take
                if start + offset == end:
                    index, offset = index + 1, 0
        if pointer != length:
            raise ValueError(f"delta spans {pointer} characters, source has {length}")
        pieces = result
        length = sum(end - start for _, start, end in pieces)
    return "".join(text[start:end] for text, start, end in pieces)


def delta_apply_many(*, source: str, deltas: list[str]) -> str:
    """The text the `deltas` produce one after the other from `source` (ValueError if one does
    not fit); the same result as applying them one by one, without the texts in between."""
    if len(deltas) > 1 and _is_bmp(source):
        composed = _compose_bmp(source, deltas)
        if composed is not None:
            return composed
    for delta in deltas:
        source = delta_apply(source=source, delta=delta)
    return source


def delta_apply(*, source: str, delta: str) -> str:
    """The text `delta` produces from `source`; ValueError if it does not fit `source`."""
    if _is_bmp(source):
        return _apply_bmp(source, delta)
    return delta_apply_reference(source=source, delta=delta)
