from django.apps import AppConfig


class QuestionbankConfig(AppConfig):
    name = "questionbank"
