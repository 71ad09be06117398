from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApprovalsConfig(AppConfig):
    """Pending actions, the staff inbox and the tasks that run approved actions."""

    name = "approvals"
    verbose_name = _("Approvals")
