from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApprovalsConfig(AppConfig):
    """The staff inbox, staff's decisions on requests, and the tasks that run
    approved ones."""

    name = "approvals"
    verbose_name = _("Approvals")
