from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.contrib.auth.models import User


class SignUpForm(UserCreationForm):
    class Meta:  # UserCreationForm.Meta's, spelled out: django-stubs does not declare it
        model = User
        fields = ("username",)
        field_classes = {"username": UsernameField}
