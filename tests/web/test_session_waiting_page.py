"""The session page before the first call: it tells the SDKs where the proxy listens,
addresses taken from the URLconf rather than built by hand."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_waiting_page_names_the_proxy_base_urls(client):
    page = client.get(reverse("capture:session-page", args=["w10b-demo"]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "http://testserver/proxy/s/w10b-demo/anthropic" in text
    assert "http://testserver/proxy/s/w10b-demo/openai/v1" in text
