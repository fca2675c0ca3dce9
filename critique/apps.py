from django.apps import AppConfig


class CritiqueConfig(AppConfig):
    """The bridge between the playground and the review desk (docs/critique.md). It calls both
    through their services and selectors and registers its hooks here; neither imports it."""

    name = "critique"

    def ready(self) -> None:
        from evals.services.grader_registry import grader_register
        from playground.runs.providers.fixture import fixture_replies_register
        from reviews.panels import panel_register

        from .grader import answer_key_grade, answer_key_parse, answer_key_reason_visible
        from .panels import draft_panel, leaderboard_panel
        from .recorded import recorded_reply

        fixture_replies_register(name="critique", resolver=recorded_reply)
        grader_register(
            type="answer-key",
            grade_fn=answer_key_grade,
            parse_fn=answer_key_parse,
            label="Answer key: score the critique against the practice document's key",
            reason_visible=answer_key_reason_visible,
        )
        panel_register(slot="review", name="critique", provider=draft_panel)
        panel_register(slot="practice", name="critique", provider=leaderboard_panel)
