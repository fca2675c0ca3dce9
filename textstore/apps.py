from django.apps import AppConfig


class TextstoreConfig(AppConfig):
    name = "textstore"
    verbose_name = "Text store"
