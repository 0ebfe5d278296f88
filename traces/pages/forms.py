"""The upload form (the page's JavaScript posts the same fields to the API)."""

from django import forms

from traces.services.ingest import upload_formats


def format_options() -> list[dict[str, str]]:
    """Each format an upload may name, for the list page's own format menu."""
    return [{"name": name, "label": label} for name, label in upload_formats()]


def format_choices() -> list[tuple[str, str]]:
    return [("", "Detect automatically"), *upload_formats()]


class UploadForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(required=False, choices=format_choices)
    name = forms.CharField(required=False, max_length=300)
    labels = forms.CharField(required=False, max_length=300)
    set = forms.CharField(required=False, max_length=200)
    mapping = forms.FileField(required=False)
