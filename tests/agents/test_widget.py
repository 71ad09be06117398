"""The widget's pages and the API's browser-facing headers: who may frame the
widget, who may read the API from another site, rate limits, the demo gym site."""

from __future__ import annotations

import json
import time
from io import StringIO

import jwt
import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.core.management import CommandError, call_command
from django.test import AsyncClient

from agents import api
from agents.models import Agent, Conversation, Message

pytestmark = pytest.mark.django_db

GYM = "https://gym.example"
GYM_WWW = "https://www.gym.example"
ELSEWHERE = "https://elsewhere.example"


@pytest.fixture
def agent():
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    agent.allowed_origins = f"{GYM}\n{GYM_WWW}"
    agent.save(update_fields=["allowed_origins"])
    return agent


@pytest.fixture(autouse=True)
def demo_site(settings):
    settings.DEMO_SITE = True


@pytest.fixture
def other_agent(agent):
    """A second agent of the same gym, embedded on another site."""
    from agents.services import agent_create

    return agent_create(business=agent.business, name="Otro", allowed_origins=ELSEWHERE)


def start(client, agent, origin=None, address="10.0.0.1"):
    headers = {"Origin": origin} if origin else {}
    return client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key},
        content_type="application/json",
        headers=headers,
        REMOTE_ADDR=address,
    )


def send(client, started, text="hola", address="10.0.0.1"):
    data = started.json()
    return client.post(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"text": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {data['token']}"},
        REMOTE_ADDR=address,
    )


def frame_ancestors(response) -> str:
    directives = [
        d.strip() for d in response["Content-Security-Policy"].split(";") if d.strip()
    ]
    found = [d for d in directives if d.startswith("frame-ancestors")]
    assert len(found) == 1, directives
    return found[0]


# Framing


def test_widget_page_may_be_framed_by_the_agents_origins_only(client, agent):
    """The widget page names exactly the allowed origins in frame-ancestors and
    sends no X-Frame-Options that would deny them."""
    response = client.get(f"/widget/{agent.public_key}/")

    assert response.status_code == 200
    assert frame_ancestors(response) == f"frame-ancestors {GYM} {GYM_WWW}"
    assert "X-Frame-Options" not in response
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_widget_page_without_allowed_origins_is_framed_by_nobody(client, agent):
    agent.allowed_origins = ""
    agent.save(update_fields=["allowed_origins"])

    response = client.get(f"/widget/{agent.public_key}/")

    assert frame_ancestors(response) == "frame-ancestors 'none'"


def test_a_malformed_origin_never_reaches_the_policy(client, agent):
    """An origin stored without the admin's check cannot add a directive."""
    agent.allowed_origins = f"{GYM}\nhttps://evil.example; script-src *\njavascript:1"
    agent.save(update_fields=["allowed_origins"])

    response = client.get(f"/widget/{agent.public_key}/")

    assert frame_ancestors(response) == f"frame-ancestors {GYM}"
    assert "script-src *" not in response["Content-Security-Policy"]


def test_widget_page_of_an_unknown_agent_is_not_found(client, agent):
    assert client.get("/widget/ag_nobody/").status_code == 404


@pytest.mark.parametrize(
    "path", ["/", "/admin/login/", "/inbox/", "/widget.js", "/healthz"]
)
def test_every_other_page_denies_framing(client, agent, path):
    response = client.get(path)

    assert response["X-Frame-Options"] == "DENY"


def test_the_api_denies_framing(client, agent):
    assert start(client, agent)["X-Frame-Options"] == "DENY"


def test_widget_page_is_in_the_agents_language_and_says_when_offline(client, agent):
    page = client.get(f"/widget/{agent.public_key}/").content.decode()

    assert '<html lang="es">' in page
    assert f'<h1 id="panel-title">{agent.name}</h1>' in page
    assert "Abrir el chat" in page
    assert 'id="offline-note"' in page


