"""The demo gym: data and the idempotent service that puts it in place.

``demo_gym_seed`` brings the database to the demo state and creates only what is
missing, so running it twice in a row changes nothing the second time. The demo
state includes, for every demo member, an active membership running at least
``MEMBERSHIP_DAYS_AHEAD`` days from today with no freeze, so the demo's
conversations (freeze my membership, book a class) can be tried again.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from gymnasia.classes.models import ClassType
from gymnasia.classes.services import class_session_schedule
from gymnasia.gyms.models import Business, Member, StaffRole
from gymnasia.gyms.selectors import business_today
from gymnasia.gyms.services import staff_role_grant
from gymnasia.memberships.models import Membership, MembershipFreeze
from gymnasia.memberships.services import membership_create
from gymnasia.nutrition.services import food_upsert

DEMO_SLUG = "gymnasia-demo"
DEMO_NAME = "Gymnasia Demo"
DEMO_TIME_ZONE = "Europe/Madrid"
#: How members reach the demo gym (an owner's setting: set when it is created).
DEMO_CONTACT = "Recepción: 910 000 000 · hola@gimnasio-demo.example (L–V 7:00–22:00)"
OWNER_USERNAME = "demo-owner"
STAFF_USERNAME = "demo-staff"
SCHEDULE_DAYS = 14
MEMBERSHIP_DAYS_AHEAD = 120
MEMBERSHIP_DAYS_ON_CREATE = 365

# name, aliases (the Spanish and English words members search by), kcal,
# carbohydrates, protein, fat — per 100 g.
FOODS: list[tuple[str, str, str, str, str, str]] = [
    (
        "Arroz blanco (cocido)",
        "arroz, arroz blanco, rice, white rice",
        "130",
        "28.0",
        "2.7",
        "0.3",
    ),
    (
        "Arroz integral (cocido)",
        "arroz, arroz integral, rice, brown rice",
        "112",
        "23.5",
        "2.6",
        "0.9",
    ),
    (
        "Pasta (cocida)",
        "macarrones, espaguetis, spaghetti",
        "158",
        "31.0",
        "5.8",
        "0.9",
    ),
    (
        "Pan blanco",
        "pan, barra de pan, bread, white bread",
        "265",
        "49.0",
        "9.0",
        "3.2",
    ),
    ("Pan integral", "pan, bread, wholemeal bread", "247", "41.0", "13.0", "3.4"),
    ("Copos de avena", "avena, porridge, oats", "389", "66.0", "17.0", "7.0"),
    ("Patata cocida", "patata, papa, potato", "87", "20.0", "1.9", "0.1"),
    ("Boniato asado", "batata, boniato, sweet potato", "90", "21.0", "2.0", "0.2"),
    ("Quinoa (cocida)", "quinua", "120", "21.0", "4.4", "1.9"),
    ("Lentejas (cocidas)", "lentejas, lentils", "116", "20.0", "9.0", "0.4"),
    ("Garbanzos (cocidos)", "garbanzos, chickpeas", "164", "27.0", "8.9", "2.6"),
    (
        "Alubias blancas (cocidas)",
        "judías blancas, alubias",
        "139",
        "25.0",
        "9.7",
        "0.5",
    ),
    (
        "Pechuga de pollo a la plancha",
        "pollo, pechuga, chicken",
        "165",
        "0.0",
        "31.0",
        "3.6",
    ),
    ("Pechuga de pavo", "pavo, turkey", "135", "0.0", "30.0", "1.0"),
    (
        "Ternera magra a la plancha",
        "ternera, filete, beef",
        "170",
        "0.0",
        "28.0",
        "6.0",
    ),
    ("Salmón a la plancha", "salmón, salmon", "208", "0.0", "20.0", "13.0"),
    ("Atún al natural", "atún, atún en lata, tuna", "116", "0.0", "26.0", "1.0"),
    ("Merluza", "pescado blanco, hake, fish", "86", "0.0", "18.0", "1.5"),
    ("Huevo entero", "huevo, egg", "143", "0.7", "12.6", "9.5"),
    ("Clara de huevo", "claras, egg white", "52", "0.7", "11.0", "0.2"),
    ("Leche semidesnatada", "leche, milk", "46", "4.8", "3.3", "1.6"),
    ("Yogur natural", "yogur, yogurt", "61", "4.7", "3.5", "3.3"),
    ("Yogur griego natural", "yogur griego, greek yogurt", "122", "4.0", "6.0", "9.0"),
    (
        "Queso fresco de Burgos",
        "queso fresco, queso, cheese",
        "174",
        "3.0",
        "12.0",
        "13.0",
    ),
    ("Requesón", "queso", "98", "3.4", "11.0", "4.3"),
    ("Plátano", "banana", "89", "22.8", "1.1", "0.3"),
    ("Manzana", "apple", "52", "13.8", "0.3", "0.2"),
    ("Naranja", "orange", "47", "11.8", "0.9", "0.1"),
    ("Fresas", "fresa, strawberries", "32", "7.7", "0.7", "0.3"),
    ("Uvas", "uva, grapes", "69", "18.0", "0.7", "0.2"),
    ("Kiwi", "", "61", "14.7", "1.1", "0.5"),
    ("Aguacate", "palta, avocado", "160", "8.5", "2.0", "14.7"),
    ("Brócoli", "brécol, broccoli", "34", "6.6", "2.8", "0.4"),
    ("Espinacas", "spinach", "23", "3.6", "2.9", "0.4"),
    ("Tomate", "tomato", "18", "3.9", "0.9", "0.2"),
    ("Lechuga", "ensalada, lettuce, salad", "15", "2.9", "1.4", "0.2"),
    ("Zanahoria", "carrot", "41", "9.6", "0.9", "0.2"),
    ("Calabacín", "courgette, zucchini", "17", "3.1", "1.2", "0.3"),
    ("Almendras", "frutos secos, almonds, nuts", "579", "21.6", "21.2", "49.9"),
    ("Nueces", "frutos secos, walnuts, nuts", "654", "13.7", "15.2", "65.2"),
    ("Cacahuetes", "maní, peanuts", "567", "16.0", "25.8", "49.2"),
    (
        "Aceite de oliva virgen extra",
        "aceite, AOVE, olive oil",
        "884",
        "0.0",
        "0.0",
        "100.0",
    ),
    ("Chocolate negro 70 %", "chocolate, dark chocolate", "598", "45.9", "7.8", "42.6"),
    ("Hummus", "humus", "166", "14.3", "7.9", "9.6"),
    ("Tortilla de patatas", "tortilla española", "155", "11.0", "6.0", "10.0"),
    ("Jamón serrano", "jamón, ham", "241", "0.3", "31.0", "13.0"),
    (
        "Proteína de suero en polvo",
        "whey, batido de proteínas",
        "400",
        "8.0",
        "78.0",
        "6.0",
    ),
    ("Gazpacho", "", "40", "3.5", "0.8", "2.5"),
    ("Miel", "honey", "304", "82.4", "0.3", "0.0"),
    ("Tofu", "", "76", "1.9", "8.0", "4.8"),
]

CLASS_TYPES: dict[str, str] = {
    "Spinning": "Ciclo indoor por intervalos, 45 minutos.",
    "Yoga": "Vinyasa suave para todos los niveles.",
    "Pilates": "Suelo, core y movilidad.",
    "Body Pump": "Fuerza con barra y discos al ritmo de la música.",
    "HIIT": "Intervalos de alta intensidad, 30 minutos.",
    "Zumba": "Baile aeróbico.",
}

# weekday (0 = Monday), local start time, minutes, class, room, capacity, instructor
WEEKLY_SCHEDULE: list[tuple[tuple[int, ...], str, int, str, str, int, str]] = [
    ((0, 1, 2, 3, 4), "07:30", 45, "Spinning", "Sala ciclo", 20, "Marta Gil"),
    ((0, 2, 4), "09:30", 60, "Yoga", "Sala 2", 16, "Irene Soler"),
    ((1, 3), "13:30", 30, "HIIT", "Sala 1", 18, "Dani Ortega"),
    ((0, 1, 2, 3), "18:00", 55, "Body Pump", "Sala 1", 24, "Dani Ortega"),
    ((0, 1, 2, 3, 4), "19:00", 45, "Spinning", "Sala ciclo", 20, "Javier Ruiz"),
    ((1, 3), "20:00", 50, "Pilates", "Sala 2", 14, "Irene Soler"),
    ((5,), "10:00", 50, "Zumba", "Sala 1", 30, "Carla Vidal"),
    ((5,), "11:00", 60, "Yoga", "Sala 2", 16, "Irene Soler"),
]

# external id, name, email, language, plan
MEMBERS: list[tuple[str, str, str, str, str]] = [
    ("socio-1001", "Lucía Romero", "lucia.romero@example.com", "es", "Cuota mensual"),
    ("socio-1002", "Pablo Navarro", "pablo.navarro@example.com", "es", "Cuota anual"),
    ("socio-1003", "Emma Clarke", "emma.clarke@example.com", "en", "Cuota mensual"),
]


def demo_password(role: str) -> str:
    """The demo account's password: stable for this installation, secret outside it."""
    digest = hmac.new(
        settings.SECRET_KEY.encode(),
        f"gymnasia-demo-password:{role}".encode(),
        hashlib.sha256,
    ).hexdigest()
    return f"demo-{digest[:16]}"


