"""Admin pages show each user only their own business's rows."""

from __future__ import annotations

import pytest

from tests.admin_forms import form_data
from tests.factories import FoodFactory, MemberFactory, StaffRoleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(client):
    role = StaffRoleFactory(role="owner")
    client.force_login(role.user)
    client.business = role.business
    return client


def test_admin_lists_only_own_business_rows(owner_client):
    FoodFactory(business=owner_client.business, name="Own oats")
    FoodFactory(name="Foreign oats")
    page = owner_client.get("/admin/nutrition/food/").content.decode()
    assert "Own oats" in page
    assert "Foreign oats" not in page


def test_admin_another_business_row_is_not_found(owner_client):
    foreign = MemberFactory()
    response = owner_client.get(f"/admin/gyms/member/{foreign.pk}/change/")
    assert response.status_code == 404


def test_admin_owner_cannot_point_a_row_at_another_business(owner_client, row_counts):
    foreign_food = FoodFactory()
    before = row_counts()
    response = owner_client.post(
        "/admin/nutrition/food/add/",
        {
            "business": foreign_food.business.pk,
            "name": "Sneaky",
            "kcal_per_100g": "1",
            "carbohydrates_per_100g": "1",
            "protein_per_100g": "1",
            "fat_per_100g": "1",
        },
    )
    assert response.status_code == 200  # the form comes back with its error
    assert row_counts() == before


def test_admin_staff_can_view_but_not_change(client):
    role = StaffRoleFactory(role="staff")
    food = FoodFactory(business=role.business)
    client.force_login(role.user)
    assert client.get("/admin/nutrition/food/").status_code == 200
    assert client.get("/admin/nutrition/food/add/").status_code == 403
    response = client.post(
        f"/admin/nutrition/food/{food.pk}/change/", {"name": "Changed"}
    )
    assert response.status_code == 403
    food.refresh_from_db()
    assert food.name != "Changed"


def test_admin_user_without_role_sees_no_gym_data(client):
    outsider = StaffRoleFactory().user
    outsider.gym_roles.all().delete()
    client.force_login(outsider)
    assert client.get("/admin/nutrition/food/").status_code == 403


def test_an_owner_sets_the_gyms_contact_details_in_the_admin(owner_client):
    """How members reach the gym is the owner's setting (issue 33, point 5)."""
    business = owner_client.business
    url = f"/admin/gyms/business/{business.pk}/change/"
    data = form_data(owner_client.get(url).content.decode(), "business_form")
    assert data["contact_details"] == ""

    data["contact_details"] = "Recepción: 910 000 000"
    response = owner_client.post(url, data)

    assert response.status_code == 302
    business.refresh_from_db()
    assert business.contact_details == "Recepción: 910 000 000"
