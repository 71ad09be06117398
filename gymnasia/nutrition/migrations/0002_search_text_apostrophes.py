"""Foods' search text with typed apostrophes: ``fold`` now reads "’" as "'", so a
food stored with the typographic one is still found by what members type."""

from django.db import migrations
from django.db.models import Q

APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def refold(apps, schema_editor):
    Food = apps.get_model("nutrition", "Food")
    typed = Q()
    for apostrophe in ("\u2019", "\u2018", "\u02bc"):
        typed |= Q(search_text__contains=apostrophe)
    for food in Food.objects.filter(typed).only("search_text"):
        food.search_text = food.search_text.translate(APOSTROPHES)
        food.save(update_fields=["search_text"])


class Migration(migrations.Migration):
    dependencies = [("nutrition", "0001_initial")]

    operations = [migrations.RunPython(refold, migrations.RunPython.noop)]