@dataclass
class DemoSeed:
    business: Business
    owner: tuple[str, str]
    staff: tuple[str, str]
    members: list[Member] = field(default_factory=list)


def demo_email(username: str) -> str:
    """The demo owner's and staff member's address (a domain kept for examples:
    with ``EMAIL_HOST`` set, a real server would refuse to deliver it)."""
    return f"{username}@example.com"


def _demo_user(username: str, role: str, business: Business) -> tuple[str, str]:
    user_model = get_user_model()
    password = demo_password(role)
    user, created = user_model.objects.get_or_create(
        username=username,
        defaults={"is_staff": True, "is_active": True, "email": demo_email(username)},
    )
    if not user.email:  # made before the demo's staff had addresses
        user.email = demo_email(username)
        user.save(update_fields=["email"])
    # The login printed must work: a demo account deactivated or changed since
    # is made one again.
    if (
        created
        or not user.check_password(password)
        or not user.is_staff
        or not user.is_active
    ):
        user.is_staff = user.is_active = True
        user.set_password(password)
        user.save()
    staff_role_grant(business=business, user=user, role=role)
    return username, password


def _ensure_membership(
    business: Business, member: Member, plan: str, today: datetime.date
) -> None:
    must_run_until = today + datetime.timedelta(days=MEMBERSHIP_DAYS_AHEAD)
    membership = (
        Membership.objects.filter(business=business, member=member)
        .order_by("-ends_on", "-pk")
        .first()
    )
    if membership is None:
        membership_create(
            business=business,
            member=member,
            plan=plan,
            starts_on=today - datetime.timedelta(days=30),
            ends_on=today + datetime.timedelta(days=MEMBERSHIP_DAYS_ON_CREATE),
        )
        return
    MembershipFreeze.objects.filter(membership__member=member).delete()
    changed = []
    if membership.status != Membership.Status.ACTIVE:
        membership.status = Membership.Status.ACTIVE
        changed.append("status")
    if membership.ends_on < must_run_until:
        membership.ends_on = today + datetime.timedelta(days=MEMBERSHIP_DAYS_ON_CREATE)
        changed.append("ends_on")
    if membership.starts_on > today:
        membership.starts_on = today
        changed.append("starts_on")
    if changed:
        membership.save(update_fields=changed)


