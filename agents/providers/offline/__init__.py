"""The offline demo model (``OfflineProvider``): deterministic, no network."""

from agents.providers.offline.model import OfflineProvider

__all__ = ["OfflineProvider"]
