"""A version's content and its texts: the content's shape and validation (`content`), long texts
a range at a time (`ranges`), diffs between versions (`diffing`), uploads of large texts
(`uploads`), and what the browser editor starts from (`editor`)."""
