from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MembershipsConfig(AppConfig):
    name = "gymnasia.memberships"
    label = "memberships"
    verbose_name = _("Memberships")
