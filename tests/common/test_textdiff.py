"""common.textdiff: the common prefix and suffix every diff starts from."""

from hypothesis import given
from hypothesis import strategies as st

from common.textdiff import common_prefix, common_suffix

texts = st.text(alphabet="ab\U0001f600\n", max_size=40)


def _naive_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@given(texts, texts)
def test_common_prefix_is_the_longest_shared_start(a, b):
    assert common_prefix(a, b) == _naive_prefix(a, b)


@given(texts, texts)
def test_common_suffix_is_the_longest_shared_end(a, b):
    assert common_suffix(a, b) == _naive_prefix(a[::-1], b[::-1])


@given(texts, texts, texts)
def test_a_shared_start_and_end_are_found_around_a_change(head, middle, tail):
    a, b = head + middle + tail, head + tail
    assert common_prefix(a, b) >= len(head)
    assert common_suffix(a, b) >= len(tail)


def test_edges():
    assert common_prefix("", "abc") == common_suffix("", "abc") == 0
    assert common_prefix("abc", "abc") == common_suffix("abc", "abc") == 3
    assert common_prefix("abcx", "abcy") == 3
    assert common_suffix("xabc", "yabc") == 3
