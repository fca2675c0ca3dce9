"""Page builders of the review desk: typed objects the views render (pages/<concept>.py)."""