@transaction.atomic
def demo_gym_seed() -> DemoSeed:
    """Create or complete the demo gym, its catalog, schedule, members and accounts."""
    business, _ = Business.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": DEMO_NAME,
            "time_zone": DEMO_TIME_ZONE,
            "language": "es",
            "contact_details": DEMO_CONTACT,
        },
    )
    today = business_today(business=business)
    for name, aliases, kcal, carbs, protein, fat in FOODS:
        food_upsert(
            business=business,
            name=name,
            aliases=aliases,
            kcal_per_100g=Decimal(kcal),
            carbohydrates_per_100g=Decimal(carbs),
            protein_per_100g=Decimal(protein),
            fat_per_100g=Decimal(fat),
        )
    types = {
        name: ClassType.objects.get_or_create(
            business=business, name=name, defaults={"description": description}
        )[0]
        for name, description in CLASS_TYPES.items()
    }
    for offset in range(SCHEDULE_DAYS):
        day = today + datetime.timedelta(days=offset)
        for (
            weekdays,
            start,
            minutes,
            class_name,
            room,
            capacity,
            instructor,
        ) in WEEKLY_SCHEDULE:
            if day.weekday() not in weekdays:
                continue
            hour, minute = (int(part) for part in start.split(":"))
            starts_at = datetime.datetime.combine(
                day, datetime.time(hour, minute), tzinfo=business.zone
            )
            class_session_schedule(
                business=business,
                class_type=types[class_name],
                starts_at=starts_at,
                ends_at=starts_at + datetime.timedelta(minutes=minutes),
                capacity=capacity,
                instructor=instructor,
                room=room,
            )
    seed = DemoSeed(
        business=business,
        owner=_demo_user(OWNER_USERNAME, StaffRole.Role.OWNER, business),
        staff=_demo_user(STAFF_USERNAME, StaffRole.Role.STAFF, business),
    )
    for external_id, name, email, language, plan in MEMBERS:
        member, _ = Member.objects.get_or_create(
            business=business,
            external_id=external_id,
            defaults={"name": name, "email": email, "language": language},
        )
        _ensure_membership(business, member, plan, today)
        seed.members.append(member)
    return seed
