"""/rules/ lists every rule; /rules/<id>/ explains one, generated from its docstring."""

import pytest

from traces.core.analysis.rules.registry import rules

pytestmark = pytest.mark.django_db


def test_rule_list_names_every_rule(client):
    html = client.get("/rules/").content.decode()
    for rule in rules():
        assert f'href="/rules/{rule.id}/"' in html


@pytest.mark.parametrize("rule_id", [rule.id for rule in rules()])
def test_rule_page_has_every_section(client, rule_id):
    html = client.get(f"/rules/{rule_id}/").content.decode()
    for heading in ("What it finds", "Why it matters", "Example", "How to fix"):
        assert f"<h2>{heading}</h2>" in html
    assert f"--ignore {rule_id}" in html


def test_unknown_rule_is_404(client):
    assert client.get("/rules/no-such-rule/").status_code == 404
