"""CSV cells a spreadsheet will not run (OWASP, "CSV Injection").

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read as a formula by
Excel, LibreOffice and Google Sheets, so user text exported as it is can run when the file is
opened. Every CSV the app writes passes its cells through `csv_cell`, which puts a `'` in front
of such a text (the spreadsheet then shows it as text, quote hidden). Numbers are left alone; the
JSON and JSONL exports keep the text exactly.
"""

from collections.abc import Iterable
from typing import Final

FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """`value`, with a leading `'` if it is a text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(values: Iterable[object]) -> list[object]:
    """Every cell of a row through `csv_cell`."""
    return [csv_cell(value) for value in values]
