"""Factories for the gym domain's test data."""

from __future__ import annotations

import datetime
from decimal import Decimal

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from gymnasia.classes.models import ClassSession, ClassType
from gymnasia.gyms.models import Business, Member, StaffRole
from gymnasia.gyms.services import staff_role_grant
from gymnasia.memberships.models import Membership
from gymnasia.nutrition.models import Food
from gymnasia.nutrition.services import food_search_text


class BusinessFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Business

    name = factory.Sequence(lambda n: f"Gym {n}")
    slug = factory.Sequence(lambda n: f"gym-{n}")
    time_zone = "Europe/Madrid"
    language = "es"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    is_staff = True
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def saved(self, create: bool, extracted: object, **kwargs: object) -> None:
        if create:
            self.save()


class StaffRoleFactory(factory.django.DjangoModelFactory):
    """A role granted as the app grants it: with the group of that role."""

    class Meta:
        model = StaffRole

    business = factory.SubFactory(BusinessFactory)
    user = factory.SubFactory(UserFactory)
    role = StaffRole.Role.OWNER

    @classmethod
    def _create(
        cls, model_class: type[StaffRole], *args: object, **kwargs: object
    ) -> StaffRole:
        return staff_role_grant(**kwargs)  # type: ignore[arg-type]


class MemberFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Member

    business = factory.SubFactory(BusinessFactory)
    external_id = factory.Sequence(lambda n: f"member-{n}")
    name = factory.Sequence(lambda n: f"Member {n}")
    language = "es"


class FoodFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Food

    business = factory.SubFactory(BusinessFactory)
    name = factory.Sequence(lambda n: f"Food {n}")
    aliases = ""
    kcal_per_100g = Decimal("100")
    carbohydrates_per_100g = Decimal("10")
    protein_per_100g = Decimal("5")
    fat_per_100g = Decimal("2")
    search_text = factory.LazyAttribute(
        lambda o: food_search_text(name=o.name, aliases=o.aliases)
    )


class ClassTypeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClassType

    business = factory.SubFactory(BusinessFactory)
    name = factory.Sequence(lambda n: f"Class {n}")


class ClassSessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClassSession

    business = factory.SubFactory(BusinessFactory)
    class_type = factory.SubFactory(
        ClassTypeFactory, business=factory.SelfAttribute("..business")
    )
    starts_at = factory.LazyFunction(
        lambda: timezone.now() + datetime.timedelta(days=1)
    )
    ends_at = factory.LazyAttribute(
        lambda o: o.starts_at + datetime.timedelta(minutes=45)
    )
    capacity = 10
    instructor = "Marta"
    room = "Sala 1"


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    member = factory.SubFactory(MemberFactory)
    business = factory.SelfAttribute("member.business")
    plan = "Monthly"
    status = Membership.Status.ACTIVE
    starts_on = factory.LazyFunction(
        lambda: timezone.localdate() - datetime.timedelta(days=10)
    )
    ends_on = factory.LazyFunction(
        lambda: timezone.localdate() + datetime.timedelta(days=200)
    )