def test_widget_page_has_its_words_in_each_language(client, agent):
    """The panel starts in the agent's language and holds the words of each
    language, for a member who speaks another (numbers written in each)."""
    page = client.get(f"/widget/{agent.public_key}/").content.decode()
    config = json.loads(
        page.split('id="widget-config" type="application/json">')[1].split("</script>")[
            0
        ]
    )

    assert config["language"] == "es"
    assert set(config["strings"]) == {"es", "en"}
    assert config["strings"]["es"]["send"] == "Enviar"
    assert config["strings"]["en"]["send"] == "Send"
    assert "4\xa0000" in config["strings"]["es"]["too_long"]
    assert "4,000" in config["strings"]["en"]["too_long"]


def test_widget_page_does_not_show_the_offline_note_with_a_provider_key(
    client, agent, settings
):
    settings.OPENAI_API_KEY = "sk-test"
    agent.provider = Agent.Provider.OPENAI
    agent.save(update_fields=["provider"])

    page = client.get(f"/widget/{agent.public_key}/").content.decode()

    assert 'id="offline-note"' not in page
    assert "sk-test" not in page


def test_widget_page_holds_no_secret(client, agent):
    page = client.get(f"/widget/{agent.public_key}/").content.decode()

    assert agent.identity_secret not in page
    assert agent.identity_secret_encrypted not in page


def test_the_loader_is_javascript(client, agent):
    response = client.get("/widget.js")

    assert response["Content-Type"].startswith("text/javascript")
    assert b"data-agent" in response.content


# CORS


