"""The upload form (the page's JavaScript posts the same fields to the API)."""

from django import forms

from traces.core.reading.formats.registry import adapters


def format_options() -> list[dict[str, str]]:
    """Each format an upload may name, for the list page's own format menu (pages list
    formats through here and never import the readers themselves)."""
    return [{"name": a.name, "label": a.label} for a in adapters()]


def format_choices() -> list[tuple[str, str]]:
    return [("", "Detect automatically")] + [(a.name, a.label) for a in adapters()]


class UploadForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(required=False, choices=format_choices)
    name = forms.CharField(required=False, max_length=300)
    labels = forms.CharField(required=False, max_length=300)
    set = forms.CharField(required=False, max_length=200)
    mapping = forms.FileField(required=False)
