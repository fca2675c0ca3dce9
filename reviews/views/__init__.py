"""The review desk's pages: documents, reviews, threads (views/<concept>.py)."""
