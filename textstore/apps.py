from django.apps import AppConfig


class TextstoreConfig(AppConfig):
    name = "textstore"
