"""A version exported as real API calls (`api_calls`: curl, Python, TypeScript, JSON), and
exports of versions with long texts at a bounded cost (`long_texts`)."""