def test_a_preflight_from_an_allowed_origin_is_answered(client, agent):
    response = client.options(
        "/api/v1/conversations",
        headers={
            "Origin": GYM,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == GYM
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert "Authorization" in response["Access-Control-Allow-Headers"]
    assert "origin" in response["Vary"].lower()  # field names ignore case


def test_a_client_on_the_gyms_site_may_read_how_long_to_wait(client, agent):
    """A 429's Retry-After is exposed to the agent's origins (DESIGN: always
    with Retry-After, which a cross-site client could not read otherwise)."""
    response = start(client, agent, origin=GYM)

    assert response["Access-Control-Allow-Origin"] == GYM
    assert response["Access-Control-Expose-Headers"] == "Retry-After"


def test_a_preflight_from_an_unlisted_origin_gets_no_cors(client, agent):
    response = client.options(
        "/api/v1/conversations",
        headers={"Origin": "https://unlisted.example"},
    )

    assert "Access-Control-Allow-Origin" not in response


def test_starting_from_an_allowed_origin_may_be_read(client, agent):
    response = start(client, agent, origin=GYM_WWW)

    assert response.status_code == 201
    assert response["Access-Control-Allow-Origin"] == GYM_WWW


def test_an_origin_of_another_agent_may_not_read_this_agents_answers(
    client, agent, other_agent
):
    response = start(client, agent, origin=ELSEWHERE)

    assert "Access-Control-Allow-Origin" not in response
    assert start(client, other_agent, origin=ELSEWHERE)[
        "Access-Control-Allow-Origin"
    ] == (ELSEWHERE)


def test_messages_answer_cors_for_the_conversations_agent_only(client, agent):
    started = start(client, agent).json()
    url = f"/api/v1/conversations/{started['conversation']}/messages"
    bearer = {"Authorization": f"Bearer {started['token']}"}

    allowed = client.get(url, headers={**bearer, "Origin": GYM})
    unlisted = client.get(url, headers={**bearer, "Origin": "https://unlisted.example"})
    preflight = client.options(url, headers={"Origin": GYM})
    refused = client.get(url, headers={"Authorization": "Bearer nope", "Origin": GYM})

    assert allowed["Access-Control-Allow-Origin"] == GYM
    assert "Access-Control-Allow-Origin" not in unlisted
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == GYM
    assert refused.status_code == 401  # a client on the gym's site can read why
    assert refused["Access-Control-Allow-Origin"] == GYM


def test_the_sites_own_pages_need_no_cors(client, agent):
    response = start(client, agent, origin="http://testserver")

    assert response.status_code == 201
    assert "Access-Control-Allow-Origin" not in response


def test_only_the_api_answers_cors(client, agent):
    """An agent's origin may read the API, not the site's other pages."""
    response = client.get("/widget.js", headers={"Origin": GYM})

    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response


def test_under_asgi_a_preflight_asks_the_conversations_agent(client, agent):
    """Under ASGI (the middleware in async mode, as uvicorn runs it) the origins
    of the conversation's agent are read from the database as under WSGI: the
    agent's origin may send, another agent's may not."""
    started = start(client, agent).json()
    url = f"/api/v1/conversations/{started['conversation']}/messages"
    asked = {"Access-Control-Request-Method": "POST"}
    preflight = async_to_sync(AsyncClient().options)

    allowed = preflight(url, headers={**asked, "Origin": GYM})
    elsewhere = preflight(url, headers={**asked, "Origin": ELSEWHERE})

    assert allowed.status_code == 204
    assert allowed["Access-Control-Allow-Origin"] == GYM
    assert "Authorization" in allowed["Access-Control-Allow-Headers"]
    assert elsewhere.status_code == 204
    assert "Access-Control-Allow-Origin" not in elsewhere


# Rate limits


def test_sending_is_limited_per_conversation(client, agent, row_counts):
    started = start(client, agent)
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        for _ in range(api.MESSAGES_PER_MINUTE):
            assert send(client, started).status_code == 200
        before = row_counts()

        refused = send(client, started)

        assert refused.status_code == 429
        assert row_counts() == before


# The demo gym's site


def test_demo_site_embeds_the_widget_from_the_apps_other_origin(client, agent):
    response = client.get("/demo/", HTTP_HOST="localhost:8000")

    page = response.content.decode()
    assert response.status_code == 200
    assert 'src="http://127.0.0.1:8000/widget.js"' in page
    assert f'data-agent="{agent.public_key}"' in page
    assert "data-identity-token" not in page


def test_demo_site_is_served_as_localhost(client, agent):
    response = client.get("/demo/?member=socio-1001", HTTP_HOST="127.0.0.1:8000")

    assert response.status_code == 302
    assert response["Location"] == "http://localhost:8000/demo/?member=socio-1001"


def test_demo_site_signs_in_a_demo_member_as_a_gyms_back_end_would(client, agent):
    page = client.get(
        "/demo/?member=socio-1002", HTTP_HOST="localhost:8000"
    ).content.decode()

    token = page.split('data-identity-token="')[1].split('"')[0]
    claims = jwt.decode(
        token, agent.identity_secret, algorithms=["HS256"], audience=agent.public_key
    )
    assert claims["sub"] == "socio-1002"
    assert time.time() < claims["exp"] <= time.time() + 3600


def test_the_api_names_the_conversations_language(client, agent):
    """Content-Language is the member's language when the gym has it (Emma's is
    English at the Spanish demo gym), else the agent's."""
    from agents.demo import demo_identity_token
    from gymnasia.gyms.models import Member

    emma = Member.objects.get(external_id="socio-1003")
    token = demo_identity_token(agent=agent, member=emma)
    hers = client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, "identity_token": token},
        content_type="application/json",
    )
    visitors = start(client, agent)

    assert (hers.status_code, hers["Content-Language"]) == (201, "en")
    assert (visitors.status_code, visitors["Content-Language"]) == (201, "es")
    sent = send(client, hers, "How is my membership?")
    assert (sent.status_code, sent["Content-Language"]) == (200, "en")
    data = hers.json()
    read = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        headers={"Authorization": f"Bearer {data['token']}"},
    )
    assert (read.status_code, read["Content-Language"]) == (200, "en")
    refused = client.get(f"/api/v1/conversations/{data['conversation']}/messages")
    # An error's detail is English, whatever the conversation's language.
    assert (refused.status_code, refused["Content-Language"]) == (401, "en")


