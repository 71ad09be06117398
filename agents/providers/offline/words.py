"""What the offline demo model understands of what members write: the words of
meals, weekdays and classes, the day they name, and which of a list they mean.
The hours they name are in ``hours``, the periods in ``periods``."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from gymnasia.text import fold

MEALS = {
    "desayuno": "breakfast",
    "breakfast": "breakfast",
    "comida": "lunch",
    "almuerzo": "lunch",
    "lunch": "lunch",
    "cena": "dinner",
    "dinner": "dinner",
    "merienda": "snack",
    "snack": "snack",
}
#: Verbs that say which meal was eaten ("he desayunado", "cené"), folded.
MEAL_VERBS = {
    "desayune": "breakfast",
    "desayunado": "breakfast",
    "almorce": "lunch",
    "almorzado": "lunch",
    "cene": "dinner",
    "cenado": "dinner",
    "merende": "snack",
    "merendado": "snack",
}
#: Each meal as the demo model says it: Spanish with its article, and English.
MEAL_WORDS = {
    "breakfast": ("el desayuno", "breakfast"),
    "lunch": ("la comida", "lunch"),
    "dinner": ("la cena", "dinner"),
    "snack": ("la merienda", "snack"),
}
#: A membership's state as the demo model says it, in Spanish and English.
MEMBERSHIP_STATES = {
    "active": ("activa", "active"),
    "frozen": ("congelada", "frozen"),
    "cancelled": ("cancelada", "cancelled"),
}
#: Words that say a food was eaten ("he comido", "I ate").
ATE = re.compile(r"\b(comi|he comido|ate|i had|i ve had)\b")
#: A message about what is past ("comí", "cené", "did I eat"): a weekday it
#: names is the last one, not the next.
PAST_TENSE = re.compile(
    rf"{ATE.pattern}|\b(?:{'|'.join(MEAL_VERBS)}|did i|i did|tuve|hice)\b"
)
#: Words of "he comido", "I've had" that are no food's name.
EATEN_WORDS = {"he", "comido", "had", "ve", "eaten"}

WEEKDAYS = {
    "lunes": 0,
    "martes": 1,
    "miercoles": 2,
    "jueves": 3,
    "viernes": 4,
    "sabado": 5,
    "domingo": 6,
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
#: A change declined ("no quiero reservar nada", "no me canceles la de yoga",
#: "don't book anything"): "no" or "nunca" before a verb of change, whatever
#: pronouns come between ("no me la canceles").
DECLINES = re.compile(
    r"\b(no|nunca)\s+((me|te|la|lo|las|los|le|les|nos|se)\s+)*"
    r"(quiero|reserv|apunt|anot|congel|devuelv|cancel|anul|anad|borr|quit|elimin"
    r"|pong|pon|met)"
    r"|\b(don't|dont|do not|never)\b"
)
#: A question about how, or whether, something can be done ("¿puedo cancelar
#: una reserva?"), which asks for no change by itself.
ASKS_HOW = (
    "como ",
    "puedo",
    "se puede",
    "es posible",
    "how ",
    "can i",
    "could i",
    "is it possible",
)
#: Word starts naming a place in a list; -1 is the last.
ORDINALS = {
    "primer": 0,
    "first": 0,
    "segund": 1,
    "second": 1,
    "tercer": 2,
    "third": 2,
    "cuart": 3,
    "fourth": 3,
    "quint": 4,
    "fifth": 4,
    "ultim": -1,
    "last": -1,
}
CLASS_TYPES = ("spinning", "yoga", "pilates", "body pump", "hiit", "zumba")
#: Other names members give them ("a spin class", "bodypump").
CLASS_ALIASES = {"spin": "spinning", "bodypump": "body pump"}
STOPWORDS = set(
    "cuantos cuantas cuanto cuanta carbohidratos hidratos carbono calorias proteinas "
    "proteina grasas grasa tiene tienen el la los las de del un una unos unas que y en "
    "por cada 100 g gramos hay dime dame quiero saber sabes favor porfa "
    "how many much carbs carbohydrates calories protein fat does do has have the a an "
    "of in per is are there what about which tell me give i want know and please "
    "s "
    # A yes before the request ("sí, otra vez", "yes, again").
    "si vale ok yes "
    # A request's polite start ("¿puedes quitar …?", "can you remove …?").
    "puedes podrias can could would will you "
    # Words that point back ("¿cuántas calorías es eso?"), never a food's name.
    "eso esto ello son es that this it those these "
    # Words that compare foods ("¿qué tiene más proteínas…?", "what's healthier").
    "mas menos mejor peor more less better worse healthier sano sana saludable "
    "compara comparame compare cual which o or vs versus "
    # Measures other than grams ("200 ml de leche", "a glass of milk"): asked
    # for in grams, and never part of the food's name.
    "ml mililitros cl l litro litros liter liters litre litres vaso vasos glass "
    "glasses taza tazas cup cups cucharada cucharadas tablespoon tablespoons "
    "cucharadita cucharaditas teaspoon teaspoons rebanada rebanadas slice slices "
    "pieza piezas piece pieces unidad unidades punado handful".split()
)

#: Words that say when, and small words around a meal ("for", "en"): no part of a
#: food's name.
DAY_WORDS = {"hoy", "today", "manana", "tomorrow", "ayer", "yesterday", *WEEKDAYS}
DAY_WORDS |= {"semana", "week", "esta", "pasada", "last"}  # "esta semana", "last week"
LINKING_WORDS = {"al", "a", "to", "my", "mi", "for", "para", "on", "en", "at"}


#: A date written as YYYY-MM-DD.
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
#: Word starts that take something away, a booking or a diary entry.
TAKE_AWAY = ("quita", "borra", "elimina", "remove", "delete")
#: Words that take a booking away ("bórrame de la clase de spinning").
CANCEL_WORDS = (
    "cancela",
    "anul",
    "desapunta",
    "darme de baja",
    "dame de baja",
    "cancel",
    *TAKE_AWAY,
)

#: An amount of food: "150 g", "1,5 kg", "100 gramos"; the sign is kept, so that
#: "-50 g" is refused as such, never logged as 50 g.
GRAMS = re.compile(
    r"(?<![\w.,])(-?\d+(?:[.,]\d+)?)\s*(kg|kilos?|gramos?|grams?|gr|g)\b"
)


def grams_of(found: re.Match[str]) -> float:
    """The grams an amount found by ``GRAMS`` says."""
    value = float(found.group(1).replace(",", "."))
    return value * (1000 if found.group(2).startswith("k") else 1)


def has(text: str, *words: str) -> bool:
    """Whether a (folded) text has a word that starts with one of ``words``."""
    return any(re.search(rf"\b{re.escape(word)}", text) for word in words)


#: Words that mean all of them: her bookings ("cancela las dos"), a day's
#: diary ("borra todo lo de hoy").
EVERY = (
    "todo",
    "todas",
    "las dos",
    "los dos",
    "ambas",
    "ambos",
    "everything",
    "every",
    "all my",
    "all of",
    "all the",
    "both",
)
#: How a participle or a past form ends ("cancelada", "borrado", "cancelled").
DONE_FORM = re.compile(r"(ad[oa]s?|id[oa]s?|ed)$")


#: How a question whether something is so opens ("did I log…?", "is it
#: booked?", "¿he anotado el arroz?", "¿está reservada?"), never a request.
ASKS_WHETHER = re.compile(
    r"^\W*(did|do|does|have|has|was|were|is|are|am)\b"
    r"|^\W*(he|has|ha|han|habeis|esta|estan|estoy)\b.*\?\W*$"
)


#: Words of a change only thought about ("¿cancelo la de pilates o mejor no?",
#: "quizás cancele", "maybe I'll cancel"), never asked for.
HESITATES = re.compile(
    r"\b(quizas?|tal vez|a lo mejor|o mejor no|o no|maybe|perhaps|or not"
    r"|should i|i might|i may)\b"
    # "¿Cancelo…?": shall I (never "cancele", also the polite imperative).
    r"|\b(cancelo|anulo|borro|quito|congelo)\b"
)


def hesitates(text: str) -> bool:
    """Whether a (folded) text only thinks about a change."""
    return HESITATES.search(text) is not None


def asks_what(said: str) -> bool:
    """Whether a (folded) message asks what ("¿qué he cenado?"), also after "y"
    and a word ("¿y ayer qué cené?", "and yesterday, what did I have?")."""
    return re.match(r"\W*(?:(?:y|and)\W+)?(?:\w+\W+)?(?:que|what)\b", said) is not None


def asks_how_much(said: str) -> bool:
    """Whether a (folded) message asks how much ("¿cuántas calorías he comido?",
    "how many calories have I had?")."""
    return re.match(r"\W*(how (many|much)|cuant[oa]s?)\b", said) is not None


def asks_whether(text: str) -> bool:
    """Whether a (folded) text asks whether something is so or was done."""
    return ASKS_WHETHER.search(text) is not None


def asks_for(text: str, *words: str) -> bool:
    """Whether a (folded) text asks for a change: it has a word that starts with
    one of ``words`` other than in a participle or past form, and it does not ask
    whether the change was made ("¿está cancelada mi clase?", "was the rice
    removed?", "did I book yoga?") or only think about it ("quizás cancele")."""
    return not (asks_whether(text) or hesitates(text)) and any(
        not DONE_FORM.search(found.group(0))
        for word in words
        for found in re.finditer(rf"\b{re.escape(word)}\w*", text)
    )


#: The morning said in Spanish ("el jueves por la mañana", "a las 7 de la
#: mañana", "esta mañana"): no "mañana" of tomorrow.
THE_MORNING = re.compile(r"\b(?:(?:por|de|en|a) la|esta) manana\b")
#: A part of today ("esta tarde", "this evening", "tonight").
THIS_PART = re.compile(
    r"\besta (?:manana|tarde|noche)\b|\bthis (?:morning|afternoon|evening)\b"
    r"|\btonight\b"
)


def day_named(said: str, today: datetime.date) -> datetime.date | None:
    """The day a (folded) message names: an ISO date, today (also "esta tarde"),
    tomorrow, yesterday, a weekday (the next one to come, or today; the last one
    in a message about the past)."""
    iso = ISO_DATE.search(said)
    if iso:
        try:
            return datetime.date.fromisoformat(iso.group(0))
        except ValueError:
            return None
    if has(THE_MORNING.sub(" ", said), "manana", "tomorrow"):
        return today + datetime.timedelta(days=1)
    if has(said, "hoy", "today") or THIS_PART.search(said):
        return today
    if has(said, "ayer", "yesterday"):
        return today - datetime.timedelta(days=1)
    for name, weekday in WEEKDAYS.items():
        if has(said, name):
            ahead = (weekday - today.weekday()) % 7
            if ahead and PAST_TENSE.search(said):
                # "¿Qué comí el lunes?", "el lunes cené…": the Monday gone by.
                return today - datetime.timedelta(days=7 - ahead)
            return today + datetime.timedelta(days=ahead)
    return None


#: The days of a week asked about by name: the weekend, and next week.
WEEKEND = re.compile(r"\b(?:fin de semana|finde|weekend)\b")
NEXT_WEEK = re.compile(
    r"\b(?:(?:la )?semana que viene|(?:la )?proxima semana|next week)\b"
)


def week_days_named(
    said: str, today: datetime.date
) -> tuple[datetime.date, datetime.date] | None:
    """The days a (folded) message names by the week: the weekend (the coming
    Saturday and Sunday, or what is left of it), next week (Monday to Sunday)."""
    if WEEKEND.search(said):
        saturday = today + datetime.timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:
            saturday = today - datetime.timedelta(days=1)
        return max(saturday, today), saturday + datetime.timedelta(days=1)
    if NEXT_WEEK.search(said):
        monday = today + datetime.timedelta(days=7 - today.weekday())
        return monday, monday + datetime.timedelta(days=6)
    return None


def impossible_date(said: str) -> str | None:
    """A date written as YYYY-MM-DD that no calendar has ("2026-02-30"), if any:
    never to be read as "no day said", which means today."""
    for written in ISO_DATE.findall(said):
        try:
            datetime.date.fromisoformat(written)
        except ValueError:
            return str(written)
    return None


#: A short yes to a question the assistant asked ("sí", "vale", "yes, please").
AGREES = re.compile(
    r"\W*(?:si|vale|ok|okay|de acuerdo|perfecto|correcto|eso es|claro|yes|yeah|yep"
    r"|sure|right|that's right|go ahead)"
    r"(?:\W+(?:por favor|please|gracias|thanks|pidelo|hazlo|do it|asi))*\W*"
)


def agrees(said: str) -> bool:
    """Whether a (folded) message is only a yes."""
    return AGREES.fullmatch(said) is not None


def declines(said: str) -> bool:
    """Whether a (folded) message declines a change rather than asking for one."""
    return DECLINES.search(said) is not None


def asks_how(said: str) -> bool:
    """Whether a (folded) message asks how, or whether, something can be done."""
    return has(said, *ASKS_HOW)


def kind_named(said: str) -> str | None:
    """The kind of class a (folded) message names ("¿hay spinning mañana?", "any
    spin classes?")."""
    named = next((kind for kind in CLASS_TYPES if kind in said), None)
    return named or next(
        (
            kind
            for alias, kind in CLASS_ALIASES.items()
            if re.search(rf"\b{alias}\b", said)
        ),
        None,
    )


def kinds_named(said: str) -> list[str]:
    """Every kind of class a (folded) message names, in the order said."""
    found = {
        kind: match.start()
        for kind in CLASS_TYPES
        if (match := re.search(rf"\b{kind}\b", said))
    }
    for alias, kind in CLASS_ALIASES.items():
        match = re.search(rf"\b{alias}\b", said)
        if match and kind not in found:
            found[kind] = match.start()
    return sorted(found, key=found.__getitem__)


def weekdays_named(said: str) -> list[str]:
    """Every weekday a (folded) message names, as said, in the order said."""
    found = [
        (match.start(), name)
        for name in WEEKDAYS
        for match in re.finditer(rf"\b{name}\b", said)
    ]
    return [name for _, name in sorted(found)]


def ordinal_named(said: str) -> int | None:
    """The place in a list a (folded) message names ("la primera", "the last")."""
    return next((i for word, i in ORDINALS.items() if has(said, word)), None)


#: The nutrients a diary adds up: (words that ask for one, Spanish, English, key).
NUTRIENTS = (
    (
        ("carbohidrat", "hidratos", "carb"),
        "hidratos de carbono",
        "carbohydrates",
        "carbohydrates_g",
    ),
    (("proteina", "protein"), "proteínas", "protein", "protein_g"),
    (("grasa", "fat"), "grasas", "fat", "fat_g"),
)


def asks_nutrients(said: str) -> bool:
    """Whether a (folded) message asks about nutrients or calories."""
    return has(
        said, "calori", "nutrient", *(w for words, *_ in NUTRIENTS for w in words)
    )


def food_words(said: str) -> list[str]:
    """The words of a (folded) message that may name a food, in order: not the
    question's own words, a meal, a day, or the small words around them."""
    return [
        w
        for w in re.findall(r"[a-z]+", said)
        if w not in STOPWORDS
        and w not in MEALS
        and w not in DAY_WORDS
        and w not in LINKING_WORDS
    ]


def as_written(words: str, message: str) -> str:
    """Words of a food (folded, as ``food_words`` gives them) as her ``message``
    wrote them ("té" for "te"), when it has them in that order; else as they are."""
    written = iter(re.findall(r"[^\W\d_]+", message))
    found = []
    for wanted in words.split():
        word = next((w for w in written if fold(w) == wanted), None)
        if word is None:
            return words
        found.append(word)
    return " ".join(found)


def meal_named(said: str) -> str | None:
    """The meal a (folded) message names ("la cena", "my breakfast"), if any."""
    return next((MEALS[word] for word in MEALS if has(said, word)), None)


def meal_eaten(said: str) -> str | None:
    """The meal a (folded) message says was eaten by its verb ("he cenado"), if
    any."""
    return next(
        (meal for verb, meal in MEAL_VERBS.items() if re.search(rf"\b{verb}\b", said)),
        None,
    )


def day_of(arguments: Mapping[str, Any] | None) -> datetime.date | None:
    """The day of a call's arguments, if they have a valid one."""
    try:
        return datetime.date.fromisoformat((arguments or {})["date"])
    except (KeyError, TypeError, ValueError):
        return None
