from __future__ import annotations

import secrets

import pytest

from tests.fakes.mindbody_server import mindbody_fake, mindbody_settings  # noqa: F401
from tests.fakes.stripe_server import running_fake_stripe
from tests.tools.world import World, build_world


@pytest.fixture
def world(db) -> World:
    return build_world()


@pytest.fixture
def stripe():
    """A fake of the gym's Stripe account on loopback, with a fresh secret key."""
    key = "sk_test_" + secrets.token_hex(16)
    with running_fake_stripe(key) as fake:
        yield fake