def test_demo_sites_expired_sign_in_is_refused_by_the_api(client, agent, row_counts):
    page = client.get(
        "/demo/?member=socio-1001&expired=1", HTTP_HOST="localhost:8000"
    ).content.decode()
    token = page.split('data-identity-token="')[1].split('"')[0]
    before = row_counts()

    response = client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, "identity_token": token},
        content_type="application/json",
    )

    assert response.status_code == 401
    assert row_counts() == before


def test_demo_site_is_not_served_in_production(client, agent, settings):
    settings.DEMO_SITE = False

    assert client.get("/demo/", HTTP_HOST="localhost").status_code == 404


def test_seed_demo_allows_the_demo_sites_origin_once(db):
    call_command(
        "seed_demo", "--site-origin", "http://localhost:8001", stdout=StringIO()
    )
    call_command(
        "seed_demo", "--site-origin", "http://localhost:8001", stdout=StringIO()
    )
    call_command(
        "seed_demo", "--site-origin", "http://localhost:8002", stdout=StringIO()
    )

    assert Agent.objects.get().origins() == [
        "http://localhost:8001",
        "http://localhost:8002",
    ]


def test_seed_demo_refuses_a_site_origin_that_is_not_one(db, row_counts):
    before = row_counts()

    with pytest.raises(CommandError, match="not an origin"):
        call_command(
            "seed_demo", "--site-origin", "localhost:8000/demo", stdout=StringIO()
        )

    assert row_counts() == before


def test_no_conversation_is_started_by_loading_pages(client, agent):
    client.get(f"/widget/{agent.public_key}/")
    client.get("/demo/?member=socio-1001", HTTP_HOST="localhost:8000")

    assert Conversation.objects.count() == 0
    assert Message.objects.count() == 0


def test_the_operator_reads_and_replaces_an_agents_identity_secret(agent, client):
    """The secret comes from the server's terminal; a new one refuses tokens signed
    with the old."""
    out = StringIO()
    call_command("agent_identity_secret", agent.public_key, stdout=out)
    old = out.getvalue().strip()
    assert old == agent.identity_secret

    out = StringIO()
    call_command("agent_identity_secret", agent.public_key, "--new", stdout=out)
    new = out.getvalue().strip()

    assert new != old and len(new) >= 43
    claims = {"sub": "socio-1001", "aud": agent.public_key, "exp": time.time() + 600}
    for secret, status in ((old, 401), (new, 201)):
        response = client.post(
            "/api/v1/conversations",
            {
                "agent": agent.public_key,
                "identity_token": jwt.encode(claims, secret, algorithm="HS256"),
            },
            content_type="application/json",
        )
        assert response.status_code == status


def test_an_unknown_agents_identity_secret_is_an_error(agent):
    with pytest.raises(CommandError, match="No agent"):
        call_command("agent_identity_secret", "ag_nobody", stdout=StringIO())


def _start_in(client, agent, accept_language: str, **body):
    return client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, **body},
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=accept_language,
    )


def test_a_visitor_on_an_english_page_reads_english(client, agent):
    """The widget sends its page's language: a visitor of the Spanish demo gym
    on an English page is answered in English (R10)."""
    started = _start_in(client, agent, "en-GB,en;q=0.9")

    assert started["Content-Language"] == "en"
    reply = send(client, started, "How many carbs has the rice?").json()
    assert "carbohydrates" in reply["messages"][-1]["text"]


def test_a_members_own_language_wins_over_the_page(client, agent):
    """Known, the member's language is the conversation's, whatever the page."""
    from agents.demo import demo_identity_token
    from gymnasia.gyms.models import Member

    emma = Member.objects.get(external_id="socio-1003")  # English
    token = demo_identity_token(agent=agent, member=emma)

    started = _start_in(client, agent, "es-ES", identity_token=token)

    assert started["Content-Language"] == "en"


def test_a_page_language_gymnasia_does_not_speak_falls_to_the_agents(client, agent):
    for header in ("fr-FR, de;q=0.8", "*", "not a language!"):
        assert _start_in(client, agent, header)["Content-Language"] == "es"
