"""A small gym built for the harness tests; two built alike must behave alike."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gymnasia.classes.models import Booking
from gymnasia.gyms.models import Business, Member
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.factories import (
    BusinessFactory,
    ClassSessionFactory,
    ClassTypeFactory,
    FoodFactory,
    MemberFactory,
    MembershipFactory,
)
from tools.dispatcher import CallContext, dispatch_tool_call
from tools.models import Integration
from tools.registry import published_registry
from tools.selection import ToolPolicy
from tools.services import integration_credentials_set
from tools.types import Mode, ToolCall, ToolResult

ID_KEYS = {"food_id", "entry_id", "session_id", "booking_id", "freeze_id", "payment_id"}
OPAQUE_KEYS = {
    "handoff_id",
    "handoff",
    "pending_action",
    "refund_id",
    "request_id",
}
#: Moments of a result (when a request was made): the two gyms' differ.
TIME_KEYS = {"created_at", "decided_at"}


@dataclass
class World:
    business: Business
    member: Member
    other_member: Member
    foreign_member: Member
    today: datetime.date
    ids: dict[str, int] = field(default_factory=dict)

    def connect_stripe(self, fake: Any, *, timeout: float = 1.0) -> None:
        """Connect the gym's Stripe account (a fake on loopback) and give the member
        a customer with two card payments."""
        integration = Integration.objects.create(
            business=self.business,
            kind=Integration.Kind.STRIPE,
            status=Integration.Status.CONNECTED,
            config={"base_url": fake.base_url, "timeout_seconds": timeout},
        )
        integration_credentials_set(integration=integration, secret_key=fake.secret_key)
        customer = fake.add_customer(email=self.member.email)
        self.ids["payment_id:monthly_fee"] = fake.add_charge(
            customer=customer,
            amount=4500,
            description="Cuota mensual",
            created=1_780_000_000,
        )
        self.ids["payment_id:towel"] = fake.add_charge(
            customer=customer, amount=1250, description="Toalla", created=1_770_000_000
        )
        stranger = fake.add_customer(email="someone.else@example.com")
        self.ids["payment_id:stranger"] = fake.add_charge(
            customer=stranger, amount=9900
        )

    def day(self, offset: int) -> str:
        return (self.today + datetime.timedelta(days=offset)).isoformat()

    def context(
        self,
        *,
        offered: dict[str, Mode] | None = None,
        conversation: str = "conversation-1",
        member: Member | str | None = "member",
    ) -> CallContext:
        who = self.member if member == "member" else member
        if offered is None:
            offered = {tool.name: "auto" for tool in published_registry()}
        return CallContext(
            business=self.business,
            member=who if not isinstance(who, str) else None,
            conversation_key=conversation,
            offered={name: ToolPolicy(mode=mode) for name, mode in offered.items()},
        )

    def call(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str = "call-1",
        **context: Any,
    ) -> ToolResult:
        return dispatch_tool_call(
            ToolCall(id=call_id, name=name, arguments=arguments),
            self.context(**context),
        )

    def normalize(self, value: Any, key: str = "") -> Any:
        """The result with ids replaced by the names they have in this world."""
        names = {(k.split(":")[0], v): k.split(":")[1] for k, v in self.ids.items()}
        if isinstance(value, dict):
            return {k: self.normalize(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.normalize(v, key) for v in value]
        if key in ID_KEYS:
            return names.get((key, value), "<new>")
        if key in OPAQUE_KEYS:
            return "<id>"
        if key in TIME_KEYS and value is not None:
            return "<time>"
        return value


def build_world() -> World:
    business = BusinessFactory()
    member = MembershipFactory(member__business=business).member
    member.email = f"{member.external_id}@example.com"
    member.save(update_fields=["email"])
    other_member = MembershipFactory(member__business=business).member
    today = business_today(business=business)
    world = World(
        business=business,
        member=member,
        other_member=other_member,
        foreign_member=MembershipFactory().member,
        today=today,
    )

    def food(name: str, label: str, carbs: str, aliases: str = "") -> None:
        made = FoodFactory(
            business=business,
            name=name,
            aliases=aliases,
            carbohydrates_per_100g=Decimal(carbs),
            kcal_per_100g=Decimal("130"),
        )
        world.ids[f"food_id:{label}"] = made.pk

    food("Arroz blanco (cocido)", "rice_white", "28.0", "arroz")
    food("Arroz integral (cocido)", "rice_brown", "23.5", "arroz")
    food("Copos de avena", "oats", "66.0", "avena")
    foreign_food = FoodFactory(
        business=world.foreign_member.business, name="Arroz salvaje"
    )
    world.ids["food_id:foreign_food"] = foreign_food.pk

    tomorrow = today + datetime.timedelta(days=1)
    zone = business.zone

    def session(label: str, hour: int, capacity: int, biz: Business = business) -> Any:
        starts = datetime.datetime.combine(
            tomorrow, datetime.time(hour, 0), tzinfo=zone
        )
        made = ClassSessionFactory(
            business=biz,
            class_type=ClassTypeFactory(business=biz, name=label.title()),
            starts_at=starts,
            ends_at=starts + datetime.timedelta(minutes=45),
            capacity=capacity,
            room="Sala 1",
            instructor="Marta",
        )
        world.ids[f"session_id:{label}"] = made.pk
        return made

    spinning = session("spinning", 18, 10)
    full = session("yoga", 19, 1)
    pilates = session("pilates", 20, 8)
    session("foreign_session", 18, 10, biz=world.foreign_member.business)
    Booking.objects.create(business=business, member=other_member, session=full)
    mine = Booking.objects.create(business=business, member=member, session=pilates)
    theirs = Booking.objects.create(
        business=business, member=other_member, session=spinning
    )
    world.ids["booking_id:my_booking"] = mine.pk
    world.ids["booking_id:their_booking"] = theirs.pk

    rice = world.ids["food_id:rice_white"]
    my_entry = MealEntry.objects.create(
        business=business,
        member=member,
        date=today,
        meal="lunch",
        food_id=rice,
        grams=150,
    )
    their_entry = MealEntry.objects.create(
        business=business,
        member=other_member,
        date=today,
        meal="lunch",
        food_id=rice,
        grams=80,
    )
    world.ids["entry_id:my_entry"] = my_entry.pk
    world.ids["entry_id:their_entry"] = their_entry.pk
    MemberFactory(business=business)  # a member without a membership
    return world
