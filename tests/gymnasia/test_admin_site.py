"""The admin site refuses an address whose query string no database can take."""

from __future__ import annotations

import pytest

from tests.factories import StaffRoleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(client):
    client.force_login(StaffRoleFactory(role="owner").user)
    return client


@pytest.mark.parametrize(
    "page",
    [
        "/admin/tools/toolcalllog/?tool_name=%00",
        "/admin/tools/toolcalllog/?q=%00",
        "/admin/gyms/member/?q=ana%00",
        "/admin/nutrition/food/?o=%00",
        "/admin/nutrition/food/?%00=1",
        "/admin/autocomplete/?term=%00&app_label=nutrition&model_name=mealentry"
        "&field_name=food",
    ],
)
def test_admin_query_string_with_a_nul_character_is_a_bad_request(owner_client, page):
    """A list filter or an autocomplete handed a NUL character to PostgreSQL,
    which refused it: a server error."""
    response = owner_client.get(page)

    assert response.status_code == 400


def test_admin_query_string_without_a_nul_character_is_served(owner_client):
    response = owner_client.get("/admin/tools/toolcalllog/?tool_name=search_foods&q=a")

    assert response.status_code == 200


def test_admin_query_string_with_a_nul_character_asks_a_visitor_to_sign_in(client):
    """Sign-in comes first: the guard answers only people who may see the page."""
    response = client.get("/admin/tools/toolcalllog/?tool_name=%00")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_site_has_a_favicon_where_browsers_ask_for_it(client):
    """``/favicon.ico`` leads to Gymnasia's icon (no 404 on every page), and the
    pages name it."""
    asked = client.get("/favicon.ico")
    icon = client.get(asked.headers["Location"])

    assert asked.status_code == 301
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)
    assert 'rel="icon"' in client.get("/").text
