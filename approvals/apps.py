from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApprovalsConfig(AppConfig):
    """Pending actions, the staff inbox and the tasks that run approved actions."""

    name = "approvals"
    verbose_name = _("Approvals")

    def ready(self) -> None:
        from approvals.services import pending_action_create
        from tools.gating import register_approval_queue

        register_approval_queue(pending_action_create)
